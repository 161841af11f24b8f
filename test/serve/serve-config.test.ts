import { describe, expect, it } from "vitest";
import { chatAdapterProblems, configFileDocument, parseServeConfig } from "../../src/serve/index.js";
import { homesWithOwner, ownerIdentities } from "../../src/serve/owner-identities.js";

describe("serve config", () => {
  it("defaults: 127.0.0.1:8787, api-server on without tokens, webhook off, leases auto, titles on", () => {
    const config = parseServeConfig({});
    expect(config.gateway).toMatchObject({ host: "127.0.0.1", port: 8787, drainTimeoutSeconds: 30, leases: "auto", leaseTtlSeconds: 30 });
    // No fixed message window: the model's context window decides (issue 28).
    expect(config.gateway.historyLimit).toBeUndefined();
    expect(config.adapters.apiServer).toEqual({ enabled: true, tokens: [], replyTimeoutSeconds: 600 });
    expect(config.adapters.webhook.enabled).toBe(false);
    expect(config.titles.enabled).toBe(true);
    expect(config.provider).toBeNull();
    expect(config.lifecycle.reset.default.mode).toBe("none");
  });

  it("provider.contextWindow and provider.models entries with their own window; old string entries still work (issue 28)", () => {
    const config = parseServeConfig({
      gateway: { historyLimit: 200 },
      provider: { model: "llama3.1", contextWindow: 8192, models: { "gpt-4o": "qwen2.5", big: { model: "llama3.3", contextWindow: 32_768 } } },
    });
    expect(config.gateway.historyLimit).toBe(200);
    expect(config.provider).toMatchObject({ contextWindow: 8192, models: { "gpt-4o": "qwen2.5", big: { model: "llama3.3", contextWindow: 32_768 } } });
    expect(() => parseServeConfig({ provider: { contextWindow: 512 } })).toThrow(
      /provider\.contextWindow: must be a whole number of tokens ≥ 1024: the model's context window, e\.g\. 128000 .*\(got 512\)/u,
    );
    expect(() => parseServeConfig({ provider: { contextWindow: "8k" } })).toThrow(/provider\.contextWindow: must be a whole number of tokens/u);
    expect(() => parseServeConfig({ provider: { models: { big: { model: "llama3.3", contextWindow: 10 } } } })).toThrow(
      /provider\.models\.big\.contextWindow: must be a whole number of tokens ≥ 1024: this model's context window/u,
    );
    expect(() => parseServeConfig({ provider: { models: { big: { contextWindow: 8192 } } } })).toThrow(
      /provider\.models\.big: must be a provider model name .*or \{ model: <name>, contextWindow: <tokens> \}/u,
    );
    expect(() => parseServeConfig({ provider: { models: { big: { model: "x", window: 8192 } } } })).toThrow(
      /provider\.models\.big: unknown key\(s\) "window"; allowed: model, contextWindow/u,
    );
    // hermes' model.context_length points here.
    expect(() => parseServeConfig({ model: { context_length: 8192 } })).toThrow(/provider\.contextWindow/u);
  });

  it("gateway.beforeResetTimeoutSeconds: 60 by default, 0 turns the before-reset turn off, bad values name the key", () => {
    expect(parseServeConfig({}).gateway.beforeResetTimeoutSeconds).toBe(60);
    expect(parseServeConfig({ gateway: { beforeResetTimeoutSeconds: 0 } }).gateway.beforeResetTimeoutSeconds).toBe(0);
    expect(parseServeConfig({ gateway: { beforeResetTimeoutSeconds: 15 } }).gateway.beforeResetTimeoutSeconds).toBe(15);
    expect(() => parseServeConfig({ gateway: { beforeResetTimeoutSeconds: -1 } })).toThrow(
      /gateway\.beforeResetTimeoutSeconds: must be a number of seconds from 0 \(no before-reset turn\) to 3600 \(got -1\)/,
    );
  });

  it("gateway.owner: the operator's ids per platform; the terminal defaults to the OS user; bad values name the key (issue 27)", () => {
    expect(parseServeConfig({}).gateway.owner).toEqual({});
    expect(ownerIdentities(parseServeConfig({}))).toBeUndefined();
    const config = parseServeConfig({ gateway: { owner: { telegram: ["123", "123"], "api-server": ["me"] } } });
    expect(config.gateway.owner).toEqual({ telegram: ["123"], "api-server": ["me"] });
    expect(ownerIdentities(config, () => "alice")).toEqual({ telegram: ["123"], "api-server": ["me"], cli: ["alice"] });
    expect(ownerIdentities(parseServeConfig({ gateway: { owner: { cli: ["ops"] } } }), () => "alice")).toEqual({ cli: ["ops"] });
    // The file a user writes says it back (and leaves it out when unset).
    expect(parseServeConfig(configFileDocument(config)).gateway.owner).toEqual(config.gateway.owner);
    expect(configFileDocument(parseServeConfig({})).gateway).not.toHaveProperty("owner");
    // A home channel without a userId continues the owner's lane.
    expect(homesWithOwner({ telegram: { chatId: "-100", userId: null }, slack: { chatId: "C1", userId: "U9" } }, { telegram: ["123"], slack: ["U1"] })).toEqual(
      {
        telegram: { chatId: "-100", userId: "123" },
        slack: { chatId: "C1", userId: "U9" },
      },
    );
    expect(() => parseServeConfig({ gateway: { owner: { telgram: ["1"] } } })).toThrow(
      /gateway\.owner\.telgram: unknown platform "telgram"\. Did you mean "telegram"\?/,
    );
    expect(() => parseServeConfig({ gateway: { owner: { telegram: [] } } })).toThrow(
      /gateway\.owner\.telegram: must be a list of the operator's user ids on telegram/,
    );
    expect(() => parseServeConfig({ gateway: { owner: { telegram: "123" } } })).toThrow(
      /gateway\.owner\.telegram: must be a list of the operator's user ids on telegram .*\(got "123"\)/,
    );
    expect(() => parseServeConfig({ gateway: { owner: ["123"] } })).toThrow(/gateway\.owner: must be the operator's ids per platform/);
  });

  it("every error names the key and the expected value", () => {
    expect(() => parseServeConfig({ gateway: { port: 70000 } })).toThrow(/gateway\.port: must be a port number from 0 to 65535 \(got 70000\)/);
    expect(() => parseServeConfig({ gateway: { prot: 1 } })).toThrow(/gateway: unknown key\(s\) "prot"; allowed: host, port/);
    expect(() => parseServeConfig({ gatway: {} })).toThrow(
      /config: unknown key\(s\) "gatway"; allowed: database, storage, gateway, provider, titles, tools, adapters, homeChannels/,
    );
    expect(() => parseServeConfig({ provider: { baseUrl: "not a url" } })).toThrow(/provider\.baseUrl: must be an http\(s\) URL/);
    expect(() => parseServeConfig({ adapters: { apiServer: { tokens: ["short"] } } })).toThrow(/adapters\.apiServer\.tokens/);
    expect(() => parseServeConfig({ adapters: { webhook: { enabled: true } } })).toThrow(/adapters\.webhook\.secret: required/);
    expect(() => parseServeConfig({ reset: { mode: "weekly" } })).toThrow(/reset\.mode: must be one of none, idle, daily, both/);
    expect(() => parseServeConfig({ sessions: { maxQueueDepth: -1 } })).toThrow(/sessions\.maxQueueDepth/);
  });

  it("provider.tools (auto|off|[names]) and provider.models (requested name → provider model) are checked (issue 12, points 17 and 20)", () => {
    expect(parseServeConfig({ provider: { tools: "off", models: { "gpt-4o": "llama3.1" } } }).provider).toEqual({
      tools: "off",
      models: { "gpt-4o": "llama3.1" },
    });
    expect(parseServeConfig({ provider: { tools: ["session_search"] } }).provider).toEqual({ tools: ["session_search"] });
    expect(() => parseServeConfig({ provider: { tools: "sometimes" } })).toThrow(
      /provider\.tools: must be auto \(default\), off, or a list of tool names from: session_search, memory \(got "sometimes"\)/,
    );
    expect(() => parseServeConfig({ provider: { tools: ["web_search"] } })).toThrow(
      /provider\.tools: must be auto \(default\), off, or a list of tool names from: session_search, memory \(got \["web_search"\]\)/,
    );
    expect(() => parseServeConfig({ provider: { models: { "gpt-4o": "" } } })).toThrow(
      /provider\.models\.gpt-4o: must be a provider model name \(the model answering requests for this name\), or \{ model: <name>, contextWindow: <tokens> \} \(got ""\)/,
    );
    expect(() => parseServeConfig({ provider: { modles: {} } })).toThrow(
      /provider: unknown key\(s\) "modles"; allowed: baseUrl, apiKey, model, timeoutMs, tools, models/,
    );
  });

  it("api: off by default; keys, tenants and loopback settings; errors name the key path", () => {
    expect(parseServeConfig({}).api).toEqual({ enabled: false, host: "127.0.0.1", port: 8788, prefix: "", keys: [], allowUnauthenticatedLoopback: false });
    const config = parseServeConfig({
      api: {
        enabled: true,
        port: 9000,
        prefix: "/api",
        keys: [
          { key: "admin-key-0123456789", name: "ops" },
          { key: "alice-key-0123456789", userId: "alice" },
        ],
      },
    });
    expect(config.api).toEqual({
      enabled: true,
      host: "127.0.0.1",
      port: 9000,
      prefix: "/api",
      keys: [
        { key: "admin-key-0123456789", userId: null, name: "ops" },
        { key: "alice-key-0123456789", userId: "alice", name: null },
      ],
      allowUnauthenticatedLoopback: false,
    });
    expect(() => parseServeConfig({ api: { keys: [{ key: "short" }] } })).toThrow(
      /api\.keys\.0\.key: must be an API key of at least 16 characters \(got a string of 5 characters\)/,
    );
    expect(() => parseServeConfig({ api: { keys: [{ key: "admin-key-0123456789", tenant: "x" }] } })).toThrow(
      /api\.keys\.0: unknown key\(s\) "tenant"; allowed: key, userId, name/,
    );
    expect(() => parseServeConfig({ api: { keys: [{ key: "admin-key-0123456789", userId: "" }] } })).toThrow(
      /api\.keys\.0\.userId: must be a user \(tenant\) id/,
    );
    expect(() => parseServeConfig({ api: { keys: "admin-key-0123456789" } })).toThrow(/api\.keys: must be a list of \{ key, userId\?, name\? \}/);
    expect(() => parseServeConfig({ api: { keys: [{ key: "admin-key-0123456789" }, { key: "admin-key-0123456789" }] } })).toThrow(
      /api\.keys\.1\.key: the same key is listed twice/,
    );
    expect(() => parseServeConfig({ api: { enabeld: true } })).toThrow(
      /api: unknown key\(s\) "enabeld"; allowed: enabled, host, port, prefix, keys, allowUnauthenticatedLoopback/,
    );
    expect(() => parseServeConfig({ api: { port: -1 } })).toThrow(/api\.port: must be a port number/);
    expect(() => parseServeConfig({ api: { prefix: "api/" } })).toThrow(/api\.prefix: must be a path prefix/);
    expect(() => parseServeConfig({ api: { allowUnauthenticatedLoopback: "yes" } })).toThrow(/api\.allowUnauthenticatedLoopback: must be true or false/);
  });

  it("adapters.telegram: absent → null; token from the file or TELEGRAM_BOT_TOKEN; access lists as strings; defaults", () => {
    expect(parseServeConfig({}, { env: { TELEGRAM_BOT_TOKEN: "1:env" } }).adapters.telegram).toBeNull();
    expect(parseServeConfig({ adapters: { telegram: { enabled: false } } }, { env: { TELEGRAM_BOT_TOKEN: "1:env" } }).adapters.telegram).toBeNull();
    const fromEnv = parseServeConfig(
      { adapters: { telegram: { allowedUsers: [42, "43"], allowedChats: [-100123] } } },
      { env: { TELEGRAM_BOT_TOKEN: " 123:from-env " } },
    );
    expect(fromEnv.adapters.telegram).toEqual({
      token: "123:from-env",
      mode: "polling",
      webhookUrl: null,
      webhookPath: null,
      secret: null,
      apiRoot: null,
      access: "allowlist",
      accessDefaulted: false,
      admins: [],
      allowedUsers: ["42", "43"],
      allowedChats: ["-100123"],
      groupReply: "mention",
      answerBots: false,
      linkPreviews: false,
    });
    expect(chatAdapterProblems(fromEnv.adapters)).toEqual([]);
    const fromFile = parseServeConfig(
      { adapters: { telegram: { token: "456:file_token-x", groupReply: "all", answerBots: true } } },
      { env: { TELEGRAM_BOT_TOKEN: "123:env" } },
    );
    expect(fromFile.adapters.telegram).toMatchObject({ token: "456:file_token-x", groupReply: "all", answerBots: true });
  });

  it("adapters.telegram: what is missing is named; a bad token is never echoed", () => {
    const missing = parseServeConfig({ adapters: { telegram: { mode: "webhook" } } }, { env: {} });
    expect(chatAdapterProblems(missing.adapters)).toEqual([
      expect.stringMatching(/^adapters\.telegram\.token: missing: set it in the config file or in the TELEGRAM_BOT_TOKEN environment variable/),
      expect.stringMatching(/^adapters\.telegram\.webhookUrl: required in webhook mode/),
      expect.stringMatching(/^adapters\.telegram\.secret: required in webhook mode/),
    ]);
    const badEnv = parseServeConfig({ adapters: { telegram: {} } }, { env: { TELEGRAM_BOT_TOKEN: "not a token value" } });
    const problems = chatAdapterProblems(badEnv.adapters).join("; ");
    expect(problems).toMatch(/TELEGRAM_BOT_TOKEN does not look like a bot token/);
    expect(problems).not.toContain("not a token value");
    let message = "";
    try {
      parseServeConfig({ adapters: { telegram: { token: "secret value with spaces" } } }, { env: {} });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/adapters\.telegram\.token: must be a bot token from BotFather .* \(got a string of 24 characters\)/);
    expect(message).not.toContain("secret value with spaces");
    expect(() => parseServeConfig({ adapters: { telegram: { mode: "carrier-pigeon" } } })).toThrow(
      /adapters\.telegram\.mode: must be polling \(default\) or webhook/,
    );
    expect(() => parseServeConfig({ adapters: { telegram: { groupReply: "sometimes" } } })).toThrow(/adapters\.telegram\.groupReply: must be mention/);
    expect(() => parseServeConfig({ adapters: { telegram: { tokn: "x" } } })).toThrow(/adapters\.telegram: unknown key\(s\) "tokn"; allowed: .*token/);
  });

  it("adapters.slack: absent → null; secrets from the file or SLACK_BOT_TOKEN/SLACK_SIGNING_SECRET/SLACK_APP_TOKEN; mode follows the app token; defaults", () => {
    expect(parseServeConfig({}, { env: { SLACK_BOT_TOKEN: "xoxb-1" } }).adapters.slack).toBeNull();
    expect(parseServeConfig({ adapters: { slack: { enabled: false } } }).adapters.slack).toBeNull();
    const fromEnv = parseServeConfig(
      { adapters: { slack: { allowedChats: ["C1"] } } },
      { env: { SLACK_BOT_TOKEN: " xoxb-env-1 ", SLACK_SIGNING_SECRET: "abcdef0123456789" } },
    );
    expect(fromEnv.adapters.slack).toEqual({
      botToken: "xoxb-env-1",
      signingSecret: "abcdef0123456789",
      appToken: null,
      mode: "events",
      eventsPath: "/slack/events",
      apiUrl: null,
      assistantStatus: false,
      access: "pairing",
      accessDefaulted: true,
      admins: [],
      allowedUsers: [],
      allowedChats: ["C1"],
      groupReply: "mention",
      answerBots: false,
      linkPreviews: false,
    });
    expect(chatAdapterProblems(fromEnv.adapters)).toEqual([]);
    const socket = parseServeConfig({ adapters: { slack: { botToken: "xoxb-file-2", appToken: "xapp-1-A1-2" } } }, { env: {} });
    expect(socket.adapters.slack).toMatchObject({ botToken: "xoxb-file-2", appToken: "xapp-1-A1-2", mode: "socket" });
    expect(chatAdapterProblems(socket.adapters)).toEqual([]);
  });

  it("adapters.slack: what is missing is named per mode; bad secrets are never echoed", () => {
    const missing = parseServeConfig({ adapters: { slack: {} } }, { env: {} });
    expect(chatAdapterProblems(missing.adapters)).toEqual([
      expect.stringMatching(/^adapters\.slack\.botToken: missing: set it in the config file or in the SLACK_BOT_TOKEN environment variable/),
      expect.stringMatching(/^adapters\.slack\.signingSecret: missing: the Events API needs it .*SLACK_SIGNING_SECRET/),
    ]);
    const socket = parseServeConfig({ adapters: { slack: { mode: "socket" } } }, { env: { SLACK_BOT_TOKEN: "xoxb-3" } });
    expect(chatAdapterProblems(socket.adapters)).toEqual([expect.stringMatching(/^adapters\.slack\.appToken: missing: Socket Mode needs an app-level token/)]);
    const badEnv = parseServeConfig({ adapters: { slack: {} } }, { env: { SLACK_BOT_TOKEN: "secret bot value", SLACK_SIGNING_SECRET: "no way!" } });
    const problems = chatAdapterProblems(badEnv.adapters).join("; ");
    expect(problems).toMatch(/SLACK_BOT_TOKEN does not look like a Slack bot token/);
    expect(problems).toMatch(/SLACK_SIGNING_SECRET does not look like a signing secret/);
    expect(problems).not.toContain("secret bot value");
    expect(problems).not.toContain("no way!");
    let message = "";
    try {
      parseServeConfig({ adapters: { slack: { botToken: "a secret bot token", signingSecret: "short" } } }, { env: {} });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/adapters\.slack\.botToken: must be the bot token xoxb-… .*\(got a string of 18 characters\)/);
    expect(message).toMatch(/adapters\.slack\.signingSecret: must be the app's signing secret .*\(got a string of 5 characters\)/);
    expect(message).not.toContain("a secret bot token");
    expect(() => parseServeConfig({ adapters: { slack: { mode: "pigeon" } } })).toThrow(/adapters\.slack\.mode: must be events/);
    expect(() => parseServeConfig({ adapters: { slack: { apiUrl: "ftp://x" } } })).toThrow(/adapters\.slack\.apiUrl: must be the Web API base URL/);
    expect(() => parseServeConfig({ adapters: { slack: { bot_token: "x" } } })).toThrow(/adapters\.slack: unknown key\(s\) "bot_token"; allowed: .*botToken/);
  });
});
