/**
 * `openSessionDB(target)`: the one place that picks a backend from a target string.
 *
 * @module
 */
import type { SessionDB } from "./contract.js";
import { defaultDatabasePath } from "./data-home.js";
import { InvalidInputError } from "./errors.js";

/** Options for {@link openSessionDB} that apply to the SQLite backend. */
export interface OpenSessionDBOptions {
  /** SQLite durability (default `FULL`). */
  synchronous?: "FULL" | "NORMAL" | "OFF";
  /** How long a write waits for another process's lock before failing (default 30,000 ms). */
  lockTimeoutMs?: number;
}

/**
 * Opens a session database.
 *
 * - nothing: `$THREADLINE_DB` if set, else `state.db` in the data home
 *   (`$THREADLINE_HOME`, else `~/.threadline`);
 * - a file path: SQLite at that path (created if missing).
 *
 * @example
 * const db = await openSessionDB();               // ~/.threadline/state.db
 * const tmp = await openSessionDB("/tmp/t.db");   // an explicit file
 */
export async function openSessionDB(target?: string, options: OpenSessionDBOptions = {}): Promise<SessionDB> {
  const fromEnv = process.env["THREADLINE_DB"];
  const chosen = target ?? (fromEnv !== undefined && fromEnv.trim() !== "" ? fromEnv : defaultDatabasePath());
  if (typeof chosen !== "string" || chosen.trim() === "") {
    throw new InvalidInputError("The database target is empty; pass a file path.", { field: "target" });
  }
  if (/^postgres(ql)?:\/\//iu.test(chosen)) {
    throw new InvalidInputError(
      "PostgreSQL targets are not supported by this version of Threadline yet; pass a SQLite file path.",
      { field: "target" },
    );
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(chosen) && !/^file:\/\//iu.test(chosen)) {
    throw new InvalidInputError(`Unknown database URL scheme in "${chosen}"; pass a SQLite file path.`, { field: "target" });
  }
  const path = chosen.replace(/^file:\/\//iu, "");
  const { SqliteSessionDB } = await import("./sqlite/index.js");
  return SqliteSessionDB.open({ path, ...options });
}
