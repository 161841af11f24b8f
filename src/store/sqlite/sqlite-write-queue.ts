/**
 * Serialises writes to one SQLite connection and commits calls that arrive together
 * in one transaction (group commit). Each call runs inside its own savepoint, so a
 * failing call rolls back alone; every promise resolves only after COMMIT, i.e. once
 * its data is durable. `BEGIN IMMEDIATE` that meets another process's lock is retried
 * with jittered back-off until the lock timeout, so short contention never surfaces
 * as an error.
 *
 * @module
 */
import type Database from "better-sqlite3";
import { setTimeout as sleep } from "node:timers/promises";
import { StoreBusyError } from "../errors.js";
import { isSqliteBusy, translateSqliteError } from "./sqlite-errors.js";

interface PendingWrite {
  run: () => unknown;
  doing: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Most calls committed together in one transaction. */
const MAX_BATCH = 256;

/** Takes the write lock (`BEGIN IMMEDIATE`), retrying with jittered back-off while another process holds it. */
export async function beginImmediate(db: Database.Database, lockTimeoutMs: number, doing: string): Promise<void> {
  const deadline = Date.now() + lockTimeoutMs;
  let backoffMs = 2;
  for (;;) {
    try {
      db.exec("BEGIN IMMEDIATE");
      return;
    } catch (error) {
      if (!isSqliteBusy(error)) throw translateSqliteError(error, doing);
      if (Date.now() >= deadline) {
        throw new StoreBusyError(
          `Another process held the database lock for over ${lockTimeoutMs} ms while ${doing}; nothing was written. ` +
            `Try again, or raise lockTimeoutMs.`,
          { cause: error },
        );
      }
      await sleep(backoffMs / 2 + Math.random() * backoffMs);
      backoffMs = Math.min(backoffMs * 2, 100);
    }
  }
}

/** The write queue of one connection. */
export class SqliteWriteQueue {
  readonly #db: Database.Database;
  readonly #lockTimeoutMs: number;
  #pending: PendingWrite[] = [];
  #flushing: Promise<void> | null = null;
  #scheduled = false;

  constructor(db: Database.Database, lockTimeoutMs: number) {
    this.#db = db;
    this.#lockTimeoutMs = lockTimeoutMs;
  }

  /** Queues `run` to execute inside a write transaction; resolves with its result once committed. */
  write<T>(doing: string, run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ run, doing, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /** Flushes on the next turn of the event loop, so calls made together share a transaction. */
  #schedule(): void {
    if (this.#scheduled || this.#flushing !== null) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#startFlush();
    });
  }

  /** Resolves once every write queued before this call is committed (or failed). */
  async drain(): Promise<void> {
    while (this.#flushing !== null || this.#pending.length > 0) {
      await (this.#flushing ?? this.#startFlush());
    }
  }

  #startFlush(): Promise<void> {
    if (this.#flushing !== null) return this.#flushing;
    if (this.#pending.length === 0) return Promise.resolve();
    this.#flushing = this.#flushAll().finally(() => {
      this.#flushing = null;
      if (this.#pending.length > 0) this.#schedule();
    });
    return this.#flushing;
  }

  async #flushAll(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, MAX_BATCH);
      await this.#commitBatch(batch);
    }
  }

  async #commitBatch(batch: PendingWrite[]): Promise<void> {
    const db = this.#db;
    try {
      await beginImmediate(db, this.#lockTimeoutMs, batch[0]!.doing);
    } catch (error) {
      for (const op of batch) op.reject(error);
      return;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      if (batch.length === 1) {
        const op = batch[0]!;
        try {
          outcomes.push({ ok: true, value: op.run() });
        } catch (error) {
          db.exec("ROLLBACK");
          op.reject(translateSqliteError(error, op.doing));
          return;
        }
      } else {
        for (const op of batch) {
          db.exec("SAVEPOINT tl_op");
          try {
            const value = op.run();
            db.exec("RELEASE tl_op");
            outcomes.push({ ok: true, value });
          } catch (error) {
            db.exec("ROLLBACK TO tl_op");
            db.exec("RELEASE tl_op");
            outcomes.push({ ok: false, error: translateSqliteError(error, op.doing) });
          }
        }
      }
      db.exec("COMMIT");
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      const translated = translateSqliteError(error, "committing a write");
      for (const op of batch) op.reject(translated);
      return;
    }
    batch.forEach((op, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) op.resolve(outcome.value);
      else op.reject(outcome.error);
    });
  }
}
