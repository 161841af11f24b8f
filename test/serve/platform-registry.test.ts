/**
 * Adding a chat platform is one folder, one descriptor and one list line: a tiny seventh
 * platform (test/serve/tiny-chat/, registered with `registerChatPlatform` in place of its line
 * in PLATFORMS) is parsed and resolved by the config file, refused with its own expected lines,
 * masked by `config show`, checked by `config check`, accepted in `gateway.admins`,
 * `gateway.owner` and `homeChannels`, and started by `startGateway` through its `create()`,
 * with no edit anywhere else. A secret key left out of a descriptor's `secrets` does not compile.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CHAT_ACCESS_EXPECTED,
  PLATFORMS,
  chatAccessShape,
  chatPlatformNames,
  defineChatPlatform,
  registerChatPlatform,
  resolveChatAccess,
  secret,
} from "../../src/adapters/internal.js";
import { EchoAgent } from "../../src/agents/index.js";
import { SECRET_CONFIG_KEYS, chatAdapterProblems, configFileDocument, parseServeConfig, startGateway } from "../../src/serve/index.js";
import { configFileProblems, secretConfigKeys } from "../../src/serve/internal.js";
import { waitFor } from "../support/wait-for.js";
import { runInProcess } from "../cli/cli-run.js";
import { tinyChatPlatform } from "./tiny-chat/tiny-chat-platform.js";

const TOKEN = "tc-0123456789abcdef";

let unregister: () => void = () => {};
beforeAll(() => {
  unregister = registerChatPlatform(tinyChatPlatform);
});
afterAll(() => unregister());

/** The tiny platform's section of a resolved config (it is in no static type: it was registered at run time). */
function tinySection(config: { adapters: object }): Record<string, unknown> | null | undefined {
  return (config.adapters as Record<string, Record<string, unknown> | null>)["tinychat"];
}

describe("a seventh platform through the registry", () => {
  it("is listed after the six, and its secret key joins the secret keys", () => {
    expect(chatPlatformNames()).toEqual(["telegram", "discord", "slack", "whatsapp", "matrix", "signal", "tinychat"]);
    expect(PLATFORMS.map((p) => p.name)).not.toContain("tinychat");
    expect(secretConfigKeys().has("adapters.tinychat.token")).toBe(true);
    // The listed platforms' keys, as before.
    expect(SECRET_CONFIG_KEYS.has("adapters.telegram.token")).toBe(true);
    expect(() => registerChatPlatform(tinyChatPlatform)).toThrow(/"tinychat" is known already/u);
  });

  it("config parsing: the section resolves (the token from the environment too), and its problems are reported", () => {
    const config = parseServeConfig(
      { adapters: { tinychat: { token: TOKEN, access: "open" } }, gateway: { admins: { tinychat: ["u1"] }, owner: { tinychat: ["u1"] } } },
      { env: {} },
    );
    expect(tinySection(config)).toMatchObject({ token: TOKEN, path: "/tinychat", access: "open", allowedUsers: [] });
    expect(config.gateway.admins).toEqual({ tinychat: ["u1"] });
    expect(config.gateway.owner).toEqual({ tinychat: ["u1"] });
    expect(chatAdapterProblems(config.adapters)).toEqual([]);

    const fromEnv = parseServeConfig({ adapters: { tinychat: {} } }, { env: { TINYCHAT_TOKEN: ` ${TOKEN} ` } });
    expect(tinySection(fromEnv)).toMatchObject({ token: TOKEN });
    const missing = parseServeConfig({ adapters: { tinychat: {} } }, { env: {} });
    expect(chatAdapterProblems(missing.adapters)).toEqual([
      "adapters.tinychat.token: missing: set it in the config file or in the TINYCHAT_TOKEN environment variable",
    ]);
    expect(tinySection(parseServeConfig({ adapters: { tinychat: { enabled: false } } }, { env: {} }))).toBeNull();
    expect(tinySection(parseServeConfig({}, { env: {} }))).toBeNull();
    // Written back as the file a user writes, and read again.
    expect(tinySection(parseServeConfig(configFileDocument(config), { env: {} }))).toEqual(tinySection(config));
    // A home channel on it.
    expect(parseServeConfig({ homeChannels: { tinychat: { chatId: "c1" } } }).homeChannels["tinychat"]).toMatchObject({ chatId: "c1" });
  });

  it("config check lines: its expected lines name bad values, its keys are the allowed ones, and a bad secret is shown by length only", () => {
    const bad = "tc-not a token";
    expect(configFileProblems({ adapters: { tinychat: { token: bad, path: "no-slash", tokn: "x" } } }, { env: {} })).toEqual([
      `adapters.tinychat.token: must be a TinyChat token tc-… (or set TINYCHAT_TOKEN) (got a string of ${bad.length} characters)`,
      'adapters.tinychat.path: must be the route TinyChat posts messages to, such as /tinychat (the default) (got "no-slash")',
      'adapters.tinychat: unknown key(s) "tokn"; allowed: token, path, enabled, access, admins, allowedUsers, allowedChats, groupReply, answerBots',
    ]);
    expect(configFileProblems({ adapters: { tinychat: {} } }, { env: {} })).toEqual([
      "adapters.tinychat.token: missing: set it in the config file or in the TINYCHAT_TOKEN environment variable",
    ]);
    expect(configFileProblems({ gateway: { admins: { tinychat: [""] } } }, { env: {} })).toEqual([
      'gateway.admins.tinychat.0: must be a list of tinychat user ids who are admins (as adapters.tinychat.admins) (got "")',
    ]);
  });

  it("config show masks its secret and config check accepts the file (threadline config, in process)", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-registry-"));
    writeFileSync(join(home, "config.yaml"), `adapters:\n  tinychat:\n    token: ${TOKEN}\n`);
    const env = { ...process.env, THREADLINE_HOME: home, THREADLINE_CONFIG: "", NO_COLOR: "1", TINYCHAT_TOKEN: "" };
    const show = await runInProcess(["config", "show", "--json"], env);
    expect(show.code).toBe(0);
    expect(show.stdout).not.toContain(TOKEN);
    expect(JSON.parse(show.stdout).config.adapters.tinychat).toMatchObject({ token: `(set, ${TOKEN.length} chars)`, path: "/tinychat" });
    const text = await runInProcess(["config", "show"], env);
    expect(text.stdout).not.toContain(TOKEN);
    expect((await runInProcess(["config", "check"], env)).code).toBe(0);

    writeFileSync(join(home, "config.yaml"), "adapters:\n  tinychat:\n    path: /tiny\n");
    const check = await runInProcess(["config", "check"], env);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain("adapters.tinychat.token: missing: set it in the config file or in the TINYCHAT_TOKEN environment variable");
  });

  it("start-up goes through its create(): the route is mounted, messages reach the agent, replies reach the platform", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-registry-"));
    const config = parseServeConfig({ gateway: { port: 0 }, adapters: { tinychat: { token: TOKEN, access: "open" } } }, { env: {} });
    const gateway = await startGateway({
      config,
      database: join(home, "threadline.db"),
      logger: pino({ level: "silent" }),
      env: {},
      agentFactory: () => new EchoAgent(),
    });
    try {
      const post = (token: string) =>
        fetch(`${gateway.url}/tinychat`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-tinychat-token": token },
          body: JSON.stringify({ id: "m1", chatId: "c1", userId: "u1", text: "hello tiny" }),
        });
      expect((await post("tc-wrong-token-000")).status).toBe(401);
      const accepted = await post(TOKEN);
      expect(accepted.status).toBe(200);
      expect(await accepted.json()).toEqual({ status: "accepted" });
      const outbox = await waitFor(
        async () => {
          const sent = (await (await fetch(`${gateway.url}/tinychat/outbox`)).json()) as Array<{ chatId: string; text: string }>;
          return sent.length > 0 ? sent : undefined;
        },
        { what: "the reply on the tiny platform" },
      );
      expect(outbox).toEqual([{ chatId: "c1", text: "Echo: hello tiny", kind: "reply" }]);
    } finally {
      await gateway.stop();
    }
  });

  it("a configured section is refused again once the platform is gone", () => {
    const again = registerChatPlatform(
      defineChatPlatform({
        name: "tinychat2",
        schema: z.strictObject({ ...chatAccessShape }),
        expected: { ...CHAT_ACCESS_EXPECTED },
        secrets: {},
        resolve: (section) => resolveChatAccess(section),
        problems: () => [],
        create: async () => {
          throw new Error("never started here");
        },
      }),
    );
    expect(configFileProblems({ adapters: { tinychat2: {} } })).toEqual([]);
    again();
    expect(configFileProblems({ adapters: { tinychat2: {} } })).toEqual([expect.stringMatching(/^adapters: unknown key\(s\) "tinychat2"; allowed: /u)]);
  });
});

describe("a descriptor's secret keys are checked by the compiler", () => {
  it("a key declared secret() but left out of `secrets` is a type error (tsconfig.test.json compiles this file)", () => {
    const schema = z.strictObject({ ...chatAccessShape, apiKey: secret(z.string()).optional(), name: z.string().optional() });
    const definition = {
      name: "leaky",
      schema,
      expected: {},
      resolve: (section: z.infer<typeof schema>) => ({ apiKey: section.apiKey ?? null, ...resolveChatAccess(section) }),
      problems: () => [],
      create: async () => {
        throw new Error("never started");
      },
    };
    // @ts-expect-error: Property 'apiKey' is missing (the secret is not listed, so config show would print it).
    const leaky = defineChatPlatform({ ...definition, secrets: {} });
    // @ts-expect-error: 'name' is not a secret key (only keys declared with secret() may be listed).
    defineChatPlatform({ ...definition, secrets: { apiKey: true, name: true } });
    const listed = defineChatPlatform({ ...definition, secrets: { apiKey: true } });
    expect(listed.secrets).toEqual(["adapters.leaky.apiKey"]);
    expect(leaky.secrets).toEqual([]);
  });
});
