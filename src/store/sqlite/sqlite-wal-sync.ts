/**
 * Durable commits without blocking the event loop. With `synchronous = FULL` SQLite calls
 * `fsync` inside `COMMIT`, and better-sqlite3 runs `COMMIT` on the calling thread, so every
 * commit stalls the whole process for the disk's flush time. Instead the connection runs at
 * `synchronous = NORMAL` (in WAL mode SQLite still syncs around checkpoints, so the file
 * stays consistent) and the write queue makes each committed batch durable itself: it flushes
 * the WAL file with `fdatasync` on libuv's thread pool, and resolves a batch's promises only
 * after the flush that covers it. Writes that arrive meanwhile commit (to the WAL, not yet
 * flushed) and share the next flush: one flush for everything committed while the previous one
 * ran (group commit across calls, sessions and ticks).
 *
 * A commit that is alone (nothing else queued, no flush running: one caller writing at a time)
 * is flushed at once on the calling thread instead, as `FULL` would: handing a single flush to
 * the thread pool and back only adds latency when nothing else could run meanwhile. Under
 * concurrency batches hold several calls, or a flush is already running, and flushes move off
 * the event loop.
 *
 * A resolved write is as durable as with `FULL`. One difference: a read may see a commit whose
 * flush is still running (a power cut in that window loses it, as it would a write whose promise
 * had not resolved yet).
 *
 * @module
 */
import { closeSync, fdatasync, fdatasyncSync, openSync } from "node:fs";

/** Flushes one database's WAL file, one flush at a time, each covering every commit before it started. */
export class WalSync {
  readonly #walPath: string;
  #fd: number | null = null;
  /** Callbacks of commits not yet covered by a flush that has started. */
  #waiting: Array<(error: unknown) => void> = [];
  #running: Promise<void> | null = null;

  /** `databasePath`: the main database file (its WAL is `<path>-wal`). */
  constructor(databasePath: string) {
    this.#walPath = `${databasePath}-wal`;
  }

  /**
   * Called right after a COMMIT: `done` runs once a flush that started after this call has
   * finished (with `null`), or failed (with the error). `alone`: no other write is queued, so
   * an idle flusher flushes at once, synchronously.
   */
  afterCommit(done: (error: unknown) => void, alone = false): void {
    if (alone && this.#running === null && this.#waiting.length === 0) {
      let outcome: unknown = null;
      try {
        fdatasyncSync(this.#open());
      } catch (error) {
        outcome = error;
      }
      done(outcome);
      return;
    }
    this.#waiting.push(done);
    if (this.#running === null) this.#running = this.#loop();
  }

  /** The flush running now (it settles once no flush runs), or `null`. */
  get running(): Promise<void> | null {
    return this.#running;
  }

  /** Resolves once every commit reported so far is flushed (or its flush failed). */
  async settled(): Promise<void> {
    while (this.#running !== null) await this.#running;
  }

  /** Flushes now (after work outside the write queue, e.g. a VACUUM); rejects if the flush fails. */
  async flush(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.afterCommit((error) => (error === null ? resolve() : reject(error))));
  }

  /** Closes the WAL file (after {@link settled}). */
  async close(): Promise<void> {
    await this.settled();
    const fd = this.#fd;
    this.#fd = null;
    if (fd !== null) closeSync(fd);
  }

  /**
   * The WAL's file descriptor. The WAL exists from the connection's first transaction on and
   * keeps its inode while the connection is open (SQLite deletes it only when the last
   * connection closes).
   */
  #open(): number {
    this.#fd ??= openSync(this.#walPath, "r");
    return this.#fd;
  }

  async #loop(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const covered = this.#waiting;
        this.#waiting = [];
        let outcome: unknown = null;
        try {
          // Opened inside the promise: even a failure to open is reported after an await, so
          // this loop never finishes before `#running` is set.
          await new Promise<void>((resolve, reject) => fdatasync(this.#open(), (error) => (error === null ? resolve() : reject(error))));
        } catch (error) {
          outcome = error;
        }
        for (const done of covered) done(outcome);
      }
    } finally {
      this.#running = null;
    }
  }
}
