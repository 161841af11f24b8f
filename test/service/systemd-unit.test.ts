/**
 * The systemd unit: golden files for several homes and configs (test/service/golden/*.service;
 * `UPDATE_GOLDEN=1` rewrites them), what systemd reads back from the unit (test/service/
 * systemd-reading.ts, written from the manual pages), and the real `systemd-analyze verify`
 * (systemd 252 here) on units whose executables exist, including paths with spaces, `%` and
 * `$`: it fails on an unknown key, a relative path or an ExecStart executable it cannot find.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { systemdUnitText, type ServiceSpec } from "../../src/service/index.js";
import { environmentOf, execArgv, parseUnitFile, resolveSpecifiers, splitWords, unitValues } from "./systemd-reading.js";

const GOLDEN = join(import.meta.dirname, "golden");

/** The specs of the golden files. */
const UNIT_CASES: Record<string, ServiceSpec> = {
  "user-default": {
    nodePath: "/usr/bin/node",
    entryPath: "/usr/lib/node_modules/threadline/dist/cli/main.js",
    home: "/home/ada/.threadline",
    configPath: null,
    drainTimeoutSeconds: 30,
    scope: "user",
    runAs: null,
    extraWritablePaths: [],
  },
  "user-spaces": {
    nodePath: "/home/ada/.nvm/versions/node/v22.13.0/bin/node",
    entryPath: "/home/ada/My Apps/threadline/dist/cli/main.js",
    home: "/home/ada/My Threadline",
    configPath: "/home/ada/My Threadline/gateway config.yaml",
    drainTimeoutSeconds: 90.5,
    scope: "user",
    runAs: null,
    extraWritablePaths: [],
  },
  "user-odd-characters": {
    nodePath: "/opt/node$22/bin/node",
    entryPath: "/opt/thread$line 2/dist/cli/main.js",
    home: '/home/ada/100% "tl" $HOME',
    configPath: "/home/ada/cfg/it's.yaml",
    drainTimeoutSeconds: 0,
    scope: "user",
    runAs: null,
    extraWritablePaths: ["/mnt/db dir"],
  },
  "system-srv": {
    nodePath: "/usr/bin/node",
    entryPath: "/usr/lib/node_modules/threadline/dist/cli/main.js",
    home: "/srv/threadline",
    configPath: "/etc/threadline/config.yaml",
    drainTimeoutSeconds: 120,
    scope: "system",
    runAs: "threadline",
    extraWritablePaths: ["/var/lib/threadline-db"],
  },
};

describe("the systemd unit", () => {
  for (const [name, spec] of Object.entries(UNIT_CASES)) {
    it(`${name}: equals its golden file`, () => {
      const text = systemdUnitText(spec);
      const path = join(GOLDEN, `${name}.service`);
      if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(path, text);
      expect(text).toBe(readFileSync(path, "utf8"));
    });

    it(`${name}: systemd reads back the spec's command, home, env file and writable paths`, () => {
      const unit = parseUnitFile(systemdUnitText(spec));
      const [exec] = unitValues(unit, "Service", "ExecStart");
      expect(execArgv(exec!)).toEqual([spec.nodePath, spec.entryPath, "serve", ...(spec.configPath === null ? [] : ["--config", spec.configPath])]);
      expect(environmentOf(unitValues(unit, "Service", "Environment"))).toEqual({ THREADLINE_HOME: spec.home });
      expect(unitValues(unit, "Service", "EnvironmentFile").map(resolveSpecifiers)).toEqual([join(spec.home, "service.env")]);
      expect(unitValues(unit, "Service", "ReadWritePaths").flatMap(splitWords)).toEqual([spec.home, ...spec.extraWritablePaths]);
      expect(unitValues(unit, "Service", "TimeoutStopSec")).toEqual([String(Math.ceil(spec.drainTimeoutSeconds) + 15)]);
      expect(unitValues(unit, "Service", "KillSignal")).toEqual(["SIGTERM"]);
      expect(unitValues(unit, "Service", "Restart")).toEqual(["always"]);
      expect(unitValues(unit, "Install", "WantedBy")).toEqual([spec.scope === "user" ? "default.target" : "multi-user.target"]);
      expect(unitValues(unit, "Service", "User")).toEqual(spec.runAs === null ? [] : [spec.runAs]);
    });
  }

  it("refuses a relative path and a line break, naming the field", () => {
    const spec = UNIT_CASES["user-default"]!;
    expect(() => systemdUnitText({ ...spec, home: "relative/home" })).toThrow(/home: the service needs an absolute path/u);
    expect(() => systemdUnitText({ ...spec, configPath: "/tmp/a\nExecStartPre=/bin/sh" })).toThrow(/configPath: .* line break/u);
  });
});

const analyze = spawnSync("systemd-analyze", ["--version"], { encoding: "utf8" });
const scratch = mkdtempSync(join(tmpdir(), "threadline-unit-verify-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the real `systemd-analyze verify` on `text` (`--user` for a user unit, with a private runtime dir). */
function verify(text: string, scope: "user" | "system"): { code: number | null; output: string } {
  const dir = mkdtempSync(join(scratch, "unit-"));
  const file = join(dir, "threadline.service");
  writeFileSync(file, text);
  const runtime = join(dir, "runtime");
  mkdirSync(runtime, { mode: 0o700 });
  const args = [...(scope === "user" ? ["--user"] : []), "verify", "--man=no", file];
  const result = spawnSync("systemd-analyze", args, { encoding: "utf8", env: { ...process.env, XDG_RUNTIME_DIR: runtime, SYSTEMD_LOG_COLOR: "0" } });
  return { code: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

describe.runIf(analyze.status === 0)(`systemd-analyze verify (${analyze.stdout.split("\n")[0]})`, () => {
  /** A spec whose executables exist: Node linked into folders named like the golden cases'. */
  function realSpec(spec: ServiceSpec, label: string): ServiceSpec {
    const root = mkdtempSync(join(scratch, "root-"));
    const place = (path: string): string => join(root, label, path);
    const node = place(spec.nodePath);
    mkdirSync(join(node, ".."), { recursive: true });
    if (!existsSync(node)) symlinkSync(process.execPath, node);
    return {
      ...spec,
      nodePath: node,
      entryPath: place(spec.entryPath),
      home: place(spec.home),
      configPath: spec.configPath === null ? null : place(spec.configPath),
      extraWritablePaths: spec.extraWritablePaths.map(place),
    };
  }

  for (const [name, spec] of Object.entries(UNIT_CASES)) {
    it(`${name}: verifies clean (no warning at all)`, () => {
      const result = verify(systemdUnitText(realSpec(spec, name)), spec.scope);
      expect(result).toEqual({ code: 0, output: "" });
    });
  }

  it("can fail: an unknown key, a relative path and a missing executable are reported", () => {
    const text = systemdUnitText(realSpec(UNIT_CASES["user-spaces"]!, "bad"));
    expect(verify(text.replace("Type=simple", "Type=simple\nRestartSteps=5"), "user").output).toMatch(/Unknown key 'RestartSteps'/u);
    expect(verify(text.replace(/^ReadWritePaths=.*$/mu, "ReadWritePaths=relative/dir"), "user").output).toMatch(/not absolute/u);
    expect(verify(text.replace("/bin/node", "/bin/no-such-node"), "user")).toMatchObject({ code: 1, output: expect.stringMatching(/is not executable/u) });
  });
});
