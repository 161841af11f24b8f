/**
 * `adapters.discord` in the serve config: defaults, the token from DISCORD_BOT_TOKEN, what is
 * missing named by `chatAdapterProblems`, and a bad token never echoed.
 */
import { describe, expect, it } from "vitest";
import { chatAdapterProblems, parseServeConfig } from "../../src/serve/index.js";

const TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GabcDE.fake-token_value-0123456789";

describe("adapters.discord", () => {
  it("absent → null; token from the file or DISCORD_BOT_TOKEN; apiUrl, gatewayUrl and cdnUrl; access lists as strings", () => {
    expect(parseServeConfig({}, { env: { DISCORD_BOT_TOKEN: TOKEN } }).adapters.discord).toBeNull();
    expect(parseServeConfig({ adapters: { discord: { enabled: false } } }, { env: { DISCORD_BOT_TOKEN: TOKEN } }).adapters.discord).toBeNull();
    const fromEnv = parseServeConfig(
      {
        adapters: {
          discord: {
            apiUrl: "http://127.0.0.1:9/api",
            gatewayUrl: "ws://127.0.0.1:9/gateway",
            cdnUrl: "http://127.0.0.1:9",
            allowedUsers: [42],
            allowedChats: ["1200"],
          },
        },
      },
      { env: { DISCORD_BOT_TOKEN: ` ${TOKEN} ` } },
    );
    expect(fromEnv.adapters.discord).toEqual({
      token: TOKEN,
      apiUrl: "http://127.0.0.1:9/api",
      gatewayUrl: "ws://127.0.0.1:9/gateway",
      cdnUrl: "http://127.0.0.1:9",
      access: "allowlist",
      accessDefaulted: false,
      admins: [],
      allowedUsers: ["42"],
      allowedChats: ["1200"],
      groupReply: "mention",
      answerBots: false,
      linkPreviews: false,
    });
    expect(chatAdapterProblems(fromEnv.adapters)).toEqual([]);
    const fromFile = parseServeConfig({ adapters: { discord: { token: TOKEN, groupReply: "all" } } }, { env: { DISCORD_BOT_TOKEN: "a.b.c" } });
    expect(fromFile.adapters.discord).toMatchObject({ token: TOKEN, apiUrl: null, gatewayUrl: null, cdnUrl: null, groupReply: "all" });
  });

  it("what is missing is named; a bad token is never echoed; bad URLs are refused with the expected form", () => {
    const missing = parseServeConfig({ adapters: { discord: {} } }, { env: {} });
    expect(chatAdapterProblems(missing.adapters)).toEqual([
      expect.stringMatching(/^adapters\.discord\.token: missing: set it in the config file or in the DISCORD_BOT_TOKEN environment variable/),
    ]);
    const badEnv = parseServeConfig({ adapters: { discord: {} } }, { env: { DISCORD_BOT_TOKEN: "not a token value" } });
    const problems = chatAdapterProblems(badEnv.adapters).join("; ");
    expect(problems).toMatch(/DISCORD_BOT_TOKEN does not look like a bot token/);
    expect(problems).not.toContain("not a token value");
    let message = "";
    try {
      parseServeConfig({ adapters: { discord: { token: "secret value with spaces" } } }, { env: {} });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/adapters\.discord\.token: must be the bot token from the Developer Portal .* \(got a string of 24 characters\)/);
    expect(message).not.toContain("secret value with spaces");
    expect(() => parseServeConfig({ adapters: { discord: { gatewayUrl: "http://127.0.0.1/gateway" } } })).toThrow(
      /adapters\.discord\.gatewayUrl: must be a ws:\/\/ or wss:\/\/ gateway URL/,
    );
    expect(() => parseServeConfig({ adapters: { discord: { apiUrl: "discord.com" } } })).toThrow(/adapters\.discord\.apiUrl: must be the REST API base URL/);
    expect(() => parseServeConfig({ adapters: { discord: { cdnUrl: "ftp://cdn.example" } } })).toThrow(/adapters\.discord\.cdnUrl: must be the CDN base URL/);
    expect(() => parseServeConfig({ adapters: { discord: { tokn: "x" } } })).toThrow(
      /adapters\.discord: unknown key\(s\) "tokn"; allowed: .*token.*apiUrl.*gatewayUrl/,
    );
  });
});
