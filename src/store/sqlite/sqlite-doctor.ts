/**
 * `threadline doctor` on a SQLite file: the checks (integrity, the FTS5 index, schema
 * version, WAL, free space) and the salvage repair, which copies every readable row into a
 * fresh file made by the normal migrations, rebuilds the search index there, and keeps the
 * damaged file as `<file>.damaged-<timestamp>`.
 *
 * Reading survives damage: rows are read in rowid order a batch at a time, and a batch that
 * fails is narrowed down to the rows that can be read; the rowids in between are skipped and
 * reported. Nothing is ever written to the damaged file.
 *
 * @module
 */
import Database from "better-sqlite3";
import { existsSync, renameSync, rmSync, statSync, statfsSync } from "node:fs";
import type { RepairReport, SqliteDoctorReport, UnreadableRange } from "../doctor-report.js";
import { ConflictError, NotFoundError, StoreError } from "../errors.js";
import { openSqliteConnection, type SqliteConnection } from "./sqlite-connection.js";
import { isSqliteBusy, isSqliteCorrupt } from "./sqlite-errors.js";
import { SQLITE_SCHEMA_VERSION } from "./sqlite-migrations.js";
import { INDEX_WATERMARK_KEY, indexPending } from "./sqlite-search-index.js";

/** Rows read per batch while salvaging. */
const BATCH = 500;
/** The most integrity findings kept. */
const MAX_FINDINGS = 100;

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function requireFile(path: string): void {
  if (!existsSync(path)) throw new NotFoundError(`There is no database file at ${path}. Check --db (or THREADLINE_DB).`);
}

/** Runs `read`, turning a failure into `null` and a recorded problem. */
function attempt<T>(problems: string[], what: string, read: () => T): T | null {
  try {
    return read();
  } catch (error) {
    problems.push(`${what} failed: ${message(error)}.`);
    return null;
  }
}

/**
 * Checks a SQLite database file without changing it: `PRAGMA integrity_check`, the FTS5
 * index's `integrity-check`, the schema version, the WAL and free space.
 *
 * @throws {NotFoundError} when there is no file at `path`.
 */
export function diagnoseSqlite(path: string): SqliteDoctorReport {
  requireFile(path);
  const problems: string[] = [];
  const walBytes = fileSize(`${path}-wal`);
  const report: SqliteDoctorReport = {
    backend: "sqlite",
    location: path,
    healthy: false,
    problems,
    schemaVersion: null,
    supportedSchemaVersion: SQLITE_SCHEMA_VERSION,
    integrity: { ok: false, findings: [] },
    searchIndex: { ok: false, finding: null, indexedUpTo: null, newestMessageId: null },
    wal: { journalMode: null, walBytes, walFrames: 0 },
    space: { fileBytes: fileSize(path), pageSize: null, pageCount: null, freelistPages: null, freelistBytes: null, diskFreeBytes: null },
  };
  report.space.diskFreeBytes = attempt(problems, "Reading the disk's free space", () => {
    const fs = statfsSync(path);
    return fs.bavail * fs.bsize;
  });
  let db: Database.Database;
  try {
    // Read-write only because FTS5's integrity check is an INSERT command; it runs inside a
    // transaction that is rolled back, and nothing else writes.
    db = new Database(path, { fileMustExist: true, timeout: 5000 });
  } catch (error) {
    problems.push(`The file cannot be opened: ${message(error)}.`);
    return report;
  }
  try {
    const pragma = (name: string): number | null => attempt(problems, `Reading ${name}`, () => db.pragma(name, { simple: true }) as number);
    report.schemaVersion = pragma("user_version");
    report.space.pageSize = pragma("page_size");
    report.space.pageCount = pragma("page_count");
    report.space.freelistPages = pragma("freelist_count");
    if (report.space.pageSize !== null && report.space.freelistPages !== null) {
      report.space.freelistBytes = report.space.pageSize * report.space.freelistPages;
    }
    report.wal.journalMode = attempt(problems, "Reading the journal mode", () => db.pragma("journal_mode", { simple: true }) as string);
    if (walBytes > 32 && report.space.pageSize !== null) report.wal.walFrames = Math.floor((walBytes - 32) / (report.space.pageSize + 24));
    if (report.schemaVersion !== null && report.schemaVersion > SQLITE_SCHEMA_VERSION) {
      problems.push(`The schema version is ${report.schemaVersion}, newer than this Threadline's ${SQLITE_SCHEMA_VERSION}: upgrade Threadline.`);
    }
    report.integrity = checkIntegrity(db);
    if (!report.integrity.ok) {
      const count = report.integrity.findings.length;
      problems.push(`The integrity check found ${count}${count >= MAX_FINDINGS ? "+" : ""} problem(s), e.g. ${report.integrity.findings[0] ?? "unknown"}.`);
    }
    checkSearchIndex(db, report);
  } finally {
    if (db.inTransaction) db.exec("ROLLBACK");
    db.close();
  }
  report.healthy = problems.length === 0;
  return report;
}

/**
 * `PRAGMA integrity_check`; when SQLite gives up on the whole file (a page it cannot even
 * parse), each table is checked on its own, so the findings name the damaged tables.
 */
function checkIntegrity(db: Database.Database): { ok: boolean; findings: string[] } {
  try {
    const rows = db.prepare(`PRAGMA integrity_check(${MAX_FINDINGS})`).pluck().all() as string[];
    const findings = rows.filter((f) => f !== "ok");
    return { ok: findings.length === 0, findings };
  } catch (whole) {
    let tables: string[];
    try {
      tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name").pluck().all() as string[];
    } catch {
      return { ok: false, findings: [`the file cannot be checked: ${message(whole)}`] };
    }
    const findings: string[] = [];
    for (const table of tables) {
      try {
        const rows = db.prepare(`PRAGMA integrity_check("${table.replaceAll('"', '""')}")`).pluck().all() as string[];
        for (const f of rows) if (f !== "ok") findings.push(`table ${table}: ${f}`);
      } catch (error) {
        findings.push(`table ${table}: ${message(error)}`);
      }
      if (findings.length >= MAX_FINDINGS) break;
    }
    if (findings.length === 0) findings.push(message(whole));
    return { ok: false, findings: findings.slice(0, MAX_FINDINGS) };
  }
}

function checkSearchIndex(db: Database.Database, report: SqliteDoctorReport): void {
  const problems = report.problems;
  const hasFts = attempt(problems, "Looking for the search index", () => db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'").get() !== undefined);
  if (hasFts === null) return;
  if (!hasFts) {
    // A database before the search migration: nothing to check (the next open adds it).
    report.searchIndex.ok = report.schemaVersion !== null && report.schemaVersion < 2;
    if (!report.searchIndex.ok) problems.push("The search index table messages_fts is missing.");
    return;
  }
  report.searchIndex.ok = null;
  try {
    // FTS5's integrity check is an INSERT command that reads only; rolled back all the same.
    db.exec("BEGIN");
    try {
      db.prepare("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 0)").run();
    } finally {
      db.exec("ROLLBACK");
    }
    report.searchIndex.ok = true;
  } catch (error) {
    if (isSqliteBusy(error)) {
      // The check takes the write lock (and gives it back untouched); a busy writer is not damage.
      report.searchIndex.finding = "not checked: another process held the write lock; run doctor again when it is idle";
    } else {
      report.searchIndex.ok = false;
      report.searchIndex.finding = message(error);
      problems.push(`The search index is damaged (${message(error)}); a repair rebuilds it.`);
    }
  }
  report.searchIndex.indexedUpTo = attempt(problems, "Reading the search index watermark", () => {
    const value = db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(INDEX_WATERMARK_KEY) as string | undefined;
    return value === undefined ? 0 : Number(value);
  });
  report.searchIndex.newestMessageId = attempt(problems, "Reading the newest message id", () => (db.prepare("SELECT max(id) FROM messages").pluck().get() as number | null) ?? 0);
}

// --- repair --------------------------------------------------------------------

/** What reading one table salvaged. */
interface Salvage {
  rows: Array<Record<string, unknown>>;
  unreadable: UnreadableRange[];
  /** False when nothing of the table could be read. */
  readable: boolean;
}

/**
 * Reads every readable row of a rowid table in rowid order, `BATCH` at a time; around a
 * batch that fails, narrows down to the readable rows and skips the damaged rowid range.
 */
function salvageRowidTable(db: Database.Database, table: string, columns: string[]): Salvage {
  const list = columns.map((c) => `"${c}"`).join(", ");
  const read = db.prepare(`SELECT rowid AS __rowid, ${list} FROM "${table}" WHERE rowid >= ? ORDER BY rowid LIMIT ?`);
  const firstAtOrAfter = db.prepare(`SELECT rowid FROM "${table}" WHERE rowid >= ? ORDER BY rowid LIMIT 1`).pluck();
  const rows: Array<Record<string, unknown>> = [];
  const unreadable: UnreadableRange[] = [];
  // `after`: the last rowid read (for the report); `from`: where the next read starts. Reads
  // seek with >= (a > seek positions on the row before, which may sit on the damaged page).
  let after = Number.MIN_SAFE_INTEGER;
  let from = Number.MIN_SAFE_INTEGER;
  let readAny = false;
  let rowsAtLastSkip = -1;
  const probe = (at: number): "row" | "end" | "fail" => {
    try {
      return firstAtOrAfter.get(at) === undefined ? "end" : "row";
    } catch {
      return "fail";
    }
  };
  for (let guard = 0; guard < 10_000_000; guard++) {
    let batch: Array<Record<string, unknown>> | null = null;
    for (const size of [BATCH, 50, 5, 1]) {
      try {
        batch = read.all(from, size) as Array<Record<string, unknown>>;
        break;
      } catch (error) {
        if (!isSqliteCorrupt(error)) throw error;
      }
    }
    if (batch !== null) {
      readAny = true;
      if (batch.length === 0) break;
      for (const row of batch) {
        after = row["__rowid"] as number;
        delete row["__rowid"];
        rows.push(row);
      }
      from = after + 1;
      continue;
    }
    // The row after `after` cannot be read: find the first rowid from which reading works again.
    const start = from === Number.MIN_SAFE_INTEGER ? 0 : from;
    let bad = start;
    let step = 1;
    let good: number | null = null;
    while (step < 2 ** 53) {
      const at = start + step;
      if (at > Number.MAX_SAFE_INTEGER) break;
      if (probe(at) !== "fail") {
        good = at;
        break;
      }
      bad = at;
      step *= 2;
    }
    // Failing again right where the last skip resumed: the same damaged run, reported once.
    const last = unreadable.at(-1);
    const sameRun = last !== undefined && rows.length === rowsAtLastSkip;
    const skip = (beforeRowid: number | null): void => {
      if (sameRun) last.beforeRowid = beforeRowid;
      else unreadable.push({ table, afterRowid: after === Number.MIN_SAFE_INTEGER ? null : after, beforeRowid });
      rowsAtLastSkip = rows.length;
    };
    if (good === null) {
      skip(null);
      break;
    }
    let hi: number = good;
    while (hi - bad > 1) {
      const mid: number = bad + Math.floor((hi - bad) / 2);
      if (probe(mid) === "fail") bad = mid;
      else hi = mid;
    }
    let next: number | null = null;
    try {
      next = (firstAtOrAfter.get(hi) as number | undefined) ?? null;
    } catch {
      next = null;
    }
    skip(next);
    if (next === null) break;
    if (next <= from) break; // no progress: give up on the rest of the table
    from = next;
  }
  return { rows, unreadable, readable: readAny || rows.length > 0 };
}

/** Reads a table without rowids whole (they are small: meta, aliases, leases, counts). */
function salvageWholeTable(db: Database.Database, table: string, columns: string[]): Salvage {
  try {
    const rows = db.prepare(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"`).all() as Array<Record<string, unknown>>;
    return { rows, unreadable: [], readable: true };
  } catch (error) {
    if (!isSqliteCorrupt(error)) throw error;
    return { rows: [], unreadable: [], readable: false };
  }
}

/** The column names of a table, or `null` when the table is missing or unreadable. */
function columnsOf(db: Database.Database, table: string): string[] | null {
  try {
    const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[];
    return cols.length > 0 ? cols : null;
  } catch {
    return null;
  }
}

/** The ids a covering index still holds (the index may be intact while the table is not). */
function indexedIds<T>(db: Database.Database, sql: string): T[] | null {
  try {
    return db.prepare(sql).raw().all() as T[];
  } catch {
    return null;
  }
}

/** A file name stamp: `20260314T101500Z`. */
function stamp(at: Date): string {
  return at.toISOString().replace(/[-:]/gu, "").replace(/\.\d+Z$/u, "Z");
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
  const source = new Database(path, { fileMustExist: true, timeout: 0 });
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
    // Set the damaged file aside with its WAL and shared-memory files, then put the fresh one in place.
    renameSync(path, backup);
    for (const suffix of ["-wal", "-shm"]) {
      if (existsSync(`${path}${suffix}`)) renameSync(`${path}${suffix}`, `${backup}${suffix}`);
    }
    renameSync(fresh, path);
    return report;
  } catch (error) {
    freshConn?.db.close();
    if (source.open) source.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${fresh}${suffix}`, { force: true });
    throw error;
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
        `Another process has ${path} open (a running "threadline serve", "threadline chat" or an app using it). ` +
          "Stop it, then run the repair again.",
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
      const salvage = /WITHOUT\s+ROWID/iu.test(sql) ? salvageWholeTable(source, name, columns) : salvageRowidTable(source, name, columns);
      if (!salvage.readable) report.unreadableTables.push(name);
      else report.unreadable.push(...salvage.unreadable);
      let rows = salvage.rows;
      // The search index is rebuilt here from scratch.
      if (name === "meta") rows = rows.filter((r) => r["key"] !== INDEX_WATERMARK_KEY);
      const insert = db.prepare(`INSERT OR IGNORE INTO "${name}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
      let n = 0;
      for (const row of rows) n += insert.run(...columns.map((c) => row[c])).changes;
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
    ["executions", "DELETE FROM executions WHERE parent_id IS NOT NULL AND parent_id NOT IN (SELECT id FROM executions)"],
  ] as const) {
    const dropped = db.prepare(sql).run().changes;
    if (dropped > 0) report.dropped[table] = dropped;
  }
  const left = db.prepare("PRAGMA foreign_key_check").all();
  if (left.length > 0) throw new StoreError(`The repaired copy still has ${left.length} broken reference(s); nothing was changed.`);
}
