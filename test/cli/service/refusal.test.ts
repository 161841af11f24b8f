/**
 * Where no service manager runs, `threadline service` refuses clearly and writes nothing:
 * with this machine's real `systemctl` (systemd is not PID 1 here), with a fake one answering
 * as systemctl does on such a machine, and for launchd where there is no `launchctl`. The
 * refusal says what to run instead. `install --dry-run` works all the same, for both managers
 * and for a system unit, and writes nothing. Run in process (no build needed).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInProcess } from "../cli-run.js";
import { fakeSystemd, type FakeSystemd } from "./fake-systemd.js";

let root: string;
let env: NodeJS.ProcessEnv;
const fakes: FakeSystemd[] = [];

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "threadline-service-refusal-"));
  env = { PATH: process.env["PATH"], HOME: join(root, "user"), XDG_CONFIG_HOME: join(root, "user", ".config"), THREADLINE_HOME: join(root, "data") };
});

afterEach(() => {
  for (const fake of fakes.splice(0)) fake.remove();
  rmSync(root, { recursive: true, force: true });
});

/** Nothing was written under the temp root. */
function nothingWritten(): void {
  expect(readdirSync(root)).toEqual([]);
}

function expectRefusal(result: { code: number | null; stderr: string }, manager: RegExp): void {
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(manager);
  expect(result.stderr).toContain("threadline serve");
  expect(result.stderr).toContain("container image");
  expect(result.stderr).toContain("threadline service install --dry-run");
}

const realSystemctl = spawnSync("systemctl", ["--user", "show-environment"], { encoding: "utf8" });

describe("no service manager", () => {
  it.runIf(realSystemctl.status !== null && realSystemctl.status !== 0)(
    `this machine's real systemctl ("${realSystemctl.stderr?.trim()}"): install, start and status refuse, nothing is written`,
    async () => {
      for (const command of ["install", "start", "status", "logs"]) {
        expectRefusal(await runInProcess(["service", command], env), /systemd's user manager \(systemctl --user\) does not answer here/u);
      }
      nothingWritten();
    },
  );

  it("a systemctl answering as on a machine without systemd as PID 1: --system install refuses with its words", async () => {
    const fake = fakeSystemd({ down: "System has not been booted with systemd as init system (PID 1). Can't operate." });
    fakes.push(fake);
    const result = await runInProcess(["service", "install", "--system"], { ...env, ...fake.env });
    expectRefusal(result, /systemd \(systemctl\) does not answer here \(System has not been booted with systemd/u);
    expect(fake.calls()).toEqual(["systemctl show-environment"]);
    nothingWritten();
  });

  it("launchd without launchctl: refused, nothing written", async () => {
    const result = await runInProcess(["service", "install", "--manager", "launchd"], { ...env, PATH: join(root, "no-such-bin") });
    expectRefusal(result, /launchd \(launchctl\) does not answer here \(launchctl is not installed\)/u);
    nothingWritten();
  });
});

describe("install --dry-run works on any machine and writes nothing", () => {
  it("systemd user unit, secrets named but not shown", async () => {
    const result = await runInProcess(["service", "install", "--dry-run"], { ...env, OPENAI_API_KEY: "sk-dry-run-secret-value" });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain(`# ${join(root, "user", ".config", "systemd", "user", "threadline.service")}:`);
    expect(result.stdout).toMatch(/^ExecStart=\S+ \S+main\.js serve$/mu);
    expect(result.stdout).toContain("WantedBy=default.target");
    expect(result.stdout).toContain("(values not shown): OPENAI_API_KEY");
    expect(result.stdout).not.toContain("sk-dry-run-secret-value");
    nothingWritten();
  });

  it("a system unit and a launchd plist, from a Linux machine", async () => {
    const system = await runInProcess(["service", "install", "--dry-run", "--system", "--run-as", "threadline"], env);
    expect(system.code).toBe(0);
    expect(system.stdout).toContain("# /etc/systemd/system/threadline.service:");
    expect(system.stdout).toContain("User=threadline\n");
    expect(system.stdout).toContain("ProtectHome=read-only\n");
    expect(system.stdout).toContain("WantedBy=multi-user.target");
    const plist = await runInProcess(["service", "install", "--dry-run", "--manager", "launchd"], env);
    expect(plist.code).toBe(0);
    expect(plist.stdout).toContain(`# ${join(root, "user", "Library", "LaunchAgents", "dev.threadline.gateway.plist")}:`);
    expect(plist.stdout).toContain("<key>KeepAlive</key>");
    expect(existsSync("/etc/systemd/system/threadline.service")).toBe(false);
    nothingWritten();
  });
});
