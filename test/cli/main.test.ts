import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Runs the built bin (npm test builds dist/ before vitest), as an installed package would.
const BIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const run = promisify(execFile);
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

describe("threadline bin", () => {
  it("prints its version", async () => {
    const { stdout } = await run(process.execPath, [BIN, "--version"]);
    expect(stdout.trim()).toBe(version);
  });

  it("prints help naming the data home", async () => {
    const { stdout } = await run(process.execPath, [BIN, "--help"]);
    expect(stdout).toMatch(/Usage: threadline/);
    expect(stdout).toMatch(/THREADLINE_HOME/);
  });

  it("rejects an unknown command on stderr with exit code 2", async () => {
    const error = (await run(process.execPath, [BIN, "frobnicate"]).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr).toBe('threadline: unknown command "frobnicate". Run "threadline --help" to see the commands.\n');
  });
});
