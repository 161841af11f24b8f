/**
 * Real SQLite files damaged on purpose: a seeded Threadline database (through the public
 * API), then zeroes written over pages of one table (found with the `dbstat` virtual
 * table), or the file cut short.
 *
 * @module
 */
import Database from "better-sqlite3";
import { closeSync, openSync, statSync, truncateSync, writeSync } from "node:fs";
import { openSessionDB } from "../../src/index.js";

/** What {@link seedDatabase} stored. */
export interface SeededDatabase {
  /** Session ids, oldest first. */
  sessionIds: string[];
  /** Message ids per session id. */
  messageIds: Map<string, number[]>;
  /** Every message id, ascending. */
  allMessageIds: number[];
}

/**
 * Fills `path` with `sessions` sessions of `messages` messages each (long enough to span
 * many pages), searches once so the full-text index is built, and closes the store (which
 * checkpoints the WAL into the file).
 */
export async function seedDatabase(path: string, { sessions = 12, messages = 30 }: { sessions?: number; messages?: number } = {}): Promise<SeededDatabase> {
  const db = await openSessionDB(path);
  const sessionIds: string[] = [];
  const messageIds = new Map<string, number[]>();
  try {
    for (let s = 0; s < sessions; s++) {
      const session = await db.createSession({ source: s % 2 === 0 ? "cli" : "telegram", title: `seeded ${s}` });
      sessionIds.push(session.id);
      const turn = Array.from({ length: messages }, (_, m) => ({
        role: m % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: `session ${s} message ${m} about the deployment of staging ${"lorem ipsum dolor ".repeat(12)}`,
      }));
      messageIds.set(session.id, await db.appendTurn(session.id, turn));
    }
    await db.searchMessages("deployment");
  } finally {
    await db.close();
  }
  const allMessageIds = [...messageIds.values()].flat().sort((a, b) => a - b);
  return { sessionIds, messageIds, allMessageIds };
}

/** The pages of one table or index (`dbstat` name), by type. */
export function pagesOf(path: string, name: string): Array<{ pageno: number; pagetype: string }> {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT pageno, pagetype FROM dbstat WHERE name = ? ORDER BY pageno").all(name) as Array<{ pageno: number; pagetype: string }>;
  } finally {
    db.close();
  }
}

/** The rowids stored on a leaf page of a rowid table (read before the page is damaged). */
export function rowidsOnPage(path: string, table: string, pageno: number): number[] {
  const db = new Database(path, { readonly: true });
  try {
    const pages = db.prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path").pluck().all(table) as number[];
    const index = pages.indexOf(pageno);
    if (index < 0) throw new Error(`page ${pageno} is not a leaf of ${table}`);
    // Leaves in b-tree order hold ascending rowid ranges: count the cells of earlier leaves.
    const cells = db.prepare("SELECT ncell FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path").pluck().all(table) as number[];
    const skip = cells.slice(0, index).reduce((a, b) => a + b, 0);
    return db.prepare(`SELECT rowid FROM "${table}" ORDER BY rowid LIMIT ? OFFSET ?`).pluck().all(cells[index], skip) as number[];
  } finally {
    db.close();
  }
}

/** The `id` column of the rows with these rowids (read before the page is damaged). */
export function idsOfRowids(path: string, table: string, rowids: number[]): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(`SELECT id FROM "${table}" WHERE rowid IN (${rowids.map(() => "?").join(", ")}) ORDER BY rowid`)
      .pluck()
      .all(...rowids) as string[];
  } finally {
    db.close();
  }
}

/** Writes zeroes over page `pageno` (1-based) of the file. */
export function zeroPage(path: string, pageno: number): void {
  const db = new Database(path, { readonly: true });
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  db.close();
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, Buffer.alloc(pageSize), 0, pageSize, (pageno - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

/**
 * Zeroes the middle leaf page of `table` and returns its page number and the rowids it
 * held (for a rowid table; `[]` for others), and for `sessions` the ids of those sessions.
 */
export function zeroMiddleLeaf(path: string, table: string, { rowids = true }: { rowids?: boolean } = {}): { pageno: number; rowids: number[]; ids: string[] } {
  const leaves = pagesOf(path, table).filter((p) => p.pagetype === "leaf");
  if (leaves.length < 3) throw new Error(`${table} has only ${leaves.length} leaf pages; seed more rows`);
  const { pageno } = leaves[Math.floor(leaves.length / 2)]!;
  const lost = rowids ? rowidsOnPage(path, table, pageno) : [];
  const ids = table === "sessions" ? idsOfRowids(path, table, lost) : [];
  zeroPage(path, pageno);
  return { pageno, rowids: lost, ids };
}

/** Cuts the file to `fraction` of its size (whole pages). */
export function truncateFile(path: string, fraction: number): void {
  const size = statSync(path).size;
  truncateSync(path, Math.floor((size * fraction) / 4096) * 4096);
}
