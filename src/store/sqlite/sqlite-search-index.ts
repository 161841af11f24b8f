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

/** Indexes every visible message beyond the watermark and advances it. Run inside a write transaction. Returns rows indexed. */
export function indexPending(conn: SqliteConnection): number {
  let after = indexWatermark(conn);
  const start = after;
  let indexed = 0;
  const read = conn.stmt(
    `SELECT id, rewound_at, content, content_parts, tool_name, tool_calls FROM messages
      WHERE id > ? ORDER BY id LIMIT ${STEP}`,
  );
  const insert = conn.stmt("INSERT INTO messages_fts(rowid, body) VALUES (?, ?)");
  for (;;) {
    const rows = read.all(after) as Array<{
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
  }
  if (after !== start) {
    conn.stmt("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(INDEX_WATERMARK_KEY, String(after));
  }
  return indexed;
}

