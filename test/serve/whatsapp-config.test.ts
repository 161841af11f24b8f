/**
 * `adapters.whatsapp` in the serve config: defaults, secrets from WHATSAPP_ACCESS_TOKEN /
 * WHATSAPP_APP_SECRET / WHATSAPP_VERIFY_TOKEN, what is missing named by `chatAdapterProblems`,
 * bad secrets never echoed, and `config show` masking them.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatAdapterProblems, configFileDocument, parseServeConfig } from "../../src/serve/index.js";
import { BIN } from "./gateway-process.js";

const TOKEN = "EAAGm0PX4ZCpsBAFakeTokenForConfigTests0123456789";
const SECRET = "0123456789abcdef0123456789abcdef";
const VERIFY = "my-verify-token-42";
const ENV = { WHATSAPP_ACCESS_TOKEN: ` ${TOKEN} `, WHATSAPP_APP_SECRET: SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY };

describe("adapters.whatsapp", () => {
  it("absent → null; secrets from the file or the environment; defaults; a numeric phoneNumberId; access lists as strings", () => {
    expect(parseServeConfig({}, { env: ENV }).adapters.whatsapp).toBeNull();
    expect(parseServeConfig({ adapters: { whatsapp: { enabled: false } } }, { env: ENV }).adapters.whatsapp).toBeNull();
    const fromEnv = parseServeConfig({ adapters: { whatsapp: { phoneNumberId: 106540352242922, allowedUsers: [4915123456789] } } }, { env: ENV });
    expect(fromEnv.adapters.whatsapp).toEqual({
      accessToken: TOKEN,
      appSecret: SECRET,
      verifyToken: VERIFY,
      phoneNumberId: "106540352242922",
      apiUrl: "https://graph.facebook.com",
      apiVersion: "v26.0",
      webhookPath: "/whatsapp/webhook",
      readReceipts: true,
      access: "allowlist",
      accessDefaulted: false,
      admins: [],
      allowedUsers: ["4915123456789"],
      allowedChats: [],
      groupReply: "mention",
      answerBots: false,
      linkPreviews: false,
    });
    expect(chatAdapterProblems(fromEnv.adapters)).toEqual([]);
    const fromFile = parseServeConfig(
      {
        adapters: {
          whatsapp: {
            accessToken: `${TOKEN}X`,
            appSecret: `${SECRET}ff`,
            verifyToken: "another-verify-token",
            phoneNumberId: "106540352242922",
            apiUrl: "http://127.0.0.1:9",
            apiVersion: "v25.0",
            webhookPath: "/hooks/wa",
            readReceipts: false,
            groupReply: "all",
          },
        },
      },
      { env: ENV },
    );
    expect(fromFile.adapters.whatsapp).toMatchObject({
      accessToken: `${TOKEN}X`,
      appSecret: `${SECRET}ff`,
      verifyToken: "another-verify-token",
      apiUrl: "http://127.0.0.1:9",
      apiVersion: "v25.0",
      webhookPath: "/hooks/wa",
      readReceipts: false,
      groupReply: "all",
    });
    // The resolved config written back as a file parses to the same config.
    const again = parseServeConfig(configFileDocument(fromFile), { env: {} });
    expect(again.adapters.whatsapp).toEqual(fromFile.adapters.whatsapp);
  });

  it("everything missing is named with what to do", () => {
    const missing = parseServeConfig({ adapters: { whatsapp: {} } }, { env: {} });
    expect(chatAdapterProblems(missing.adapters)).toEqual([
      expect.stringMatching(/^adapters\.whatsapp\.accessToken: missing: set it in the config file or in the WHATSAPP_ACCESS_TOKEN environment variable/),
      expect.stringMatching(/^adapters\.whatsapp\.appSecret: missing: every webhook POST is checked against it \(X-Hub-Signature-256\).*WHATSAPP_APP_SECRET/),
      expect.stringMatching(/^adapters\.whatsapp\.verifyToken: missing: Meta's webhook verification .*WHATSAPP_VERIFY_TOKEN/),
      expect.stringMatching(/^adapters\.whatsapp\.phoneNumberId: missing: the Phone number ID of the business number/),
    ]);
    for (const problem of chatAdapterProblems(missing.adapters)) expect(problem).not.toContain("; ");
  });

  it("bad secrets from the environment are named but never echoed; bad values in the file show only their length", () => {
    const badEnv = parseServeConfig(
      { adapters: { whatsapp: { phoneNumberId: "1" } } },
      { env: { WHATSAPP_ACCESS_TOKEN: "not a token", WHATSAPP_APP_SECRET: "short!", WHATSAPP_VERIFY_TOKEN: "has spaces in it" } },
    );
    const problems = chatAdapterProblems(badEnv.adapters).join("; ");
    expect(problems).toMatch(/WHATSAPP_ACCESS_TOKEN does not look like an access token/);
    expect(problems).toMatch(/WHATSAPP_APP_SECRET does not look like an app secret/);
    expect(problems).toMatch(/WHATSAPP_VERIFY_TOKEN must be 16–256 visible characters without spaces/);
    for (const value of ["not a token", "short!", "has spaces in it"]) expect(problems).not.toContain(value);
    let message = "";
    try {
      parseServeConfig({ adapters: { whatsapp: { accessToken: "secret with spaces inside", appSecret: "tiny", verifyToken: "a b" } } }, { env: {} });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/adapters\.whatsapp\.accessToken: must be a Graph API access token .* \(got a string of 25 characters\)/);
    expect(message).toMatch(/adapters\.whatsapp\.appSecret: must be the Meta app's secret .* \(got a string of 4 characters\)/);
    expect(message).toMatch(/adapters\.whatsapp\.verifyToken: must be a string you choose, .* \(got a string of 3 characters\)/);
    expect(message).not.toContain("secret with spaces inside");
    expect(message).not.toContain("tiny");
  });

  it("bad shapes are refused with the expected form; unknown keys list the allowed ones", () => {
    expect(() => parseServeConfig({ adapters: { whatsapp: { phoneNumberId: "pn-1" } } })).toThrow(
      /adapters\.whatsapp\.phoneNumberId: must be the Phone number ID of the business number/,
    );
    expect(() => parseServeConfig({ adapters: { whatsapp: { apiVersion: "26" } } })).toThrow(
      /adapters\.whatsapp\.apiVersion: must be the Graph API version such as v26\.0/,
    );
    expect(() => parseServeConfig({ adapters: { whatsapp: { apiUrl: "graph.facebook.com" } } })).toThrow(
      /adapters\.whatsapp\.apiUrl: must be the Graph API base URL/,
    );
    expect(() => parseServeConfig({ adapters: { whatsapp: { webhookPath: "whatsapp" } } })).toThrow(
      /adapters\.whatsapp\.webhookPath: must be the route on the gateway's server/,
    );
    expect(() => parseServeConfig({ adapters: { whatsapp: { token: "x" } } })).toThrow(
      /adapters\.whatsapp: unknown key\(s\) "token"; allowed: .*accessToken.*appSecret.*verifyToken.*phoneNumberId.*apiUrl.*apiVersion.*webhookPath.*readReceipts/,
    );
  });

  it("config check names what is missing; config show (the built CLI) never prints the secrets", async () => {
    const home = await mkdtemp(join(tmpdir(), "tl-wa-cfg-"));
    try {
      await writeFile(join(home, "config.yaml"), "adapters:\n  whatsapp:\n    phoneNumberId: 106540352242922\n", "utf8");
      const run = (args: string[], env: Record<string, string>) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
          const childEnv: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home, NO_COLOR: "1", THREADLINE_CONFIG: "", ...env };
          for (const name of Object.keys(ENV)) if (env[name] === undefined) delete childEnv[name];
          execFile(process.execPath, [BIN, ...args], { env: childEnv }, (error, stdout, stderr) =>
            resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
          );
        });
      const missing = await run(["config", "check"], {});
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/adapters\.whatsapp\.accessToken: missing/);
      expect(missing.stderr).toMatch(/adapters\.whatsapp\.appSecret: missing/);
      expect(missing.stderr).toMatch(/adapters\.whatsapp\.verifyToken: missing/);
      const env = { WHATSAPP_ACCESS_TOKEN: TOKEN, WHATSAPP_APP_SECRET: SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY };
      expect((await run(["config", "check"], env)).code).toBe(0);
      const show = await run(["config", "show", "--json"], env);
      expect(JSON.parse(show.stdout).config.adapters.whatsapp).toMatchObject({
        accessToken: `(set, ${TOKEN.length} chars)`,
        appSecret: `(set, ${SECRET.length} chars)`,
        verifyToken: `(set, ${VERIFY.length} chars)`,
        phoneNumberId: "106540352242922",
      });
      for (const secret of [TOKEN, SECRET, VERIFY]) expect(show.stdout).not.toContain(secret);
      const yaml = await run(["config", "show"], env);
      for (const secret of [TOKEN, SECRET, VERIFY]) expect(yaml.stdout).not.toContain(secret);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
