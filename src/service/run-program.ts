/**
 * Runs a service manager's program (`systemctl`, `journalctl`, `launchctl`, `tail`) and
 * collects what it said: the one place the service layer starts processes.
 *
 * @module
 */
import { spawn } from "node:child_process";

/** How a program ran. */
export interface ProgramResult {
  /** Its exit code (`null`: killed by a signal, or it could not start). */
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the program is not on PATH (ENOENT). */
  missing: boolean;
}

/**
 * Runs `program args` with `env` (its PATH finds the program), no stdin, and resolves with
 * its exit code and output; never rejects.
 */
export function runProgram(program: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<ProgramResult> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    const child = spawn(program, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", (error: NodeJS.ErrnoException) => {
      resolve({ code: null, stdout, stderr: stderr || error.message, missing: error.code === "ENOENT" });
    });
    child.once("close", (code) => resolve({ code, stdout, stderr, missing: false }));
  });
}

/** A program's own words for a failure: its stderr (else stdout), trimmed, or a note that it said nothing. */
export function programSaid(result: ProgramResult): string {
  const said = (result.stderr.trim() || result.stdout.trim()).split("\n").slice(0, 5).join(" / ");
  return said === "" ? `exit code ${result.code}` : said;
}
