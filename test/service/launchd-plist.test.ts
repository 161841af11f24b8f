/**
 * The launchd plist: golden files (test/service/golden/*.plist; `UPDATE_GOLDEN=1` rewrites
 * them), and what a real plist parser (Python's plistlib, where python3 is installed) reads
 * from it: the program arguments, THREADLINE_HOME as the only environment variable,
 * KeepAlive, RunAtLoad, the log paths and an ExitTimeOut longer than the drain.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { launchdPlistText, type ServiceSpec } from "../../src/service/index.js";

const GOLDEN = join(import.meta.dirname, "golden");

const CASES: Record<string, ServiceSpec> = {
  "agent-default": {
    nodePath: "/opt/homebrew/bin/node",
    entryPath: "/opt/homebrew/lib/node_modules/threadline/dist/cli/main.js",
    home: "/Users/ada/.threadline",
    configPath: null,
    drainTimeoutSeconds: 30,
    scope: "user",
    runAs: null,
    extraWritablePaths: [],
  },
  "agent-spaces": {
    nodePath: "/Users/ada/.nvm/versions/node/v22.13.0/bin/node",
    entryPath: "/Users/ada/My Apps/threadline/dist/cli/main.js",
    home: "/Users/ada/Library/Application Support/Threadline & <Co>",
    configPath: "/Users/ada/Library/Application Support/Threadline & <Co>/config.yaml",
    drainTimeoutSeconds: 75.2,
    scope: "user",
    runAs: null,
    extraWritablePaths: [],
  },
};

const python = spawnSync("python3", ["-c", "import plistlib"], { encoding: "utf8" });

/** The plist parsed by Python's plistlib, as JSON. */
function parsePlist(text: string): Record<string, unknown> {
  const script = "import json, plistlib, sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))";
  const result = spawnSync("python3", ["-c", script], { input: text, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`plistlib refused the plist: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe("the launchd plist", () => {
  for (const [name, spec] of Object.entries(CASES)) {
    it(`${name}: equals its golden file`, () => {
      const text = launchdPlistText(spec);
      const path = join(GOLDEN, `${name}.plist`);
      if (process.env["UPDATE_GOLDEN"] === "1") writeFileSync(path, text);
      expect(text).toBe(readFileSync(path, "utf8"));
    });

    it.runIf(python.status === 0)(`${name}: a plist parser reads back the spec`, () => {
      const log = join(spec.home, "logs", "gateway.log");
      expect(parsePlist(launchdPlistText(spec))).toEqual({
        Label: "dev.threadline.gateway",
        ProgramArguments: [
          spec.nodePath,
          `--env-file=${join(spec.home, "service.env")}`,
          spec.entryPath,
          "serve",
          ...(spec.configPath === null ? [] : ["--config", spec.configPath]),
        ],
        EnvironmentVariables: { THREADLINE_HOME: spec.home },
        WorkingDirectory: spec.home,
        RunAtLoad: true,
        KeepAlive: true,
        ThrottleInterval: 5,
        ExitTimeOut: Math.ceil(spec.drainTimeoutSeconds) + 15,
        ProcessType: "Background",
        StandardOutPath: log,
        StandardErrorPath: log,
      });
    });
  }

  it("is per user: a system scope is refused", () => {
    expect(() => launchdPlistText({ ...CASES["agent-default"]!, scope: "system", runAs: "root" })).toThrow(/per-user agent/u);
  });
});
