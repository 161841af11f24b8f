/**
 * A temp THREADLINE_HOME and a temp SQLite file seeded through the public API, and
 * `threadline` run on them as a user would: in process by default (`runCli`, the code the
 * bin runs, with pipes: {@link TempHome.run}), or as a child process on a pseudo-terminal
 * (`script`) for the prompts and progress bars ({@link TempHome.runInTerminal}) or with pipes
 * for a process-wide setting ({@link TempHome.runChild}).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSessionDB, type SessionDB } from "../../../src/index.js";
import { builtCli, runChild, runInProcess, shellQuote, type RunResult } from "../cli-run.js";

export type { RunResult } from "../cli-run.js";

/** A temp data home with a database file in it. */
export interface TempHome {
  dir: string;
  home: string;
  db: string;
  /** The run's environment: THREADLINE_HOME set, THREADLINE_DB and FORCE_COLOR unset, NO_COLOR=1 unless overridden. */
  env(extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  /** Opens the database through the public API, runs `fill`, closes it. */
  seed<T>(fill: (db: SessionDB) => Promise<T>): Promise<T>;
  /**
   * Runs `threadline <args>` in process with pipes; `input` is written to stdin, which is then
   * closed (unless `keepStdinOpen`).
   */
  run(args: string[], options?: { input?: string; env?: Record<string, string | undefined>; keepStdinOpen?: boolean; timeoutMs?: number }): Promise<RunResult>;
  /**
   * {@link TempHome.run} as a child process (the built bin), for what needs a process of its
   * own (a time zone, TZ, other than this process's).
   */
  runChild(
    args: string[],
    options?: { input?: string; env?: Record<string, string | undefined>; keepStdinOpen?: boolean; timeoutMs?: number },
  ): Promise<RunResult>;
  /**
   * Runs `threadline <args>` (the built bin, as a child process) on a pseudo-terminal
   * (stdin, stdout and stderr all on it); when `waitFor` shows up, types `answer` + Enter.
   * Output is stdout and stderr together.
   */
  runInTerminal(
    args: string[],
    options?: { waitFor?: string; answer?: string; env?: Record<string, string | undefined>; timeoutMs?: number },
  ): Promise<{ code: number | null; output: string }>;
  /** Removes the temp directory. */
  cleanup(): void;
}

/** Makes a temp home; call `cleanup()` after. */
export function makeTempHome(): TempHome {
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
      const { env: extra, ...rest } = options;
      return runInProcess(args, env(extra), rest);
    },
    runChild(args, options = {}) {
      const { env: extra, ...rest } = options;
      return runChild(builtCli(), args, env(extra), rest);
    },
    runInTerminal(args, options = {}) {
      return new Promise((resolve, reject) => {
        const command = [...builtCli(), ...args].map(shellQuote).join(" ");
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
