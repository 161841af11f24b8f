/**
 * Group commit of PostgreSQL appends in one process. Appends to different sessions that wait
 * at the same moment go to the server together, as one statement that is its own transaction
 * (`postgres-append-batch.ts`): one round trip and one commit for all of them, instead of one
 * each. A lone append goes at once, as its own one-statement append (nothing waits to gather
 * more); while batches are in flight, new appends gather and leave together when one finishes.
 *
 * - **Order**: the caller keeps per-session order (the dialect's lanes let a session's next
 *   write start only after its previous one settled); a batch never holds two appends to one
 *   session.
 * - **Durability**: an append resolves only after the statement that carried it returned, that
 *   is after its commit.
 * - **Failures**: an append whose session is missing or ended, or whose fence no longer holds,
 *   wrote nothing and fails alone (the others committed). An error of the whole statement is
 *   retried, whole, on serialization failures and deadlocks; any other error the server reports
 *   (it rolled the statement back) sends each append of the batch again on its own, so only the
 *   one that causes it fails; a failed connection fails the batch's appends (the statement may
 *   have committed, so nothing is sent twice).
 *
 * @module
 */
import type { LeaseFence } from "../contract.js";
import { ConflictError, NotFoundError } from "../errors.js";
import { assertFence } from "../lease-rows.js";
import { appendBatch, type BatchedAppend, type BatchedOutcome } from "./postgres-append-batch.js";
import type { Sql } from "./postgres-connection.js";
import { isRetryable, pgCode, translatePostgresError } from "./postgres-errors.js";
import { appendInOneStatement } from "./postgres-transcript.js";

/** How often a batch is sent again after a serialization failure or deadlock. */
const MAX_ATTEMPTS = 8;

/** At most this many appends in one statement (keeps one statement's work, and its lock set, bounded). */
const MAX_BATCH = 256;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Why an append to `sessionId` wrote nothing (read afresh): the session is missing, or it has ended. */
export async function appendRefused(sql: Sql, sessionId: string): Promise<NotFoundError | ConflictError> {
  const row = await sql.one<{ ended_at: number | null }>("SELECT ended_at FROM sessions WHERE id = $1", [sessionId]);
  if (row === undefined) return new NotFoundError(`No session with id "${sessionId}" to append to. Create it first.`);
  return new ConflictError(`Session "${sessionId}" has ended; reopen it (reopenSession) before appending.`, { sessionId });
}

/**
 * Whether the server reported `error` for the statement, which it then rolled back (a statement
 * outside a transaction is all or nothing); not when the connection failed or the server was
 * shut down, where the commit may have happened with its answer lost.
 */
function rolledBack(error: unknown): boolean {
  if (typeof error !== "object" || error === null || typeof (error as { severity?: unknown }).severity !== "string") return false;
  const code = pgCode(error) ?? "";
  return !code.startsWith("08") && !code.startsWith("57");
}

interface Waiting extends BatchedAppend {
  doing: string;
  resolve(ids: number[]): void;
  reject(error: unknown): void;
}

/** Gathers appends into batches; see the module comment. */
export class AppendQueue {
  readonly #sql: Sql;
  readonly #location: string;
  readonly #wrote: (rows: number) => void;
  readonly #maxInFlight: number;
  #waiting: Waiting[] = [];
  #inFlight = 0;

  /**
   * @param sql - runs statements on the pool (each outside a transaction)
   * @param location - where the database is, for error messages
   * @param wrote - told how many rows each append wrote (planner statistics)
   * @param maxInFlight - batches on the server at once (each on its own pooled connection)
   */
  constructor(sql: Sql, location: string, wrote: (rows: number) => void, maxInFlight: number) {
    this.#sql = sql;
    this.#location = location;
    this.#wrote = wrote;
    this.#maxInFlight = Math.max(1, maxInFlight);
  }

  /** Appends `messages` (no attachments) to a live session; resolves with their ids once committed. */
  append(doing: string, sessionId: string, messages: BatchedAppend["messages"], fence: LeaseFence | null): Promise<number[]> {
    return new Promise<number[]>((resolve, reject) => {
      this.#waiting.push({ doing, sessionId, messages, fence, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#waiting.length > 0) {
      const batch = this.#take();
      this.#inFlight++;
      void this.#send(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  /** The next batch: waiting appends in arrival order, at most one per session, at most {@link MAX_BATCH}. */
  #take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const sessions = new Set<string>();
    for (const w of this.#waiting) {
      if (batch.length < MAX_BATCH && !sessions.has(w.sessionId)) {
        sessions.add(w.sessionId);
        batch.push(w);
      } else {
        rest.push(w);
      }
    }
    this.#waiting = rest;
    return batch;
  }

  /** Sends one batch and settles each of its appends; never throws. */
  async #send(batch: Waiting[]): Promise<void> {
    // A lone append: its own statement, shaped for it (as before the queue existed).
    if (batch.length === 1) return this.#sendAlone(batch[0]!);
    let outcomes: BatchedOutcome[];
    try {
      outcomes = await this.#withRetries(() => appendBatch(this.#sql, batch));
    } catch (error) {
      if (!rolledBack(error)) {
        // The connection failed: the statement may have committed, so nothing is sent again.
        for (const w of batch) w.reject(translatePostgresError(error, w.doing, this.#location));
        return;
      }
      // Something in the batch failed the statement: each append on its own, so only that one fails.
      await Promise.all(batch.map((w) => this.#sendAlone(w)));
      return;
    }
    await Promise.all(batch.map((w, i) => this.#settle(w, outcomes[i]!)));
  }

  async #sendAlone(w: Waiting): Promise<void> {
    try {
      const outcome = await this.#withRetries(() => appendInOneStatement(this.#sql, w.sessionId, w.messages, w.fence));
      await this.#settle(w, outcome);
    } catch (error) {
      w.reject(translatePostgresError(error, w.doing, this.#location));
    }
  }

  /** Resolves a written append; for one that wrote nothing, rejects with why (a lost lease, a missing or ended session). */
  async #settle(w: Waiting, outcome: BatchedOutcome): Promise<void> {
    if (outcome.written) {
      this.#wrote(outcome.ids.length);
      w.resolve(outcome.ids);
      return;
    }
    try {
      if (w.fence !== null) assertFence(w.fence, outcome.fenceRow);
      w.reject(await appendRefused(this.#sql, w.sessionId));
    } catch (error) {
      w.reject(translatePostgresError(error, w.doing, this.#location));
    }
  }

  async #withRetries<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        if (!isRetryable(error) || attempt >= MAX_ATTEMPTS) throw error;
        await sleep(Math.random() * 10 * attempt);
      }
    }
  }
}
