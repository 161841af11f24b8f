/**
 * The durable inbound queue on SQLite: one row per queued item (a merged media burst is
 * one item), in arrival order per key.
 *
 * @module
 */
import type { EnqueueResult, QueuedItem } from "../contract.js";
import { mergesInto, toQueuedItem, type QueueRow } from "../route-rows.js";
import type { CheckedQueuedEvent } from "../routing-input.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** Every item of a key, oldest first. */
export function queueItems(conn: SqliteConnection, key: string): QueuedItem[] {
  return (conn.stmt("SELECT * FROM inbound_queue WHERE key = ? ORDER BY id").all(key) as QueueRow[]).map(toQueuedItem);
}

/** Queues, merges or refuses an event (inside a write). */
export function enqueue(conn: SqliteConnection, key: string, event: CheckedQueuedEvent, maxDepth: number): EnqueueResult {
  const items = queueItems(conn, key);
  const waiting = items.filter((item) => item.claimedAt === null).length;
  if (event.messageId !== null && items.some((item) => item.messageIds.includes(event.messageId!))) {
    return { status: "duplicate", depth: waiting };
  }
  const tail = items[items.length - 1];
  if (mergesInto(tail, event.mergeKey, event.mergeWithinSeconds, event.at)) {
    const payloads = [...tail.payloads, JSON.parse(event.payload) as unknown];
    const ids = event.messageId === null ? tail.messageIds : [...tail.messageIds, event.messageId];
    conn
      .stmt("UPDATE inbound_queue SET payloads = ?, message_ids = ?, last_event_at = ? WHERE id = ?")
      .run(JSON.stringify(payloads), JSON.stringify(ids), Math.max(tail.lastEventAt, event.at), tail.id);
    const item = toQueuedItem(conn.stmt("SELECT * FROM inbound_queue WHERE id = ?").get(tail.id) as QueueRow);
    return { status: "merged", item, depth: waiting };
  }
  if (waiting >= maxDepth) return { status: "full", depth: waiting };
  const { lastInsertRowid } = conn
    .stmt(
      "INSERT INTO inbound_queue(key, payloads, message_ids, merge_key, enqueued_at, last_event_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .run(
      key,
      `[${event.payload}]`,
      JSON.stringify(event.messageId === null ? [] : [event.messageId]),
      event.mergeKey,
      event.at,
      event.at,
    );
  const item = toQueuedItem(conn.stmt("SELECT * FROM inbound_queue WHERE id = ?").get(lastInsertRowid) as QueueRow);
  return { status: "queued", item, depth: waiting + 1 };
}

/** Claims the oldest item of a key (inside a write). */
export function claimQueued(conn: SqliteConnection, key: string, at: number): QueuedItem | null {
  const head = conn.stmt("SELECT * FROM inbound_queue WHERE key = ? ORDER BY id LIMIT 1").get(key) as QueueRow | undefined;
  if (head === undefined) return null;
  if (head.claimed_at === null) {
    conn.stmt("UPDATE inbound_queue SET claimed_at = ? WHERE id = ?").run(at, head.id);
    head.claimed_at = at;
  }
  return toQueuedItem(head);
}
