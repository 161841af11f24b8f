/**
 * The {@link QueueStore} role (the durable inbound queue of each session key) and its records.
 * Part of the storage contract (see `./index.ts`).
 *
 * @module
 */
import type { ClaimedWrite } from "./inbound-claims.js";

/** One inbound event to queue for a busy session. */
export interface NewQueuedEvent extends ClaimedWrite {
  /** The platform's message id: an id already queued for the key makes the call a `duplicate`. */
  messageId?: string | null;
  /** The event (any JSON value). */
  payload: unknown;
  /**
   * Events with the same non-null merge key that arrive one after the other merge into one
   * queued item (a media album). `null`: never merges.
   */
  mergeKey?: string | null;
  /** With a merge key: merge only when the previous event came at most this many seconds earlier (`null`: any gap). */
  mergeWithinSeconds?: number | null;
  /** Arrival time (default: now). */
  at?: number;
}

/** A queued item: one event, or several merged ones. */
export interface QueuedItem {
  id: number;
  key: string;
  payloads: unknown[];
  messageIds: string[];
  mergeKey: string | null;
  enqueuedAt: number;
  /** Arrival of its latest event. */
  lastEventAt: number;
  /** When a turn took it (it stays queued until completed, so a crash replays it); `null` while waiting. */
  claimedAt: number | null;
}

/** What {@link QueueStore.enqueue} did. `depth` counts the waiting (unclaimed) items afterwards. */
export type EnqueueResult =
  | { status: "queued" | "merged"; item: QueuedItem; depth: number }
  | { status: "duplicate"; depth: number }
  | { status: "full"; depth: number };

/** The durable inbound queue of each session key (messages that arrive while a turn runs). */
export interface QueueStore {
  /** Queues an event for a key, durably, unless it is a duplicate or the queue holds `maxDepth` waiting items (default 32). */
  enqueue(key: string, event: NewQueuedEvent, options?: { maxDepth?: number }): Promise<EnqueueResult>;
  /** Every item of a key's queue, oldest first (a claimed item first). */
  listQueue(key: string): Promise<QueuedItem[]>;
  /** Claims the oldest item (returns an already claimed one again: replay after a crash), or `null` when empty. */
  claimQueued(key: string, options?: { at?: number }): Promise<QueuedItem | null>;
  /** Removes an item once its turn has stored it. */
  completeQueued(key: string, itemId: number): Promise<boolean>;
  /** Removes every waiting item of a key (a claimed one stays); returns how many. */
  clearQueue(key: string): Promise<number>;
  /** Keys that have queued items. */
  listQueuedKeys(): Promise<string[]>;
}
