/**
 * `threadline doctor` on a SQLite file: the checks (integrity, the FTS5 index, schema
 * version, WAL, free space), made without changing the file. The repair is in
 * `sqlite-repair.ts`.
 *
 * @module
 */
import type Database from "better-sqlite3";
import { Database as SqliteDatabase } from "./sqlite-driver.js";
import { existsSync, statSync, statfsSync } from "node:fs";
import type { SqliteDoctorReport } from "../doctor-report.js";
import { NotFoundError } from "../errors.js";
import { mediaNotChecked } from "../media-doctor.js";
import { isSqliteBusy } from "./sqlite-errors.js";
import { SQLITE_SCHEMA_VERSION } from "./sqlite-migrations.js";
import { INDEX_WATERMARK_KEY } from "./sqlite-search-index.js";

/** The most integrity findings kept. */
const MAX_FINDINGS = 100;

/** The text of an error (driver errors included). */
export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A file's size in bytes, 0 when it does not exist. */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Rejects a path with no file: a missing database is never created by the doctor. */
export function requireFile(path: string): void {
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
    media: mediaNotChecked(),
  };
  report.space.diskFreeBytes = attempt(problems, "Reading the disk's free space", () => {
    const fs = statfsSync(path);
    return fs.bavail * fs.bsize;
  });
  let db: Database.Database;
  try {
    // Read-write only because FTS5's integrity check is an INSERT command; it runs inside a
    // transaction that is rolled back, and nothing else writes.
    db = new SqliteDatabase(path, { fileMustExist: true, timeout: 5000 });
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
        const rows = db
          .prepare(`PRAGMA integrity_check("${table.replaceAll('"', '""')}")`)
          .pluck()
          .all() as string[];
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
  const hasFts = attempt(
    problems,
    "Looking for the search index",
    () => db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'").get() !== undefined,
  );
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
  report.searchIndex.newestMessageId = attempt(
    problems,
    "Reading the newest message id",
    () => (db.prepare("SELECT max(id) FROM messages").pluck().get() as number | null) ?? 0,
  );
}
