/**
 * The durable inbound queue, once for every backend: one row per queued item (a merged
 * media burst is one item), in arrival order per key. Every change to a key's queue first
 * takes the dialect's per-key writer lock (`lockQueue`), so enqueue, claim, complete and
 * clear from any number of processes are serialised per key (dedup, merge and depth stay exact).
 *
 * @module
 */
import type { EnqueueResult, QueuedItem } from "../contract.js";
import { mergesInto, toQueuedItem, type QueueRow } from "../route-rows.js";
import type { CheckedQueuedEvent } from "../routing-input.js";
import { all, one, run, type Steps } from "./steps.js";

/** Every item of a key, oldest first. */
export function* queueItems(key: string): Steps<QueuedItem[]> {
  return (yield* all<QueueRow>("SELECT * FROM inbound_queue WHERE key = ? ORDER BY id", [key])).map(toQueuedItem);
}

/** Queues, merges or refuses an event (inside a write, after the key's lock). */
export function* enqueue(key: string, event: CheckedQueuedEvent, maxDepth: number): Steps<EnqueueResult> {
  const items = yield* queueItems(key);
  const waiting = items.filter((item) => item.claimedAt === null).length;
  if (event.messageId !== null && items.some((item) => item.messageIds.includes(event.messageId!))) {
    return { status: "duplicate", depth: waiting };
  }
  const tail = items[items.length - 1];
  if (mergesInto(tail, event.mergeKey, event.mergeWithinSeconds, event.at)) {
    const payloads = [...tail.payloads, JSON.parse(event.payload) as unknown];
    const ids = event.messageId === null ? tail.messageIds : [...tail.messageIds, event.messageId];
    const row = yield* one<QueueRow>("UPDATE inbound_queue SET payloads = ?, message_ids = ?, last_event_at = ? WHERE id = ? RETURNING *", [
      JSON.stringify(payloads),
      JSON.stringify(ids),
      Math.max(tail.lastEventAt, event.at),
      tail.id,
    ]);
    return { status: "merged", item: toQueuedItem(row!), depth: waiting };
  }
  if (waiting >= maxDepth) return { status: "full", depth: waiting };
  const row = yield* one<QueueRow>(
    `INSERT INTO inbound_queue(key, payloads, message_ids, merge_key, enqueued_at, last_event_at)
     VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
    [key, `[${event.payload}]`, JSON.stringify(event.messageId === null ? [] : [event.messageId]), event.mergeKey, event.at, event.at],
  );
  return { status: "queued", item: toQueuedItem(row!), depth: waiting + 1 };
}

/** Claims the oldest item of a key (inside a write, after the key's lock). */
/** Whether a key has any item, claimed or not (a read: no writer lock). */
export function* hasQueued(key: string): Steps<boolean> {
  return (yield* one<{ one: number }>("SELECT 1 AS one FROM inbound_queue WHERE key = ? LIMIT 1", [key])) !== undefined;
}

export function* claimQueued(key: string, at: number): Steps<QueuedItem | null> {
  const head = yield* one<QueueRow>("SELECT * FROM inbound_queue WHERE key = ? ORDER BY id LIMIT 1", [key]);
  if (head === undefined) return null;
  if (head.claimed_at === null) {
    yield* run("UPDATE inbound_queue SET claimed_at = ? WHERE id = ?", [at, head.id]);
    head.claimed_at = at;
  }
  return toQueuedItem(head);
}

/** Removes one item of a key (inside a write, after the key's lock); true when it was there. */
export function* completeQueued(key: string, itemId: number): Steps<boolean> {
  return (yield* run("DELETE FROM inbound_queue WHERE key = ? AND id = ?", [key, itemId])) > 0;
}

/** Removes the waiting (unclaimed) items of a key (inside a write, after the key's lock); returns how many. */
export function* clearQueue(key: string): Steps<number> {
  return yield* run("DELETE FROM inbound_queue WHERE key = ? AND claimed_at IS NULL", [key]);
}
