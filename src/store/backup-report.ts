/**
 * What `threadline db backup` (the store's `backupDatabase`) reports about the copy it
 * made.
 *
 * @module
 */

/** The report of a finished backup: where the copy is and what it holds. */
export interface BackupReport {
  backend: "sqlite";
  /** The database that was copied (absolute path). */
  source: string;
  /** The backup file (absolute path). */
  path: string;
  /** The backup file's size in bytes. */
  bytes: number;
  /** The copy's schema version (`PRAGMA user_version`), equal to the source's. */
  schemaVersion: number;
  /** Sessions in the copy. */
  sessions: number;
  /** Messages in the copy. */
  messages: number;
  /**
   * Stored attachments (media blobs) in the copy, and their bytes. They live inside the
   * database file, so the one file holds them: nothing else needs copying.
   */
  attachments: { count: number; bytes: number };
  /** Database pages copied (the last pass). */
  pages: number;
  /**
   * How many times SQLite's online backup started over because another process wrote to the
   * database meanwhile (after the first, the rest is copied in one step: see sqlite-backup.ts).
   */
  restarts: number;
  /** Whether an existing file at `path` was replaced (`--force`). */
  replaced: boolean;
  /** How long the backup took, verification included, in milliseconds. */
  elapsedMs: number;
}

/** Options of `backupDatabase` (database-backup.ts). */
export interface BackupOptions {
  /** Replace an existing file at the destination (default false: refused). */
  force?: boolean;
  /**
   * Called between the steps of the copy with the pages copied so far in this pass and the
   * database's page count (both restart at 0 when the backup starts over).
   */
  onProgress?: (copiedPages: number, totalPages: number) => void;
  /**
   * Pages copied per step while nobody else writes (default 4,096: 16 MiB at 4 KiB pages); the
   * event loop gets a turn between steps. After a restart the rest goes in one step whatever this is.
   */
  pagesPerStep?: number;
  /**
   * Stops the backup (Ctrl-C): checked between steps and before the copy is renamed into place;
   * the temp copy is removed and nothing is written at the destination (`InterruptedError`).
   */
  signal?: AbortSignal;
}
