/**
 * Two ways the CLI tests run `threadline`:
 *
 * - in process (the default, {@link runInProcess} / {@link startInProcess}): `runCli`, the
 *   code the bin runs, on in-memory pipes (not terminals) and an environment of the test's
 *   choosing: the same output and exit code as a child process with pipes, in milliseconds,
 *   always on the current source (no build needed);
 * - as a child process, for what needs a real process (a pseudo-terminal, tmux, signals, a
 *   closed pipe, the process's exit code, a time zone): the built bin ({@link builtCli}),
 *   which must be at least as new as every file in src/ (a stale build fails, saying to run
 *   `npm run build`, instead of testing old code).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { createRequire } from "node:module";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { CliIo } from "../../src/cli/cli-output.js";
import { runCli } from "../../src/cli/program.js";

/** The built bin (`npm run build` first; `npm test` does). */
export const BIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

const SRC = fileURLToPath(new URL("../../src", import.meta.url));

/** The newest file under `dir` (path and modification time). */
function newestFile(dir: string): { path: string; mtimeMs: number } {
  let newest = { path: dir, mtimeMs: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const candidate = entry.isDirectory() ? newestFile(path) : { path, mtimeMs: statSync(path).mtimeMs };
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}

let checkedBuild = false;

/**
 * The command line of the built bin, `[node, dist/cli/main.js]`, for the tests that need a
 * process. Throws when there is no build, or when a file in src/ changed after it (the test
 * would run old code): run `npm run build` (npm test does).
 */
export function builtCli(): readonly string[] {
  if (!checkedBuild) {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run "npm run build" before the CLI's child-process tests (npm test does).`);
    const built = statSync(BIN).mtimeMs;
    const newest = newestFile(SRC);
    if (newest.mtimeMs > built) {
      throw new Error(`${BIN} is older than ${newest.path}: the build is stale. Run "npm run build" before the CLI's child-process tests (npm test does).`);
    }
    checkedBuild = true;
  }
  return [process.execPath, BIN];
}

/** `node --import tsx`: node that runs TypeScript sources (append a file, or `-e`). */
export const NODE_WITH_TSX: readonly string[] = [process.execPath, "--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];

/** Quotes a word for sh. */
export function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/u.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/** What a finished run printed, and its exit code. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A stream that keeps what is written to it as text. */
class TextSink extends Writable {
  #text = "";
  readonly #decoder = new StringDecoder("utf8");
  readonly #listeners = new Set<() => void>();

  constructor() {
    super({ decodeStrings: false });
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#text += typeof chunk === "string" ? chunk : this.#decoder.write(chunk);
    for (const listener of this.#listeners) listener();
    done();
  }

  /** Everything written so far. */
  get text(): string {
    return this.#text;
  }

  /** Calls `listener` after every write; returns the unsubscribe. */
  onWrite(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** A run started in process: its stdin, what it printed so far, and its end. */
export interface InProcessRun {
  /** The run's stdin (a pipe: write lines, `end()` for end of input). */
  stdin: PassThrough;
  /** What it has written to stdout and stderr so far. */
  stdout(): string;
  stderr(): string;
  /** The run's SIGINT/SIGTERM: `signals.emit("SIGINT")` is a Ctrl-C from outside. */
  signals: EventEmitter;
  /**
   * Resolves once `probe` holds (checked now and after every write to stdout or stderr);
   * rejects with the output so far after `timeoutMs`, or when the run ends first.
   */
  waitFor(what: string, probe: () => boolean, options?: { timeoutMs?: number }): Promise<void>;
  /** The run's end: the exit code runCli returned and everything printed. */
  done: Promise<RunResult>;
}

/**
 * Variables that act on the whole process rather than through the io (the time zone of
 * `Date` and `Intl`): a run that needs another value runs as a child process.
 */
const PROCESS_WIDE = ["TZ"] as const;

/**
 * Starts `threadline <args>` in this process: `runCli` with stdin, stdout and stderr on
 * in-memory pipes (not terminals, like a child process's pipes) and `env` as its whole
 * environment.
 */
export function startInProcess(args: readonly string[], env: NodeJS.ProcessEnv): InProcessRun {
  for (const name of PROCESS_WIDE) {
    if (env[name] !== process.env[name]) {
      throw new Error(
        `${name}=${env[name] ?? "(unset)"} cannot apply to one run in this process (${name} is process-wide); run threadline as a child process for it.`,
      );
    }
  }
  const stdin = new PassThrough();
  const stdout = new TextSink();
  const stderr = new TextSink();
  const signals = new EventEmitter();
  const io: CliIo = { stdin, stdout, stderr, env, signals, now: () => Date.now() / 1000, exitCode: 0 };
  const done = runCli(args, io).then(
    (code): RunResult => ({ code, stdout: stdout.text, stderr: stderr.text }),
    (error: unknown) => {
      throw new Error(`threadline ${args.join(" ")} threw instead of returning an exit code\nstdout: ${stdout.text}\nstderr: ${stderr.text}`, { cause: error });
    },
  );
  // A command that did not read all of its input leaves nothing waiting on it.
  void done.finally(() => stdin.destroy()).catch(() => {});
  const waitFor = (what: string, probe: () => boolean, { timeoutMs = 20_000 }: { timeoutMs?: number } = {}): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const state = (): string => `\nstdout:\n${stdout.text}\nstderr:\n${stderr.text}`;
      const cleanups: Array<() => void> = [];
      let settled = false;
      const settle = (error: Error | null): void => {
        if (settled) return;
        settled = true;
        for (const cleanup of cleanups) cleanup();
        if (error === null) resolve();
        else reject(error);
      };
      const check = (): void => {
        if (probe()) settle(null);
      };
      cleanups.push(stdout.onWrite(check), stderr.onWrite(check));
      const timer = setTimeout(() => settle(new Error(`threadline ${args.join(" ")} never showed ${what} in ${timeoutMs} ms${state()}`)), timeoutMs);
      cleanups.push(() => clearTimeout(timer));
      void done.then(
        () => {
          if (!probe()) settle(new Error(`threadline ${args.join(" ")} ended before showing ${what}${state()}`));
        },
        () => {},
      );
      check();
    });
  return { stdin, stdout: () => stdout.text, stderr: () => stderr.text, signals, waitFor, done };
}

/**
 * Runs `threadline <args>` in this process ({@link startInProcess}); `input` is written to
 * stdin, which is then closed (left open with `keepStdinOpen`: a command that waited for it
 * would time out). Fails after `timeoutMs` (default 60 s) with what was printed so far.
 */
export async function runInProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { input?: string; keepStdinOpen?: boolean; timeoutMs?: number } = {},
): Promise<RunResult> {
  const run = startInProcess(args, env);
  if (options.input !== undefined) run.stdin.write(options.input);
  if (!options.keepStdinOpen) run.stdin.end();
  const timeoutMs = options.timeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`threadline ${args.join(" ")} did not finish in ${timeoutMs} ms (hung?)\nstdout: ${run.stdout()}\nstderr: ${run.stderr()}`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([run.done, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `<command> <args>` as a child process with pipes (`command`: {@link builtCli}); `input` is written to stdin, which is then
 * closed (unless `keepStdinOpen`). Killed and failed after `timeoutMs` (default 60 s).
 */
export function runChild(
  command: readonly string[],
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { input?: string; keepStdinOpen?: boolean; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, [...command.slice(1), ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
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
}
