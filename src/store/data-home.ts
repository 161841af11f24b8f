/**
 * Where Threadline keeps its data: `~/.threadline/` unless `THREADLINE_HOME` is set.
 *
 * @module
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** The data home directory: `$THREADLINE_HOME`, else `~/.threadline`. */
export function threadlineHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env["THREADLINE_HOME"];
  return fromEnv && fromEnv.trim() !== "" ? resolve(fromEnv) : join(homedir(), ".threadline");
}

/** The default database file: `state.db` in the data home. */
export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(threadlineHome(env), "state.db");
}
