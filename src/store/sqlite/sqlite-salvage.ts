/**
 * Reading what is still readable from a damaged SQLite file: rows are read in rowid order a
 * batch at a time, and a batch that fails is narrowed down to the rows that can be read; the
 * rowids in between are skipped and reported.
 *
 * @module
 */
import type Database from "better-sqlite3";
import type { UnreadableRange } from "../doctor-report.js";
import { isSqliteCorrupt } from "./sqlite-errors.js";

/** Rows read per batch while salvaging. */
const BATCH = 500;

/** What reading one table salvaged. */
export interface Salvage {
  rows: Array<Record<string, unknown>>;
  unreadable: UnreadableRange[];
  /** False when nothing of the table could be read. */
  readable: boolean;
}

/** Options of {@link salvageRowidTable}. */
export interface SalvageOptions {
  /** Takes each row as it is read (then `rows` stays empty): memory holds one batch, whatever the table's size. */
  sink?: (row: Record<string, unknown>) => void;
  /** Rows read at a time (default 500; fewer for tables of large rows, such as media chunks). */
  batchRows?: number;
}

/**
 * Reads every readable row of a rowid table in rowid order, `BATCH` at a time; around a
 * batch that fails, narrows down to the readable rows and skips the damaged rowid range.
 */
export function salvageRowidTable(db: Database.Database, table: string, columns: string[], options: SalvageOptions = {}): Salvage {
  const { sink, batchRows = BATCH } = options;
  const sizes = [...new Set([batchRows, Math.min(50, batchRows), 5, 1])].filter((n) => n <= batchRows);
  let kept = 0;
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
    for (const size of sizes) {
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
        if (sink === undefined) rows.push(row);
        else sink(row);
        kept++;
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
    const sameRun = last !== undefined && kept === rowsAtLastSkip;
    const skip = (beforeRowid: number | null): void => {
      if (sameRun) last.beforeRowid = beforeRowid;
      else unreadable.push({ table, afterRowid: after === Number.MIN_SAFE_INTEGER ? null : after, beforeRowid });
      rowsAtLastSkip = kept;
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
  return { rows, unreadable, readable: readAny || kept > 0 };
}

/** Reads a table without rowids whole (they are small: meta, aliases, leases, counts). */
export function salvageWholeTable(db: Database.Database, table: string, columns: string[]): Salvage {
  try {
    const rows = db.prepare(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"`).all() as Array<Record<string, unknown>>;
    return { rows, unreadable: [], readable: true };
  } catch (error) {
    if (!isSqliteCorrupt(error)) throw error;
    return { rows: [], unreadable: [], readable: false };
  }
}

/** The column names of a table, or `null` when the table is missing or unreadable. */
export function columnsOf(db: Database.Database, table: string): string[] | null {
  try {
    const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[];
    return cols.length > 0 ? cols : null;
  } catch {
    return null;
  }
}

/** The ids a covering index still holds (the index may be intact while the table is not). */
export function indexedIds<T>(db: Database.Database, sql: string): T[] | null {
  try {
    return db.prepare(sql).raw().all() as T[];
  } catch {
    return null;
  }
}
