/**
 * The per-session queue: messages that arrive while a session is busy wait in one
 * next-up slot plus an overflow list, in arrival order, stored in the database before
 * they are acknowledged (so a crash replays them), de-duplicated by platform message id.
 * Each queued message becomes exactly one turn, except media bursts (photos of one
 * album), which merge into one event.
 *
 * @module
 */
import { InvalidInputError, type EnqueueResult, type InboundClaim, type QueuedItem, type QueueStore } from "../store/index.js";
import { systemClock, type Clock } from "./clock.js";
import { assertSafeKey } from "./session-key.js";

/** Most waiting messages per key (slot + overflow). */
export const DEFAULT_MAX_QUEUE_DEPTH = 32;
/** Media without an album id merge when they arrive at most this many seconds apart. */
export const MEDIA_BURST_WINDOW_SECONDS = 2;

/** A message to queue. */
export interface InboundEvent {
  /** The platform's message id (de-duplication). */
  messageId?: string | null;
  /** Who sent it (media from different senders never merge). */
  senderId?: string | null;
  /** `text` never merges; `media` may merge into a burst. Default `text`. */
  kind?: "text" | "media";
  /** The album/media-group id of a media message, if the platform gives one. */
  albumId?: string | null;
  /** The event itself (any JSON value: text, attachments, …). */
  payload: unknown;
  /** Claim these platform messages with it (see `NewQueuedEvent.claims`): one claimed already makes it a `duplicate`. */
  claims?: InboundClaim[];
}

/** What {@link SessionQueue.enqueue} did. */
export type QueueOutcome =
  | { status: "queued" | "merged"; item: QueuedItem; depth: number }
  | { status: "duplicate"; depth: number }
  | {
      status: "rejected";
      depth: number;
      /** A sentence to show the user. */
      reason: string;
    };

/** The waiting messages of a key: the next-up slot and the overflow behind it. */
export interface QueueSnapshot {
  /** The item being processed (claimed by a turn), if any. */
  inFlight: QueuedItem | null;
  slot: QueuedItem | null;
  overflow: QueuedItem[];
  /** overflow + slot. */
  depth: number;
}

/**
 * The durable FIFO queues of a gateway, one per session key.
 *
 * @example
 * const queue = new SessionQueue(db);
 * await queue.enqueue(key, { messageId: "m7", payload: { text: "and another thing" } });
 * const next = await queue.promote(key); // after the running turn
 * // … run the turn with next.payloads …
 * await queue.complete(key, next!.id);
 */
export class SessionQueue {
  readonly #db: QueueStore;
  readonly #clock: Clock;
  readonly maxDepth: number;

  constructor(db: QueueStore, options: { clock?: Clock; maxDepth?: number } = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_QUEUE_DEPTH;
    if (!Number.isSafeInteger(this.maxDepth) || this.maxDepth < 1) {
      throw new InvalidInputError("maxDepth must be a whole number ≥ 1.", { field: "maxDepth" });
    }
  }

  /** Queues a message (durably) or says why not. */
  async enqueue(key: string, event: InboundEvent): Promise<QueueOutcome> {
    assertSafeKey(key);
    if (event === null || typeof event !== "object") {
      throw new InvalidInputError("enqueue needs an event { payload, messageId?, senderId?, kind?, albumId? }.", {
        field: "event",
      });
    }
    const kind = event.kind ?? "text";
    if (kind !== "text" && kind !== "media") {
      throw new InvalidInputError(`event.kind must be "text" or "media", not "${String(kind)}".`, { field: "kind" });
    }
    const album = event.albumId ?? null;
    const mergeKey = kind === "media" ? `media:${event.senderId ?? ""}:${album ?? ""}` : null;
    const result: EnqueueResult = await this.#db.enqueue(
      key,
      {
        messageId: event.messageId ?? null,
        payload: event.payload,
        mergeKey,
        mergeWithinSeconds: album === null ? MEDIA_BURST_WINDOW_SECONDS : null,
        at: this.#clock.now(),
        ...(event.claims === undefined || event.claims.length === 0 ? {} : { claims: event.claims }),
      },
      { maxDepth: this.maxDepth },
    );
    if (result.status === "full") {
      return {
        status: "rejected",
        depth: result.depth,
        reason:
          `This chat already has ${result.depth} messages waiting (the limit is ${this.maxDepth}); ` +
          "this one was not queued. Wait for the replies, or send /new to start over.",
      };
    }
    return result;
  }

  /** The next message to run after the current turn (kept until {@link complete}); `null` when none waits. */
  async promote(key: string): Promise<QueuedItem | null> {
    assertSafeKey(key);
    return this.#db.claimQueued(key, { at: this.#clock.now() });
  }

  /** Removes a promoted message once its turn has stored it. */
  async complete(key: string, itemId: number): Promise<boolean> {
    return this.#db.completeQueued(key, itemId);
  }

  /** `/new`, `/reset`: drops the slot and the overflow; returns how many messages went. */
  async clear(key: string): Promise<number> {
    assertSafeKey(key);
    return this.#db.clearQueue(key);
  }

  /** The key's queue as slot + overflow. */
  async snapshot(key: string): Promise<QueueSnapshot> {
    const items = await this.#db.listQueue(key);
    const inFlight = items[0]?.claimedAt != null ? items[0] : null;
    const waiting = inFlight === null ? items : items.slice(1);
    return { inFlight, slot: waiting[0] ?? null, overflow: waiting.slice(1), depth: waiting.length };
  }

  /** Waiting messages of a key (overflow + slot). */
  async depth(key: string): Promise<number> {
    return (await this.snapshot(key)).depth;
  }

  /** Keys with queued messages (to replay after a restart). */
  async pendingKeys(): Promise<string[]> {
    return this.#db.listQueuedKeys();
  }
}
