/**
 * The MCP SDK is loaded only by `threadline mcp`: other commands (and `mcp --help`) never
 * resolve it. Observed in real child processes of the built bin through the module-resolution
 * hook of test/support/sdk-load-hook.mjs.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtCli } from "../cli/cli-run.js";
import { seededDatabase, type Fixture } from "./mcp-fixture.js";

const HOOK = pathToFileURL(fileURLToPath(new URL("../support/sdk-load-hook.mjs", import.meta.url))).href;
let fixture: Fixture;
beforeAll(async () => {
  fixture = await seededDatabase();
});
afterAll(async () => {
  await fixture.cleanup();
});

/** Runs the bin with the hook logging into `log`; resolves with the exit code. */
function run(args: string[], log: string): Promise<number> {
  const [node, bin] = builtCli();
  const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: fixture.dir, NODE_OPTIONS: `--import=${HOOK}`, THREADLINE_TEST_SDK_LOG: log };
  delete env["THREADLINE_DB"];
  delete env["THREADLINE_CONFIG"];
  return new Promise((resolve) => {
    const child = execFile(node!, [bin!, ...args], { env }, (error) => resolve(error ? Number(error.code ?? 1) : 0));
    child.stdin?.end(); // `mcp` over stdio ends when its client (stdin) goes away
  });
}

const resolved = (log: string): string[] =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l !== "")
    : [];

it("only threadline mcp loads the MCP SDK", { timeout: 60_000 }, async () => {
  const quiet = join(fixture.dir, "quiet.log");
  for (const args of [["sessions", "list", "--db", fixture.file], ["--help"], ["mcp", "--help"]]) {
    expect(await run(args, quiet), args.join(" ")).toBe(0);
  }
  expect(resolved(quiet)).toEqual([]);
  const loud = join(fixture.dir, "mcp.log");
  expect(await run(["mcp", "--db", fixture.file], loud)).toBe(0);
  expect(resolved(loud).some((s) => s.startsWith("@modelcontextprotocol/sdk/"))).toBe(true);
});
