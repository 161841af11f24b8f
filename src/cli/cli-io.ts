/**
 * What a `threadline` command takes from its process ({@link CliIo}), and {@link processIo},
 * the process's own. Kept apart from the output helpers (cli-output.ts, which loads
 * `string-width`) so the program table loads without them.
 *
 * @module
 */
/** The process signals a command may react to (the bin: `process`; an in-process run: any emitter). */
export interface SignalSource {
  on(signal: "SIGINT" | "SIGTERM" | "SIGHUP", listener: () => void): unknown;
  once(signal: "SIGINT" | "SIGTERM" | "SIGHUP", listener: () => void): unknown;
  off(signal: "SIGINT" | "SIGTERM" | "SIGHUP", listener: () => void): unknown;
}

/**
 * Everything a command takes from its process: the three streams (with `isTTY`, `columns`
 * and raw mode where the stream is a terminal), the environment, the clock, the signals, and
 * the exit code it ends with. The bin passes {@link processIo}; tests pass their own streams
 * and environment and run the same program in process (`runCli` in program.ts). Commands
 * never touch `process.stdout`, `process.env`, `process.exitCode` … directly.
 */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; hasColors?(count?: number, env?: NodeJS.ProcessEnv): boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; hasColors?(count?: number, env?: NodeJS.ProcessEnv): boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  /** The environment (THREADLINE_HOME, THREADLINE_DB, THREADLINE_CONFIG, NO_COLOR, FORCE_COLOR, provider settings, …). */
  env: NodeJS.ProcessEnv;
  /** "Now" in epoch seconds (tests pin it). */
  now(): number;
  /** SIGINT, SIGTERM and SIGHUP (a chat stops its reply, ends its session and leaves on each). */
  signals: SignalSource;
  /**
   * The exit code the run ends with when no error is thrown (as `process.exitCode`: a command
   * that reports a failure without an error, such as `doctor` finding damage, sets it).
   * `runCli` starts it at 0 and returns it.
   */
  exitCode: number;
}

/** The process's own streams, environment, signals and exit code. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    now: () => Date.now() / 1000,
    signals: process,
    get exitCode(): number {
      return typeof process.exitCode === "number" ? process.exitCode : 0;
    },
    set exitCode(code: number) {
      process.exitCode = code;
    },
  };
}
