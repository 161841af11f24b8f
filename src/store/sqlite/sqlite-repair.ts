/**
 * `threadline doctor --repair` on a SQLite file: copies every readable row into a fresh
 * file made by the normal migrations, rebuilds the search index there, and keeps the
 * damaged file as `<file>.damaged-<timestamp>`. Nothing is written to the damaged file
 * (beyond SQLite's own checkpoint of its WAL when the reading connection closes).
 *
 * @module
 */
import type Database from "better-sqlite3";
import { Database as SqliteDatabase } from "./sqlite-driver.js";
import { existsSync, renameSync, rmSync, statfsSync } from "node:fs";
import type { RepairReport } from "../doctor-report.js";
import { ConflictError, StoreError } from "../errors.js";
import { openSqliteConnection, type SqliteConnection } from "./sqlite-connection.js";
import { fileSize, message, requireFile } from "./sqlite-doctor.js";
import { isSqliteBusy, isSqliteCorrupt } from "./sqlite-errors.js";
import { columnsOf, indexedIds, salvageRowidTable, salvageWholeTable } from "./sqlite-salvage.js";
import { INDEX_WATERMARK_KEY, indexPending } from "./sqlite-search-index.js";

/** A file name stamp: `20260314T101500Z`. */
function stamp(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/gu, "")
    .replace(/\.\d+Z$/u, "Z");
}

/** Options of {@link repairSqlite}. */
export interface SqliteRepairOptions {
  /** When the repair runs (names the backup; default now). */
  now?: Date;
}

/**
 * Salvages a damaged SQLite file: copies every readable session, message and other row into
 * a fresh database (the normal migrations), rebuilds the search index there, moves the
 * damaged file (and its `-wal`/`-shm`) to `<file>.damaged-<timestamp>` and puts the fresh
 * file in its place. Refuses while another process holds the database.
 *
 * @throws {NotFoundError} when there is no file at `path`.
 * @throws {ConflictError} when another process has the database open.
 */
export async function repairSqlite(path: string, options: SqliteRepairOptions = {}): Promise<RepairReport> {
  requireFile(path);
  const at = options.now ?? new Date();
  const backup = `${path}.damaged-${stamp(at)}`;
  const fresh = `${path}.repair-${stamp(at)}`;
  for (const file of [backup, fresh]) {
    if (existsSync(file)) throw new ConflictError(`${file} already exists; move it away and run the repair again.`);
  }
  const need = fileSize(path) + fileSize(`${path}-wal`);
  const free = (() => {
    try {
      const fs = statfsSync(path);
      return fs.bavail * fs.bsize;
    } catch {
      return null;
    }
  })();
  if (free !== null && free < need) {
    throw new StoreError(
      `The fresh copy needs up to ${need} bytes beside ${path}, but the disk has ${free} free. Free some space (or copy the file to a bigger disk) and run the repair again.`,
    );
  }
  const source = new SqliteDatabase(path, { fileMustExist: true, timeout: 0 });
  let freshConn: SqliteConnection | null = null;
  try {
    holdExclusively(source, path);
    freshConn = await openSqliteConnection({ path: fresh, synchronous: "FULL", busyTimeoutMs: 50, lockTimeoutMs: 30_000 });
    const report = copyEverything(source, freshConn, path, backup);
    freshConn.db.close();
    freshConn = null;
    try {
      if (source.inTransaction) source.exec("ROLLBACK");
    } catch {
      // A damaged file may fail even this; the file is set aside next.
    }
    source.close();
    swapIn(path, fresh, backup);
    return report;
  } catch (error) {
    freshConn?.db.close();
    if (source.open) source.close();
    if (!(error instanceof SwapError)) for (const suffix of ["", "-wal", "-shm"]) rmSync(`${fresh}${suffix}`, { force: true });
    throw error;
  }
}

/** The fresh file could not be put in place; it is kept, and the message says where everything is. */
class SwapError extends StoreError {}

/**
 * Sets the damaged file aside with its WAL and shared-memory files, then renames the fresh
 * one into place (each rename atomic). When a rename fails, the damaged file goes back where
 * it was and the fresh copy is kept beside it.
 */
function swapIn(path: string, fresh: string, backup: string): void {
  let setAside = false;
  try {
    renameSync(path, backup);
    setAside = true;
    for (const suffix of ["-wal", "-shm"]) {
      if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${backup}${suffix}`);
    }
    renameSync(fresh, path);
  } catch (error) {
    if (setAside && !existsSync(path)) {
      try {
        renameSync(backup, path);
        for (const suffix of ["-wal", "-shm"]) {
          if (existsSync(`${backup}${suffix}`)) renameSync(`${backup}${suffix}`, `${path}${suffix}`);
        }
      } catch {
        // Reported below: the message names both files.
      }
    }
    throw new SwapError(
      `The repaired copy is ready at ${fresh}, but it could not replace ${path} (${message(error)}). ` +
        `The damaged file is at ${existsSync(path) ? path : backup}; move the copy into place by hand once the cause is fixed.`,
      { cause: error },
    );
  }
}

/** Takes the database's exclusive lock for the whole repair; another process holding it open is a refusal. */
function holdExclusively(db: Database.Database, path: string): void {
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    if (isSqliteBusy(error)) {
      throw new ConflictError(
        `Another process has ${path} open (a running "threadline serve", "threadline chat" or an app using it). Stop it, then run the repair again.`,
        { cause: error },
      );
    }
    // A file too damaged to lock cannot be in use either: salvage what can be read.
    if (!isSqliteCorrupt(error)) throw new StoreError(`Could not lock ${path} for the repair: ${message(error)}.`, { cause: error });
  }
}

/** Tables copied first (what others point at comes first), then any other table of the schema. */
const ORDER = ["sessions", "messages", "meta", "routes", "identity_aliases", "inbound_queue", "session_leases", "handoffs", "executions", "execution_counts"];

function copyEverything(source: Database.Database, target: SqliteConnection, location: string, backup: string): RepairReport {
  const report: RepairReport = {
    location,
    backup,
    copied: { sessions: 0, messages: 0, other: {} },
    unreadable: [],
    unreadableTables: [],
    lostSessionIds: [],
    lostMessages: [],
    recreatedSessionIds: [],
    dropped: {},
    indexed: 0,
  };
  const db = target.db;
  const tables = db
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'messages_fts%'")
    .all() as Array<{ name: string; sql: string }>;
  tables.sort((a, b) => (ORDER.indexOf(a.name) + 1 || 99) - (ORDER.indexOf(b.name) + 1 || 99));
  db.pragma("foreign_keys = OFF");
  db.exec("BEGIN IMMEDIATE");
  try {
    for (const { name, sql } of tables) {
      const targetColumns = db.prepare("SELECT name FROM pragma_table_info(?)").pluck().all(name) as string[];
      const sourceColumns = columnsOf(source, name);
      if (sourceColumns === null) {
        // Missing in an older file is normal; unreadable schema is reported.
        if (tableExists(source, name) !== false) report.unreadableTables.push(name);
        continue;
      }
      const columns = targetColumns.filter((c) => sourceColumns.includes(c));
      const insert = db.prepare(`INSERT OR IGNORE INTO "${name}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
      let n = 0;
      const copy = (row: Record<string, unknown>): void => {
        n += insert.run(...columns.map((c) => row[c])).changes;
      };
      // Rowid tables are copied as they are read (memory holds one batch; media chunks, 8 at a time).
      const salvage = /WITHOUT\s+ROWID/iu.test(sql)
        ? salvageWholeTable(source, name, columns)
        : salvageRowidTable(source, name, columns, { sink: copy, batchRows: name === "media_chunks" ? 8 : undefined });
      if (!salvage.readable) report.unreadableTables.push(name);
      else report.unreadable.push(...salvage.unreadable);
      // The search index is rebuilt here from scratch.
      for (const row of salvage.rows) if (name !== "meta" || row["key"] !== INDEX_WATERMARK_KEY) copy(row);
      if (name === "sessions") report.copied.sessions = n;
      else if (name === "messages") report.copied.messages = n;
      else report.copied.other[name] = n;
    }
    copySequences(source, db);
    nameTheLost(source, db, report);
    fixReferences(db, report);
    report.indexed = indexPending(target);
    db.exec("COMMIT");
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
  db.pragma("foreign_keys = ON");
  return report;
}

function tableExists(db: Database.Database, name: string): boolean | null {
  try {
    return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  } catch {
    return null;
  }
}

/** Keeps AUTOINCREMENT counters where they were, so no id is ever handed out twice. */
function copySequences(source: Database.Database, db: Database.Database): void {
  let rows: Array<{ name: string; seq: number }>;
  try {
    rows = source.prepare("SELECT name, seq FROM sqlite_sequence").all() as Array<{ name: string; seq: number }>;
  } catch {
    return;
  }
  for (const { name, seq } of rows) {
    const current = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = ?").pluck().get(name) as number | undefined;
    if (current === undefined) db.prepare("INSERT INTO sqlite_sequence(name, seq) VALUES (?, ?)").run(name, seq);
    else if (seq > current) db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = ?").run(seq, name);
  }
}

/** Names the sessions and messages that were lost, from the damaged file's indexes (when they are intact). */
function nameTheLost(source: Database.Database, db: Database.Database, report: RepairReport): void {
  const damagedTables = new Set(report.unreadable.map((u) => u.table).concat(report.unreadableTables));
  if (damagedTables.has("sessions")) {
    const ids = indexedIds<[string]>(source, "SELECT id FROM sessions INDEXED BY sqlite_autoindex_sessions_1 ORDER BY id");
    if (ids !== null) {
      const have = db.prepare("SELECT 1 FROM sessions WHERE id = ?");
      report.lostSessionIds = ids.map((r) => r[0]).filter((id) => have.get(id) === undefined);
    }
  }
  if (damagedTables.has("messages")) {
    const pairs = indexedIds<[string, number]>(source, "SELECT session_id, id FROM messages INDEXED BY messages_session ORDER BY session_id, id");
    if (pairs !== null) {
      const have = db.prepare("SELECT 1 FROM messages WHERE id = ?");
      const lost = new Map<string, number[]>();
      for (const [sessionId, id] of pairs) {
        if (have.get(id) !== undefined) continue;
        const list = lost.get(sessionId) ?? [];
        list.push(id);
        lost.set(sessionId, list);
      }
      report.lostMessages = [...lost].map(([sessionId, messageIds]) => ({ sessionId, messageIds }));
    }
  }
}

/**
 * After a lossy copy: messages whose session row was lost get a recreated session
 * (source `recovered`); counters of sessions that lost messages are recounted; other rows
 * that point at something lost are dropped (a session's lost parent is cleared).
 */
function fixReferences(db: Database.Database, report: RepairReport): void {
  const orphans = db
    .prepare(
      `SELECT session_id AS id, min(timestamp) AS first, max(timestamp) AS last FROM messages
        WHERE session_id NOT IN (SELECT id FROM sessions) GROUP BY session_id`,
    )
    .all() as Array<{ id: string; first: number; last: number }>;
  const recreate = db.prepare(
    `INSERT INTO sessions (id, source, started_at, last_active_at, chain_started_at, title)
     VALUES (?, 'recovered', ?, ?, ?, NULL)`,
  );
  for (const o of orphans) {
    recreate.run(o.id, o.first, o.last, o.first);
    report.recreatedSessionIds.push(o.id);
  }
  const touched = new Set<string>([...report.recreatedSessionIds, ...report.lostMessages.map((l) => l.sessionId)]);
  if (report.unreadable.some((u) => u.table === "messages") || report.unreadableTables.includes("messages")) {
    // Without the message index the affected sessions are unknown: recount every session.
    if (report.lostMessages.length === 0) for (const id of db.prepare("SELECT id FROM sessions").pluck().all() as string[]) touched.add(id);
  }
  const recount = db.prepare(
    `UPDATE sessions SET
       message_count   = (SELECT count(*) FROM messages WHERE session_id = sessions.id AND rewound_at IS NULL),
       tool_call_count = (SELECT coalesce(sum(tool_call_count), 0) FROM messages WHERE session_id = sessions.id AND rewound_at IS NULL),
       last_message_at = (SELECT max(timestamp) FROM messages WHERE session_id = sessions.id AND rewound_at IS NULL)
     WHERE id = ?`,
  );
  for (const id of touched) recount.run(id);
  db.prepare("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id IS NOT NULL AND parent_session_id NOT IN (SELECT id FROM sessions)").run();
  for (const [table, sql] of [
    ["handoffs", "DELETE FROM handoffs WHERE session_id NOT IN (SELECT id FROM sessions)"],
    // References of lost messages, and chunks of lost blobs (a lost chunk shows in `checkMedia({ verify: true })`).
    ["message_attachments", "DELETE FROM message_attachments WHERE message_id NOT IN (SELECT id FROM messages)"],
    ["media_chunks", "DELETE FROM media_chunks WHERE sha256 NOT IN (SELECT sha256 FROM media)"],
    ["executions", "DELETE FROM executions WHERE parent_id IS NOT NULL AND parent_id NOT IN (SELECT id FROM executions)"],
  ] as const) {
    const dropped = db.prepare(sql).run().changes;
    if (dropped > 0) report.dropped[table] = dropped;
  }
  const left = db.prepare("PRAGMA foreign_key_check").all();
  if (left.length > 0) throw new StoreError(`The repaired copy still has ${left.length} broken reference(s); nothing was changed.`);
}
