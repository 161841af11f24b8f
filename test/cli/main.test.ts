// The built bin as a child process, as an installed package runs it (npm test builds dist/
// before vitest): that it starts at all, its real exit code, and what only a process has (a
// reader that closes the pipe early). Everything else runs in process (see cli-run.ts).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { openSessionDB } from "../../src/index.js";
import { builtCli } from "./cli-run.js";

const run = promisify(execFile);
/** The built bin, checked to be current. */
const bin = (): string => builtCli()[1]!;
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

describe("threadline bin", () => {
  it("prints its version", async () => {
    const { stdout } = await run(process.execPath, [bin(), "--version"]);
    expect(stdout.trim()).toBe(version);
  });

  it("prints help naming the data home", async () => {
    const { stdout } = await run(process.execPath, [bin(), "--help"]);
    expect(stdout).toMatch(/Usage: threadline/);
    expect(stdout).toMatch(/THREADLINE_HOME/);
  });

  it("rejects an unknown command on stderr with exit code 2", async () => {
    const error = (await run(process.execPath, [bin(), "frobnicate"]).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr).toBe('threadline: unknown command "frobnicate". Run "threadline --help" to see the commands.\n');
  });

  it("a reader that stops early (| head) ends it quietly with exit 0", async () => {
    const dir = mkdtempSync(join(tmpdir(), "threadline-bin-"));
    try {
      const file = join(dir, "state.db");
      const db = await openSessionDB(file);
      try {
        // Far more than a pipe holds, so the bin is still writing when head has gone.
        for (let i = 0; i < 300; i++) {
          const session = await db.createSession({ source: "cli" });
          await db.appendMessage(session.id, { role: "user", content: `message ${i} ${"x".repeat(2000)}` });
        }
      } finally {
        await db.close();
      }
      const script = `"$0" "$1" sessions export - --db "$2" 2>"$3" | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`;
      const { stdout } = await run("bash", ["-c", script, process.execPath, bin(), file, join(dir, "stderr")], { env: { ...process.env, NO_COLOR: "1" } });
      expect(stdout.trim()).toBe("0");
      expect(readFileSync(join(dir, "stderr"), "utf8")).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
