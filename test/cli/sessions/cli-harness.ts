/**
 * Runs the built `threadline` bin as a child process, as a user would: with a temp
 * THREADLINE_HOME, a temp SQLite file seeded through the public API, plain pipes, or a
 * pseudo-terminal (`script`) for the prompts.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openSessionDB, type SessionDB } from "../../../src/index.js";

/** The built bin (`npm run build` first; `npm test` does). */
export const BIN = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));

/** What a finished run printed. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A temp data home with a database file in it. */
export interface TempHome {
  dir: string;
  home: string;
  db: string;
  /** The child's environment: THREADLINE_HOME set, THREADLINE_DB unset, NO_COLOR=1 unless overridden. */
  env(extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  /** Opens the database through the public API, runs `fill`, closes it. */
  seed<T>(fill: (db: SessionDB) => Promise<T>): Promise<T>;
  /** Runs `threadline <args>` with pipes; `input` is written to stdin, which is then closed (unless `keepStdinOpen`). */
  run(args: string[], options?: { input?: string; env?: Record<string, string | undefined>; keepStdinOpen?: boolean; timeoutMs?: number }): Promise<RunResult>;
  /**
   * Runs `threadline <args>` on a pseudo-terminal (stdin, stdout and stderr all on it); when
   * `waitFor` shows up, types `answer` + Enter. Output is stdout and stderr together.
   */
  runInTerminal(args: string[], options?: { waitFor?: string; answer?: string; env?: Record<string, string | undefined>; timeoutMs?: number }): Promise<{ code: number | null; output: string }>;
  /** Removes the temp directory. */
  cleanup(): void;
}

/** Makes a temp home; call `cleanup()` after. */
export function makeTempHome(): TempHome {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run "npm run build" before these tests (npm test does).`);
  const dir = mkdtempSync(join(tmpdir(), "threadline-cli-"));
  const home = join(dir, "home");
  const db = join(dir, "state.db");
  const env = (extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv => {
    const base: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home, NO_COLOR: "1" };
    delete base["THREADLINE_DB"];
    delete base["FORCE_COLOR"];
    for (const [key, value] of Object.entries(extra)) {
      if (value === undefined) delete base[key];
      else base[key] = value;
    }
    return base;
  };
  return {
    dir,
    home,
    db,
    env,
    async seed(fill) {
      const store = await openSessionDB(db);
      try {
        return await fill(store);
      } finally {
        await store.close();
      }
    },
    run(args, options = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [BIN, ...args], { env: env(options.env), stdio: ["pipe", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`threadline ${args.join(" ")} did not finish in ${options.timeoutMs ?? 60_000} ms (hung?)\nstdout: ${stdout}\nstderr: ${stderr}`));
        }, options.timeoutMs ?? 60_000);
        child.on("error", reject);
        child.on("close", (code) => {
          clearTimeout(timer);
          child.stdin.destroy();
          resolve({ code, stdout, stderr });
        });
        child.stdin.on("error", () => {});
        if (options.input !== undefined) child.stdin.write(options.input);
        if (!options.keepStdinOpen) child.stdin.end();
      });
    },
    runInTerminal(args, options = {}) {
      return new Promise((resolve, reject) => {
        const command = [process.execPath, BIN, ...args].map(shellQuote).join(" ");
        // script(1) runs the command on a new pseudo-terminal and copies our stdin to it.
        const child = spawn("script", ["-qfec", command, "/dev/null"], { env: env(options.env), stdio: ["pipe", "pipe", "pipe"] });
        let output = "";
        let answered = false;
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`threadline ${args.join(" ")} on a terminal did not finish in ${options.timeoutMs ?? 60_000} ms\noutput: ${output}`));
        }, options.timeoutMs ?? 60_000);
        const onData = (d: string): void => {
          output += d;
          if (!answered && options.waitFor !== undefined && output.includes(options.waitFor)) {
            answered = true;
            child.stdin.write(`${options.answer ?? ""}\r`);
          }
        };
        child.stdout.setEncoding("utf8").on("data", onData);
        child.stderr.setEncoding("utf8").on("data", onData);
        child.on("error", reject);
        child.stdin.on("error", () => {});
        child.on("close", (code) => {
          clearTimeout(timer);
          child.stdin.destroy();
          resolve({ code, output: output.replace(/\r\n/gu, "\n") });
        });
      });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/u.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/** Parses stdout as JSON, failing with the output in the message. */
export function parseJson<T = unknown>(result: RunResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch (error) {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr: ${result.stderr}`, { cause: error });
  }
}

/** Seconds since the epoch now. */
export function nowSeconds(): number {
  return Date.now() / 1000;
}

/** Matches any ANSI escape sequence. */
// eslint-disable-next-line no-control-regex
export const ANSI = /\u001b\[/u;
