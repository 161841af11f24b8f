/**
 * Secrets in the installing environment (provider key, platform tokens, a database URL with a
 * password) go to `$THREADLINE_HOME/service.env` with mode 0600, and never into the unit, the
 * plist, the dry-run output or what install prints. Through the built bin (`npm run build`
 * first) with a fake `systemctl` (test/cli/service/fake-systemd.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { builtCli, runChild, runInProcess } from "../cli/cli-run.js";
import { fakeSystemd } from "../cli/service/fake-systemd.js";

const SECRETS = {
  OPENAI_API_KEY: "sk-SECRET-openai-7f3a9c",
  TELEGRAM_BOT_TOKEN: "123456:SECRET-telegram-b41d",
  SLACK_SIGNING_SECRET: "SECRET-slack-signing-55e0",
  DISCORD_BOT_TOKEN: "SECRET.discord.token.9a9a",
  THREADLINE_DB: "postgres://threadline:SECRET-pg-password@127.0.0.1:5432/threadline",
};

const root = mkdtempSync(join(tmpdir(), "threadline-service-secrets-"));
const fake = fakeSystemd();
afterAll(() => {
  fake.remove();
  rmSync(root, { recursive: true, force: true });
});

/** Fails naming the secret (not its value) that `text` holds. */
function expectNoSecret(text: string, where: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(text.includes(value) || text.includes("SECRET-"), `${name}'s value appears in ${where}`).toBe(false);
  }
}

it("tokens go to service.env (0600) only: not into the unit, the plist, the dry run or install's output", async () => {
  const home = join(root, "data");
  const userHome = join(root, "user");
  mkdirSync(userHome);
  const env = { ...fake.env, HOME: userHome, XDG_CONFIG_HOME: join(userHome, ".config"), THREADLINE_HOME: home, ...SECRETS };

  for (const manager of ["systemd", "launchd"]) {
    const dry = await runInProcess(["service", "install", "--dry-run", "--manager", manager], env);
    expect(dry.code).toBe(0);
    expectNoSecret(dry.stdout + dry.stderr, `the ${manager} dry run`);
    expect(dry.stdout).toContain("OPENAI_API_KEY");
  }

  const installed = await runChild(builtCli(), ["service", "install"], env);
  expect(installed.code, installed.stderr).toBe(0);
  expectNoSecret(installed.stdout + installed.stderr, "install's output");
  expectNoSecret(readFileSync(join(userHome, ".config", "systemd", "user", "threadline.service"), "utf8"), "the unit");

  const envFile = join(home, "service.env");
  expect(statSync(envFile).mode & 0o777).toBe(0o600);
  const text = readFileSync(envFile, "utf8");
  for (const [name, value] of Object.entries(SECRETS)) expect(text).toContain(`${name}=${value}\n`);
}, 60_000);
