/**
 * What `threadline doctor` finds out about a database, and what a repair did: the shapes
 * both backends fill (see {@link diagnoseDatabase} and {@link repairDatabase}).
 *
 * @module
 */

/**
 * The media check (`SessionDB.checkMedia`): that every attachment reference resolves to a
 * stored blob. Made through the store once the other checks allow opening it (the schema is
 * this Threadline's, the file is intact, the server answers); otherwise `ok` is `null` and
 * `skipped` says why.
 */
export interface MediaDoctorCheck {
  /** `true`: every reference resolves (and, verified, every blob hashes to its id); `false`: see `problems`; `null`: not checked. */
  ok: boolean | null;
  /** Why the check did not run, or `null`. */
  skipped: string | null;
  /** Whether every blob was re-hashed (`doctor --verify-media`). */
  verified: boolean;
  /** Blobs stored, and their bytes. */
  blobs: number;
  bytes: number;
  /** Attachment references in messages. */
  references: number;
  /** References whose blob is not stored, in all; `missing` lists up to 100 (session, message, blob). */
  missingCount: number;
  missing: Array<{ sessionId: string; messageId: number; sha256: string }>;
  /** Blobs nothing refers to (not a problem: the sweep removes them once past the grace period). */
  unreferenced: number;
  /** Blobs whose bytes no longer hash to their id (only when verified; up to 100). */
  corrupt: string[];
  /** The media problems, one sentence each (also in the report's `problems`). */
  problems: string[];
}

/** The health of a SQLite database file. */
export interface SqliteDoctorReport {
  backend: "sqlite";
  /** The file. */
  location: string;
  /** True when no check found a problem. */
  healthy: boolean;
  /** Every problem found, one sentence each (empty when healthy). */
  problems: string[];
  /** `PRAGMA user_version`, or `null` when it could not be read. */
  schemaVersion: number | null;
  /** The schema version this Threadline writes. */
  supportedSchemaVersion: number;
  /** `PRAGMA integrity_check`: `ok`, or up to 100 of SQLite's findings. */
  integrity: { ok: boolean; findings: string[] };
  /**
   * The full-text index: FTS5's own `integrity-check` (`ok` is `null` when it could not run
   * because another process held the write lock), and how far it has caught up
   * (`indexedUpTo`, the watermark, against `newestMessageId`; a lag is normal, the next
   * search catches up).
   */
  searchIndex: { ok: boolean | null; finding: string | null; indexedUpTo: number | null; newestMessageId: number | null };
  /** The write-ahead log: journal mode, the `-wal` file's size and the frames a checkpoint would move into the file. */
  wal: { journalMode: string | null; walBytes: number; walFrames: number };
  /** Space: the file, its free pages, and the disk's free space where the file is. */
  space: {
    fileBytes: number;
    pageSize: number | null;
    pageCount: number | null;
    freelistPages: number | null;
    freelistBytes: number | null;
    diskFreeBytes: number | null;
  };
  /** Attachments: every reference resolves (see {@link MediaDoctorCheck}). */
  media: MediaDoctorCheck;
}

/** The health of a PostgreSQL target (repair is SQLite-only). */
export interface PostgresDoctorReport {
  backend: "postgres";
  /** The URL without its password. */
  location: string;
  healthy: boolean;
  problems: string[];
  /** Whether the server answered. */
  connected: boolean;
  /** The highest applied migration in the schema, or `null` (not connected, or not a Threadline schema yet). */
  schemaVersion: number | null;
  supportedSchemaVersion: number;
  /** The schema holding the tables. */
  schema: string;
  /** The server's view: its version, the database, its size, and data-checksum failures when the server counts them. */
  server: { version: string; database: string; databaseBytes: number; checksumFailures: number | null } | null;
  /** Attachments: every reference resolves (see {@link MediaDoctorCheck}). */
  media: MediaDoctorCheck;
}

/** What {@link diagnoseDatabase} returns. */
export type DoctorReport = SqliteDoctorReport | PostgresDoctorReport;

/** A run of rows a repair could not read. */
export interface UnreadableRange {
  /** The table. */
  table: string;
  /** The last rowid read before the damage (`null`: from the start). */
  afterRowid: number | null;
  /** The first rowid read after it (`null`: to the end). */
  beforeRowid: number | null;
}

/** What {@link repairDatabase} did. */
export interface RepairReport {
  /** The repaired file (now the fresh copy). */
  location: string;
  /** Where the damaged file went (`<file>.damaged-<timestamp>`, with `-wal`/`-shm` beside it when they existed). */
  backup: string;
  /** Rows copied: sessions, messages, and the other tables by name. */
  copied: { sessions: number; messages: number; other: Record<string, number> };
  /** Rowid ranges that could not be read, per table. */
  unreadable: UnreadableRange[];
  /** Tables that could not be read at all. */
  unreadableTables: string[];
  /** Sessions whose row could not be read (ids from the intact id index), when they could be named. */
  lostSessionIds: string[];
  /** Messages that could not be read, by session (from the intact message index), when they could be named. */
  lostMessages: Array<{ sessionId: string; messageIds: number[] }>;
  /** Sessions whose row was lost but whose messages were read: recreated with source `recovered`. */
  recreatedSessionIds: string[];
  /** Rows dropped because what they point at was lost (e.g. a handoff of a lost session), by table. */
  dropped: Record<string, number>;
  /** Messages put into the fresh search index. */
  indexed: number;
}
