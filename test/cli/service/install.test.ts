/**
 * `threadline service install | status | logs | stop | uninstall` against fake `systemctl` and
 * `journalctl` (fake-systemd.ts: this machine has no running systemd), through the built bin
 * (`npm run build` first) with HOME and XDG_CONFIG_HOME in a temp folder: install writes the
 * unit and a 0600 service.env and runs daemon-reload, enable, start; a second install changes
 * nothing and says so; status and logs ask the manager and /healthz; uninstall stops, disables
 * and removes the unit, leaving no file of ours but THREADLINE_HOME's.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemdUnitText } from "../../../src/service/index.js";
import { BIN, builtCli, runChild } from "../cli-run.js";
import { cleanupProcesses, freePort, spawnGateway } from "../../serve/gateway-process.js";
import { fakeSystemd, type FakeSystemd } from "./fake-systemd.js";

let root: string;
let fake: FakeSystemd;
let env: NodeJS.ProcessEnv;
let home: string;
let userHome: string;
let port: number;

/** Every file under `dir` (relative paths), sorted. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

const SECRET = "sk-install-test-0123456789";

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "threadline-service-install-"));
  userHome = join(root, "user");
  home = join(root, "data home");
  mkdirSync(userHome);
  mkdirSync(home);
  port = await freePort();
  writeFileSync(join(home, "config.yaml"), `gateway:\n  host: 127.0.0.1\n  port: ${port}\n  drainTimeoutSeconds: 40\n`);
  fake = fakeSystemd();
  env = {
    ...fake.env,
    HOME: userHome,
    XDG_CONFIG_HOME: join(userHome, ".config"),
    THREADLINE_HOME: home,
    OPENAI_API_KEY: SECRET,
    THREADLINE_MODEL: "fake-model",
  };
});

afterEach(async () => {
  await cleanupProcesses();
  fake.remove();
  rmSync(root, { recursive: true, force: true });
});

const run = (...args: string[]) => runChild(builtCli(), ["service", ...args], env);
const unitPath = (): string => join(userHome, ".config", "systemd", "user", "threadline.service");

describe("threadline service with a (fake) systemd user manager", () => {
  it("install writes the unit and a 0600 service.env, reloads, enables and starts; again: up to date, nothing rewritten", async () => {
    const before = filesUnder(userHome);
    const first = await run("install");
    expect(first, first.stderr).toMatchObject({ code: 0, stderr: "" });
    expect(first.stdout).toContain(`Wrote the systemd user unit ${unitPath()}`);
    expect(first.stdout).toContain("loginctl enable-linger $USER");
    expect(fake.calls()).toEqual([
      "systemctl --user show-environment",
      "systemctl --user daemon-reload",
      "systemctl --user enable threadline.service",
      "systemctl --user show threadline.service --property=ActiveState,SubState,MainPID,StateChangeTimestamp",
      "systemctl --user start threadline.service",
    ]);
    const unit = readFileSync(unitPath(), "utf8");
    expect(unit).toBe(
      systemdUnitText({
        nodePath: process.execPath,
        entryPath: realpathSync(BIN),
        home,
        configPath: join(home, "config.yaml"),
        drainTimeoutSeconds: 40,
        scope: "user",
        runAs: null,
        extraWritablePaths: [],
      }),
    );
    const envFile = join(home, "service.env");
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(envFile, "utf8")).toContain(`OPENAI_API_KEY=${SECRET}\nTHREADLINE_MODEL=fake-model\n`);
    expect(filesUnder(userHome)).toEqual([...before, ".config/systemd/user/threadline.service"].sort());

    const unitTime = statSync(unitPath()).mtimeMs;
    const envTime = statSync(envFile).mtimeMs;
    fake.clearCalls();
    const second = await run("install");
    expect(second).toMatchObject({ code: 0, stderr: "" });
    expect(second.stdout).toContain(`Already installed, up to date: ${unitPath()}`);
    expect(second.stdout).toContain("it was running already");
    expect(fake.calls()).toEqual([
      "systemctl --user show-environment",
      "systemctl --user enable threadline.service",
      "systemctl --user show threadline.service --property=ActiveState,SubState,MainPID,StateChangeTimestamp",
      "systemctl --user start threadline.service",
    ]);
    expect(readFileSync(unitPath(), "utf8")).toBe(unit);
    expect([statSync(unitPath()).mtimeMs, statSync(envFile).mtimeMs]).toEqual([unitTime, envTime]);
  }, 60_000);

  it("install keeps the other lines of an existing service.env and tightens a loose mode; a changed environment restarts it", async () => {
    const envFile = join(home, "service.env");
    writeFileSync(envFile, "# mine\nCUSTOM_FLAG=1\nOPENAI_API_KEY=old\n", { mode: 0o644 });
    expect((await run("install")).code).toBe(0);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(envFile, "utf8")).toBe(`# mine\nCUSTOM_FLAG=1\nOPENAI_API_KEY=${SECRET}\nTHREADLINE_MODEL=fake-model\n`);

    fake.clearCalls();
    env = { ...env, THREADLINE_MODEL: "another-model" };
    const again = await run("install");
    expect(again.stdout).toContain("restarted it with the new definition");
    expect(fake.calls()).toContain("systemctl --user restart threadline.service");
    expect(readFileSync(envFile, "utf8")).toContain("THREADLINE_MODEL=another-model\n");
  }, 60_000);

  it("a SQLite file outside THREADLINE_HOME is writable in the unit, also on a re-install from a shell without THREADLINE_DB", async () => {
    const dbFolder = join(root, "db folder");
    mkdirSync(dbFolder);
    env = { ...env, THREADLINE_DB: join(dbFolder, "state.db") };
    expect((await run("install")).code).toBe(0);
    const writable = `ReadWritePaths="${home}" "${dbFolder}"\n`;
    expect(readFileSync(unitPath(), "utf8")).toContain(writable);
    expect(readFileSync(join(home, "service.env"), "utf8")).toContain(`THREADLINE_DB='${join(dbFolder, "state.db")}'\n`);
    const { THREADLINE_DB: _, ...withoutDb } = env;
    env = withoutDb;
    const again = await run("install");
    expect(again.stdout).toContain("Already installed, up to date");
    expect(readFileSync(unitPath(), "utf8")).toContain(writable);
  }, 60_000);

  it("status, logs and stop ask systemctl and journalctl; status checks /healthz of the configured port", async () => {
    expect((await run("status")).code).toBe(3);
    expect((await run("install")).code).toBe(0);
    fake.clearCalls();
    const status = await run("status", "--lines", "2");
    expect(status.code).toBe(1); // running, but nothing answers /healthz on that port
    expect(status.stdout).toContain("State:   active (running) since Sat 2026-11-28 10:00:00 UTC");
    expect(status.stdout).toContain("PID:     4242");
    expect(status.stdout).toContain(`GET http://127.0.0.1:${port}/healthz: connection refused`);
    expect(status.stdout).toContain("  gateway log line two");
    expect(fake.calls()).toContain("journalctl --user -u threadline.service -n 2 --no-pager -o cat");

    const gateway = await spawnGateway({ home, port });
    const healthy = await run("status", "--json");
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({
      manager: "systemd",
      scope: "user",
      running: true,
      pid: 4242,
      health: { ok: true, summary: "200 ok" },
      logs: ["gateway log line one", "gateway log line two"],
    });
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });

    fake.clearCalls();
    const logs = await run("logs", "--no-follow", "-n", "5");
    expect(logs).toMatchObject({ code: 0, stdout: "gateway log line one\ngateway log line two\n" });
    expect(fake.calls()).toEqual(["systemctl --user show-environment", "journalctl --user -u threadline.service -n 5 --no-pager"]);

    fake.clearCalls();
    const stop = await run("stop");
    expect(stop.stdout).toContain("Stopped (running turns drained)");
    expect(fake.calls()).toEqual(["systemctl --user show-environment", "systemctl --user stop threadline.service"]);
    expect((await run("status")).stdout).toContain("State:   inactive (dead)");
  }, 60_000);

  it("uninstall stops, disables and removes the unit, leaves no file behind, and keeps THREADLINE_HOME with service.env", async () => {
    const before = filesUnder(userHome);
    expect((await run("install")).code).toBe(0);
    fake.clearCalls();
    const removed = await run("uninstall");
    expect(removed).toMatchObject({ code: 0, stderr: "" });
    expect(removed.stdout).toContain(`Kept ${home}`);
    expect(removed.stdout).toContain(join(home, "service.env"));
    expect(fake.calls()).toEqual([
      "systemctl --user show-environment",
      "systemctl --user disable --now threadline.service",
      "systemctl --user daemon-reload",
      "systemctl --user reset-failed threadline.service",
    ]);
    expect(filesUnder(userHome)).toEqual(before);
    expect(filesUnder(home)).toEqual(["config.yaml", "service.env"]);

    const again = await run("uninstall");
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("is not installed") });
    expect((await run("start")).code).toBe(3);
  }, 60_000);
});
