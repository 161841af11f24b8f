/**
 * The launchd path against a fake `launchctl` (fake-systemd.ts; there is no macOS here, so
 * this checks what Threadline asks of launchctl, not launchd itself): install writes the plist
 * and a 0600 service.env and bootstraps the agent into `gui/<uid>`; again: nothing rewritten,
 * nothing reloaded; status reads `launchctl print` and the log file; uninstall boots it out
 * and removes the plist, keeping THREADLINE_HOME. Through the built bin (`npm run build` first).
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { launchdPlistText } from "../../../src/service/index.js";
import { BIN, builtCli, runChild } from "../cli-run.js";
import { fakeSystemd } from "./fake-systemd.js";

const root = mkdtempSync(join(tmpdir(), "threadline-service-launchd-"));
const fake = fakeSystemd();
afterAll(() => {
  fake.remove();
  rmSync(root, { recursive: true, force: true });
});

it("install bootstraps the agent once, status reads launchctl print and the log, uninstall boots it out and removes the plist", async () => {
  const userHome = join(root, "Users", "ada");
  const home = join(root, "data home");
  mkdirSync(userHome, { recursive: true });
  const env = { ...fake.env, HOME: userHome, THREADLINE_HOME: home, OPENAI_API_KEY: "sk-launchd-test" };
  const run = (...args: string[]) => runChild(builtCli(), ["service", ...args, "--manager", "launchd"], env);
  const plist = join(userHome, "Library", "LaunchAgents", "dev.threadline.gateway.plist");
  const domain = `gui/${process.getuid?.()}`;

  const first = await run("install");
  expect(first, first.stderr).toMatchObject({ code: 0, stderr: "" });
  expect(readFileSync(plist, "utf8")).toBe(
    launchdPlistText({
      nodePath: process.execPath,
      entryPath: realpathSync(BIN),
      home,
      configPath: null,
      drainTimeoutSeconds: 30,
      scope: "user",
      runAs: null,
      extraWritablePaths: [],
    }),
  );
  expect(statSync(join(home, "service.env")).mode & 0o777).toBe(0o600);
  expect(statSync(join(home, "logs")).isDirectory()).toBe(true);
  expect(fake.calls()).toEqual([`launchctl print ${domain}`, `launchctl print ${domain}/dev.threadline.gateway`, `launchctl bootstrap ${domain} ${plist}`]);

  fake.clearCalls();
  const second = await run("install");
  expect(second.stdout).toContain("Already installed, up to date");
  expect(fake.calls()).toEqual([`launchctl print ${domain}`, `launchctl print ${domain}/dev.threadline.gateway`]);

  writeFileSync(join(home, "logs", "gateway.log"), '{"msg":"gateway listening"}\n');
  const status = await run("status");
  expect(status.stdout).toContain("State:   running");
  expect(status.stdout).toContain("PID:     777");
  expect(status.stdout).toContain('  {"msg":"gateway listening"}');

  fake.clearCalls();
  const removed = await run("uninstall");
  expect(removed).toMatchObject({ code: 0, stderr: "" });
  expect(fake.calls()).toEqual([
    `launchctl print ${domain}`,
    `launchctl print ${domain}/dev.threadline.gateway`,
    `launchctl bootout ${domain}/dev.threadline.gateway`,
  ]);
  expect(() => statSync(plist)).toThrow(/ENOENT/u);
  expect(statSync(join(home, "service.env")).isFile()).toBe(true);
}, 90_000);
