/**
 * Keeping the FTS5 index in step with the messages, off the append path.
 *
 * FTS5 writes a new index segment on every commit, which would triple the cost of a
 * durable one-message append. So appends only store the message (durable at once),
 * and the index catches up in batches: `meta['fts.indexed_upto']` is the highest
 * message id the index has seen. Every search first indexes whatever lies beyond the
 * watermark (in any process's writes), so a search never misses a stored message.
 * Message ids are AUTOINCREMENT (never reused), so an id at or below the watermark
 * always names the row the index saw.
 *
 * @module
 */
import type { SqliteConnection } from "./sqlite-connection.js";
import { messageIndexText } from "./sqlite-migrations.js";

/** The meta key holding the highest message id the index has processed. */
export const INDEX_WATERMARK_KEY = "fts.indexed_upto";
/** Rows read per step while catching up. */
const STEP = 2000;

/** The highest message id processed by the index. */
export function indexWatermark(conn: SqliteConnection): number {
  const value = conn.stmt("SELECT value FROM meta WHERE key = ?").pluck().get(INDEX_WATERMARK_KEY) as string | undefined;
  return value === undefined ? 0 : Number(value);
}

/** True when messages exist that the index has not processed yet. */
export function indexIsBehind(conn: SqliteConnection): boolean {
  const newest = (conn.stmt("SELECT max(id) FROM messages").pluck().get() as number | null) ?? 0;
  return newest > indexWatermark(conn);
}

/**
 * Messages one {@link indexPendingStep} indexes at most: about 25 ms of FTS5 inserts on the 2-core
 * machines (~12 µs a message). An imported history of 36,800 messages caught up in one write held the
 * write lock, and the event loop, for 0.6 s.
 */
export const INDEX_STEP_ROWS = 2000;

/**
 * Indexes at most `limit` messages beyond the watermark and advances it. Run inside a write
 * transaction; a backlog is caught up in several such writes, so other writers run in between.
 * Returns whether messages beyond the new watermark remain.
 */
export function indexPendingStep(conn: SqliteConnection, limit = INDEX_STEP_ROWS): boolean {
  const processed = indexRows(conn, limit);
  return processed.reachedLimit;
}

/** Indexes every visible message beyond the watermark and advances it. Run inside a write transaction. Returns rows indexed. */
export function indexPending(conn: SqliteConnection): number {
  return indexRows(conn, Infinity).indexed;
}

function indexRows(conn: SqliteConnection, limit: number): { indexed: number; reachedLimit: boolean } {
  let after = indexWatermark(conn);
  const start = after;
  let indexed = 0;
  let seen = 0;
  const read = conn.stmt(
    `SELECT id, rewound_at, content, content_parts, tool_name, tool_calls FROM messages
      WHERE id > ? ORDER BY id LIMIT ?`,
  );
  const insert = conn.stmt("INSERT INTO messages_fts(rowid, body) VALUES (?, ?)");
  while (seen < limit) {
    const rows = read.all(after, Math.min(STEP, limit - seen)) as Array<{
      id: number;
      rewound_at: number | null;
      content: string | null;
      content_parts: number;
      tool_name: string | null;
      tool_calls: string | null;
    }>;
    if (rows.length === 0) break;
    for (const row of rows) {
      if (row.rewound_at === null) {
        insert.run(row.id, messageIndexText(row.content, row.content_parts, row.tool_name, row.tool_calls));
        indexed += 1;
      }
      after = row.id;
    }
    seen += rows.length;
  }
  if (after !== start) {
    conn.stmt("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(INDEX_WATERMARK_KEY, String(after));
  }
  return { indexed, reachedLimit: seen >= limit };
}

/** FTS5's own default `deletemerge`: a segment is merged once this percentage of its rows is deleted. */
const FTS_DEFAULT_DELETE_MERGE = 10;

/**
 * Pages one {@link indexMergeStep} writes. Measured after a prune of the medium benchmark
 * data set on the shared 2-core machine: about 35 ms a step.
 */
export const INDEX_MERGE_STEP_PAGES = 500;

/**
 * Inside a write that deletes many messages (a prune batch): stops FTS5 from merging the
 * segments the deletions leave mostly empty there and then (one such merge held the write
 * lock for half a second), and returns the `deletemerge` setting to restore before the
 * write commits ({@link restoreDeleteMerges}). The merges run afterwards in bounded steps
 * ({@link indexMergeStep}).
 */
export function deferDeleteMerges(conn: SqliteConnection): number {
  const current = conn.stmt("SELECT v FROM messages_fts_config WHERE k = 'deletemerge'").pluck().get() as number | undefined;
  conn.stmt("INSERT INTO messages_fts(messages_fts, rank) VALUES ('deletemerge', 100)").run();
  return typeof current === "number" ? current : FTS_DEFAULT_DELETE_MERGE;
}

/** Puts back the `deletemerge` setting {@link deferDeleteMerges} returned (in the same write). */
export function restoreDeleteMerges(conn: SqliteConnection, setting: number): void {
  // FTS5 takes a configuration value as a literal only (a bound one is "SQL logic error").
  const percent = Number.isInteger(setting) && setting >= 0 && setting <= 100 ? setting : FTS_DEFAULT_DELETE_MERGE;
  conn.stmt(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('deletemerge', ${percent})`).run();
}

/**
 * One bounded step of merging the search index's segments (FTS5 `merge`, about
 * {@link INDEX_MERGE_STEP_PAGES} pages), inside a write; false once there was nothing left to merge.
 */
export function indexMergeStep(conn: SqliteConnection): boolean {
  const total = conn.stmt("SELECT total_changes()").pluck();
  const before = total.get() as number;
  conn.stmt(`INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ${INDEX_MERGE_STEP_PAGES})`).run();
  // FTS5 documents it: fewer than 2 changed rows means the merge found no work.
  return (total.get() as number) - before >= 2;
}
