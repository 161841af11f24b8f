/**
 * Options of the SQLite backend.
 *
 * @module
 */

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
  return {
    path: config.path,
    synchronous: config.synchronous ?? "FULL",
    busyTimeoutMs: config.busyTimeoutMs ?? 50,
    lockTimeoutMs: config.lockTimeoutMs ?? 30_000,
  };
}
