/**
 * One timed run of a short command: wall time from spawn to exit of a child process
 * (stdout discarded, stderr kept for the error message), and the environment the
 * measured `threadline` runs in.
 *
 * @module
 */
import { spawn } from "node:child_process";

/** Settings of the parent that would point a child at another database, config, model or preload. */
const SCRUBBED_ENV = ["THREADLINE_HOME", "THREADLINE_DB", "THREADLINE_CONFIG", "THREADLINE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "NODE_OPTIONS"];

/** The parent's environment minus Threadline/OpenAI settings and NODE_OPTIONS, plus `extra`. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED_ENV) delete env[name];
  return Object.assign(env, extra);
}

/** A command bench:cli times: `node` with these arguments. */
export interface TimedCommand {
  /** Its key in the report (`version`, `sessions_list`, …). */
  name: string;
  /** Arguments of `node` (process.execPath). */
  args: readonly string[];
}

/**
 * Runs `node ...args` and returns the ms from just before spawn to its exit.
 *
 * @throws when it exits non-zero or by a signal (with the end of its stderr).
 */
export function timeCommand(command: TimedCommand, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    let stderr = "";
    const started = performance.now();
    const child = spawn(process.execPath, command.args, { env, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`${command.name} (node ${command.args.join(" ")}) ended with ${signal ?? `exit ${code}`}:\n${stderr}`));
    });
  });
}
