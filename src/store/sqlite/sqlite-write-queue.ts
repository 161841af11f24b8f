/**
 * Serialises writes to one SQLite connection and commits calls that arrive together
 * in one transaction (group commit). Each call runs inside its own savepoint, so a
 * failing call rolls back alone; every promise resolves only once its data is durable: after
 * COMMIT, and with a {@link WalSync} after the WAL flush that covers the commit (the flush runs
 * off the event loop while the next batches commit). `BEGIN IMMEDIATE` that meets another process's lock is retried
 * with jittered back-off until the lock timeout, so short contention never surfaces
 * as an error.
 *
 * @module
 */
import type Database from "better-sqlite3";
import { setTimeout as sleep } from "node:timers/promises";
import { StoreBusyError, StoreError } from "../errors.js";
import { isSqliteBusy, translateSqliteError } from "./sqlite-errors.js";
import type { WalSync } from "./sqlite-wal-sync.js";

interface PendingWrite {
  run: () => unknown;
  doing: string;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** What the write queue tells a checkpointer and asks it (see `WalCheckpointer`). */
export interface CommitHooks {
  /** Null, or a promise to await before the next `BEGIN`. */
  readonly paused: Promise<void> | null;
  afterCommit(): void;
}

/** Most calls committed together in one transaction. */
const MAX_BATCH = 256;

/** Transaction-control statements of one connection, prepared once (`exec` would parse them on every call). */
class TransactionStatements {
  readonly begin: Database.Statement;
  readonly commit: Database.Statement;
  readonly rollback: Database.Statement;
  readonly savepoint: Database.Statement;
  readonly release: Database.Statement;
  readonly rollbackTo: Database.Statement;

  constructor(db: Database.Database) {
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    this.savepoint = db.prepare("SAVEPOINT tl_op");
    this.release = db.prepare("RELEASE tl_op");
    this.rollbackTo = db.prepare("ROLLBACK TO tl_op");
  }
}

const statementsByDb = new WeakMap<Database.Database, TransactionStatements>();
function tx(db: Database.Database): TransactionStatements {
  let statements = statementsByDb.get(db);
  if (statements === undefined) {
    statements = new TransactionStatements(db);
    statementsByDb.set(db, statements);
  }
  return statements;
}

/** Takes the write lock (`BEGIN IMMEDIATE`), retrying with jittered back-off while another process holds it. */
export async function beginImmediate(db: Database.Database, lockTimeoutMs: number, doing: string): Promise<void> {
  const deadline = Date.now() + lockTimeoutMs;
  let backoffMs = 2;
  const begin = tx(db).begin;
  for (;;) {
    try {
      begin.run();
      return;
    } catch (error) {
      if (!isSqliteBusy(error)) throw translateSqliteError(error, doing, db.name);
      if (Date.now() >= deadline) {
        throw new StoreBusyError(
          `Another process held the database lock for over ${lockTimeoutMs} ms while ${doing}; nothing was written. Try again, or raise lockTimeoutMs.`,
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
  readonly #walSync: WalSync | null;
  readonly #checkpoints: CommitHooks | null;
  #pending: PendingWrite[] = [];
  #flushing: Promise<void> | null = null;
  #scheduled = false;

  /**
   * `walSync`: flush each committed batch with it before resolving (a connection at `synchronous = NORMAL` made durable).
   * `checkpoints`: told of each COMMIT, and asked before each `BEGIN` whether to wait (the WAL checkpointer, sqlite-checkpointer.ts).
   */
  constructor(db: Database.Database, lockTimeoutMs: number, walSync: WalSync | null = null, checkpoints: CommitHooks | null = null) {
    this.#db = db;
    this.#lockTimeoutMs = lockTimeoutMs;
    this.#walSync = walSync;
    this.#checkpoints = checkpoints;
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

  /**
   * Resolves once every write queued before this call is committed (or failed), so a read
   * after it sees them; their flush may still run (see {@link settled}).
   */
  async drain(): Promise<void> {
    while (this.#flushing !== null || this.#pending.length > 0) {
      await (this.#flushing ?? this.#startFlush());
    }
  }

  /** Resolves once every write queued before this call is committed and durable (or failed). */
  async settled(): Promise<void> {
    await this.drain();
    await this.#walSync?.settled();
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
      // Group commit: while the WAL flush of earlier commits runs, later writes gather into one
      // transaction. They lose nothing by waiting: a write is resolved only by a flush that
      // starts after its commit, so it would wait for this one to end either way.
      const flushing = this.#walSync?.running;
      if (flushing) await flushing;
      const batch = this.#pending.splice(0, MAX_BATCH);
      await this.#commitBatch(batch);
    }
  }

  async #commitBatch(batch: PendingWrite[]): Promise<void> {
    const db = this.#db;
    const paused = this.#checkpoints?.paused;
    if (paused) await paused;
    try {
      await beginImmediate(db, this.#lockTimeoutMs, batch[0]!.doing);
    } catch (error) {
      for (const op of batch) op.reject(error);
      return;
    }
    const t = tx(db);
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      if (batch.length === 1) {
        const op = batch[0]!;
        try {
          outcomes.push({ ok: true, value: op.run() });
        } catch (error) {
          t.rollback.run();
          op.reject(translateSqliteError(error, op.doing, db.name));
          return;
        }
      } else {
        for (const op of batch) {
          t.savepoint.run();
          try {
            const value = op.run();
            t.release.run();
            outcomes.push({ ok: true, value });
          } catch (error) {
            t.rollbackTo.run();
            t.release.run();
            outcomes.push({ ok: false, error: translateSqliteError(error, op.doing, db.name) });
          }
        }
      }
      t.commit.run();
    } catch (error) {
      if (db.inTransaction) t.rollback.run();
      const translated = translateSqliteError(error, "committing a write", db.name);
      for (const op of batch) op.reject(translated);
      return;
    }
    this.#checkpoints?.afterCommit();
    const walSync = this.#walSync;
    if (walSync === null) {
      settle(batch, outcomes, null);
      return;
    }
    const alone = batch.length === 1 && this.#pending.length === 0;
    walSync.afterCommit((error) => {
      settle(
        batch,
        outcomes,
        error === null
          ? null
          : new StoreError(
              `The write was committed but flushing ${this.#db.name}-wal to disk failed (${(error as Error).message ?? String(error)}); ` +
                "it may be lost on power failure. Check the disk, then verify the data.",
              { cause: error },
            ),
      );
    }, alone);
  }
}

function settle(batch: PendingWrite[], outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>, flushError: StoreError | null): void {
  batch.forEach((op, i) => {
    const outcome = outcomes[i]!;
    if (!outcome.ok) op.reject(outcome.error);
    else if (flushError !== null) op.reject(flushError);
    else op.resolve(outcome.value);
  });
}
