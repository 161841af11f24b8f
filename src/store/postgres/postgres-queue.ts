/**
 * The durable inbound queue on PostgreSQL: one row per queued item (a merged media burst
 * is one item), in arrival order per key. Every change to a key's queue first takes a
 * transaction-scoped advisory lock on the key, so enqueue, claim, complete and clear from
 * any number of processes are serialised per key (dedup, merge and depth stay exact).
 *
 * @module
 */
import type { EnqueueResult, QueuedItem } from "../contract.js";
import { mergesInto, toQueuedItem, type QueueRow } from "../route-rows.js";
import type { CheckedQueuedEvent } from "../routing-input.js";
import type { Sql } from "./postgres-connection.js";

/** Class id of the per-key advisory lock (two-key form; "tla" + 2). */
const QUEUE_LOCK_CLASS = 0x746c6102;

/** Takes the queue lock of a key until the transaction ends. */
export async function lockQueue(sql: Sql, key: string): Promise<void> {
  await sql.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [QUEUE_LOCK_CLASS, key]);
}

/** Every item of a key, oldest first. */
export async function queueItems(sql: Sql, key: string): Promise<QueuedItem[]> {
  return (await sql.all<QueueRow>("SELECT * FROM inbound_queue WHERE key = $1 ORDER BY id", [key])).map(toQueuedItem);
}

/** Queues, merges or refuses an event (inside a write transaction). */
export async function enqueue(sql: Sql, key: string, event: CheckedQueuedEvent, maxDepth: number): Promise<EnqueueResult> {
  await lockQueue(sql, key);
  const items = await queueItems(sql, key);
  const waiting = items.filter((item) => item.claimedAt === null).length;
  if (event.messageId !== null && items.some((item) => item.messageIds.includes(event.messageId!))) {
    return { status: "duplicate", depth: waiting };
  }
  const tail = items[items.length - 1];
  if (mergesInto(tail, event.mergeKey, event.mergeWithinSeconds, event.at)) {
    const payloads = [...tail.payloads, JSON.parse(event.payload) as unknown];
    const ids = event.messageId === null ? tail.messageIds : [...tail.messageIds, event.messageId];
    const row = await sql.one<QueueRow>(
      "UPDATE inbound_queue SET payloads = $1, message_ids = $2, last_event_at = $3 WHERE id = $4 RETURNING *",
      [JSON.stringify(payloads), JSON.stringify(ids), Math.max(tail.lastEventAt, event.at), tail.id],
    );
    return { status: "merged", item: toQueuedItem(row!), depth: waiting };
  }
  if (waiting >= maxDepth) return { status: "full", depth: waiting };
  const row = await sql.one<QueueRow>(
    `INSERT INTO inbound_queue(key, payloads, message_ids, merge_key, enqueued_at, last_event_at)
     VALUES ($1, $2, $3, $4, $5, $5) RETURNING *`,
    [key, `[${event.payload}]`, JSON.stringify(event.messageId === null ? [] : [event.messageId]), event.mergeKey, event.at],
  );
  return { status: "queued", item: toQueuedItem(row!), depth: waiting + 1 };
}

/** Claims the oldest item of a key (inside a write transaction). */
export async function claimQueued(sql: Sql, key: string, at: number): Promise<QueuedItem | null> {
  await lockQueue(sql, key);
  const head = await sql.one<QueueRow>("SELECT * FROM inbound_queue WHERE key = $1 ORDER BY id LIMIT 1", [key]);
  if (head === undefined) return null;
  if (head.claimed_at === null) {
    await sql.run("UPDATE inbound_queue SET claimed_at = $1 WHERE id = $2", [at, head.id]);
    head.claimed_at = at;
  }
  return toQueuedItem(head);
}

/** Removes one item of a key (inside a write transaction); true when it was there. */
export async function completeQueued(sql: Sql, key: string, itemId: number): Promise<boolean> {
  await lockQueue(sql, key);
  return (await sql.run("DELETE FROM inbound_queue WHERE key = $1 AND id = $2", [key, itemId])) > 0;
}

/** Removes the waiting (unclaimed) items of a key (inside a write transaction); returns how many. */
export async function clearQueue(sql: Sql, key: string): Promise<number> {
  await lockQueue(sql, key);
  return sql.run("DELETE FROM inbound_queue WHERE key = $1 AND claimed_at IS NULL", [key]);
}
