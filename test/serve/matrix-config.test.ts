/**
 * `adapters.matrix` in the serve config: defaults, the token from MATRIX_ACCESS_TOKEN, what is
 * missing named by `chatAdapterProblems` (and by `threadline config check`), bad values
 * refused with the expected form, and the token never echoed (not by `config show` either).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chatAdapterProblems, parseServeConfig } from "../../src/serve/index.js";
import { BIN } from "./gateway-process.js";

const TOKEN = "syt_dGhyZWFkbGluZQ_fakeMatrixAccessToken0123_4F2d9a";
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

describe("adapters.matrix", () => {
  it("absent → null; the token from the file or MATRIX_ACCESS_TOKEN; autoJoin defaults to true; access lists as strings", () => {
    expect(parseServeConfig({}, { env: { MATRIX_ACCESS_TOKEN: TOKEN } }).adapters.matrix).toBeNull();
    expect(parseServeConfig({ adapters: { matrix: { enabled: false, homeserverUrl: "https://matrix.example.org" } } }, { env: {} }).adapters.matrix).toBeNull();
    const fromEnv = parseServeConfig(
      { adapters: { matrix: { homeserverUrl: "https://matrix.example.org/", allowedUsers: ["@alice:example.org"], allowedChats: ["!room:example.org"] } } },
      { env: { MATRIX_ACCESS_TOKEN: ` ${TOKEN} ` } },
    );
    expect(fromEnv.adapters.matrix).toEqual({
      homeserverUrl: "https://matrix.example.org",
      accessToken: TOKEN,
      userId: null,
      autoJoin: true,
      access: "allowlist",
      accessDefaulted: false,
      admins: [],
      allowedUsers: ["@alice:example.org"],
      allowedChats: ["!room:example.org"],
      groupReply: "mention",
      answerBots: false,
    });
    expect(chatAdapterProblems(fromEnv.adapters)).toEqual([]);
    const fromFile = parseServeConfig(
      {
        adapters: { matrix: { homeserverUrl: "http://127.0.0.1:8008", accessToken: TOKEN, userId: "@bot:localhost:8448", autoJoin: false, groupReply: "all" } },
      },
      { env: { MATRIX_ACCESS_TOKEN: "another-token-value" } },
    );
    expect(fromFile.adapters.matrix).toMatchObject({ accessToken: TOKEN, userId: "@bot:localhost:8448", autoJoin: false, groupReply: "all" });
  });

  it("what is missing is named with what to do; a bad token is never echoed; bad values are refused with the expected form", () => {
    const missing = parseServeConfig({ adapters: { matrix: {} } }, { env: {} });
    expect(chatAdapterProblems(missing.adapters)).toEqual([
      "adapters.matrix.homeserverUrl: missing: set the http(s) base URL of the bot account's homeserver, such as https://matrix.example.org (the part before /_matrix)",
      "adapters.matrix.accessToken: missing: set it in the config file or in the MATRIX_ACCESS_TOKEN environment variable (log in as the bot account and copy its access token, see docs/platforms.md)",
    ]);
    for (const problem of chatAdapterProblems(missing.adapters)) expect(problem).not.toContain("; ");
    const badEnv = parseServeConfig(
      { adapters: { matrix: { homeserverUrl: "https://matrix.example.org" } } },
      { env: { MATRIX_ACCESS_TOKEN: "not a token value" } },
    );
    const problems = chatAdapterProblems(badEnv.adapters).join("; ");
    expect(problems).toBe("adapters.matrix.accessToken: MATRIX_ACCESS_TOKEN does not look like an access token (8 or more visible characters without spaces)");
    expect(problems).not.toContain("not a token value");
    let message = "";
    try {
      parseServeConfig({ adapters: { matrix: { homeserverUrl: "https://matrix.example.org", accessToken: "secret value with spaces" } } }, { env: {} });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(
      /adapters\.matrix\.accessToken: must be the bot account's access token: 8 or more visible characters without spaces .* \(got a string of 24 characters\)/u,
    );
    expect(message).not.toContain("secret value with spaces");
    expect(() => parseServeConfig({ adapters: { matrix: { homeserverUrl: "matrix.example.org" } } })).toThrow(
      /adapters\.matrix\.homeserverUrl: must be the http\(s\) base URL of the bot account's homeserver/u,
    );
    expect(() => parseServeConfig({ adapters: { matrix: { userId: "threadline" } } })).toThrow(
      /adapters\.matrix\.userId: must be the bot's Matrix user id such as @threadline:example\.org/u,
    );
    expect(() => parseServeConfig({ adapters: { matrix: { autoJoin: "yes" } } })).toThrow(
      /adapters\.matrix\.autoJoin: must be true \(accept room invitations, the default\) or false/u,
    );
    expect(() => parseServeConfig({ adapters: { matrix: { acessToken: "x" } } })).toThrow(
      /adapters\.matrix: unknown key\(s\) "acessToken"; allowed: .*homeserverUrl.*accessToken.*userId.*autoJoin/u,
    );
  });

  it("threadline config check names what is missing; config show never prints the token", async () => {
    const home = mkdtempSync(join(tmpdir(), "tl-matrix-cfg-"));
    homes.push(home);
    writeFileSync(join(home, "config.yaml"), "adapters:\n  matrix:\n    homeserverUrl: https://matrix.example.org\n");
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const childEnv: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home, NO_COLOR: "1", THREADLINE_CONFIG: "", ...env };
        if (env["MATRIX_ACCESS_TOKEN"] === undefined) delete childEnv["MATRIX_ACCESS_TOKEN"];
        execFile(process.execPath, [BIN, ...args], { env: childEnv }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const missing = await run(["config", "check"], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("adapters.matrix.accessToken: missing: set it in the config file or in the MATRIX_ACCESS_TOKEN environment variable");
    expect((await run(["config", "check"], { MATRIX_ACCESS_TOKEN: TOKEN })).code).toBe(0);
    const show = await run(["config", "show", "--json"], { MATRIX_ACCESS_TOKEN: TOKEN });
    expect(JSON.parse(show.stdout).config.adapters.matrix).toMatchObject({
      accessToken: `(set, ${TOKEN.length} chars)`,
      homeserverUrl: "https://matrix.example.org",
      autoJoin: true,
    });
    expect(show.stdout + show.stderr).not.toContain(TOKEN);
  });
});
