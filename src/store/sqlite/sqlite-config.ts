/**
 * Options of the SQLite backend.
 *
 * @module
 */
import { InvalidInputError } from "../errors.js";

/** How the SQLite backend opens its file. */
export interface SqliteConfig {
  /** The database file (created with its folder if missing). */
  path: string;
  /**
   * `FULL` (default): a write whose promise resolved survives power loss.
   * `NORMAL`: survives a crash of the process, may lose the last writes on power loss.
   */
  synchronous?: "FULL" | "NORMAL" | "OFF";
  /** How long SQLite itself waits for a lock before handing back to the async retry loop (default 50). */
  busyTimeoutMs?: number;
  /** How long a write keeps retrying while another process holds the lock (default 30,000). */
  lockTimeoutMs?: number;
}

/** Fills the defaults of a {@link SqliteConfig}. */
export function resolveSqliteConfig(config: SqliteConfig): Required<SqliteConfig> {
  if (config === null || typeof config !== "object" || typeof config.path !== "string" || config.path.trim() === "") {
    throw new InvalidInputError("The SQLite config needs a non-empty file path.", { field: "path" });
  }
  if (config.synchronous !== undefined && !["FULL", "NORMAL", "OFF"].includes(config.synchronous)) {
    throw new InvalidInputError(`synchronous must be "FULL", "NORMAL" or "OFF", not "${String(config.synchronous)}".`, {
      field: "synchronous",
    });
  }
  for (const field of ["busyTimeoutMs", "lockTimeoutMs"] as const) {
    const value = config[field];
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value) || value < 0)) {
      throw new InvalidInputError(`${field} must be a number of milliseconds, 0 or more.`, { field });
    }
  }
  return {
    path: config.path,
    synchronous: config.synchronous ?? "FULL",
    busyTimeoutMs: config.busyTimeoutMs ?? 50,
    lockTimeoutMs: config.lockTimeoutMs ?? 30_000,
  };
}
