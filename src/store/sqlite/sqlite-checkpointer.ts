/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
 * takes the WAL past 1,000 pages, on the thread that commits: it copies the pages into the
 * database file and syncs both files, so under load one commit in a hundred stalled the whole
 * process for 2–14 ms. Instead the write queue's connection turns the automatic checkpoint off
 * and this class checkpoints on a worker thread with a connection of its own, once the WAL holds
 * {@link CHECKPOINT_PAGES} pages more than at the last checkpoint.
 *
 * The worker first runs a PASSIVE checkpoint, which never waits for readers or writers, so
 * commits go on while it copies the bulk of the pages (SQLite's own automatic checkpoint is
 * PASSIVE too). Writes that committed meanwhile would keep a PASSIVE checkpoint from ever
 * catching up under steady load, and the WAL restarts from its beginning only after one that
 * did; so a RESTART checkpoint follows, which holds the write lock only while it copies those few
 * pages and syncs, and lets the next write start the WAL over. This connection's write queue
 * pauses for it ({@link WalCheckpointer.paused}) rather than wait for the lock in SQLite's busy
 * handler, which would sleep on the event loop. The WAL's length is read from the wal-index
 * header in the `-shm` file (`mxFrame`, offset 16: https://www.sqlite.org/walformat.html), four
 * bytes per commit. If the worker cannot start or a checkpoint fails, the connection gets its
 * automatic checkpoint back, so the WAL never grows without bound.
 *
 * @module
 */
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { endianness } from "node:os";
import type { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

/** WAL pages written since the last checkpoint that start the next one (SQLite's automatic default). */
export const CHECKPOINT_PAGES = 1000;

/** How long the worker's RESTART waits for another process's write lock and for readers before it gives up until the next time. */
const RESTART_WAIT_MS = 20;

/**
 * The worker: one connection. "checkpoint": a PASSIVE checkpoint, then "restart?" to the
 * connection's thread, which pauses its write queue and answers "go"; then the RESTART, and
 * the outcome. "close": closes the connection.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
let db = null;
const failed = (error) => parentPort.postMessage({ ok: false, message: String((error && error.message) || error) });
parentPort.on("message", (message) => {
  try {
    if (message === "close") {
      if (db !== null) db.close();
      parentPort.close();
    } else if (message === "checkpoint") {
      db ??= new Database(workerData.path, { fileMustExist: true, timeout: workerData.restartWaitMs });
      db.pragma("wal_checkpoint(PASSIVE)");
      parentPort.postMessage("restart?");
    } else if (message === "go") {
      const [result] = db.pragma("wal_checkpoint(RESTART)");
      parentPort.postMessage({ ok: true, log: result.log, checkpointed: result.checkpointed });
    }
  } catch (error) {
    failed(error);
  }
});
`;

const LITTLE_ENDIAN = endianness() === "LE";

type WorkerReply = "restart?" | { ok: true; log: number; checkpointed: number } | { ok: false; message: string };

/** Checkpoints one database's WAL on a worker thread (started at the first checkpoint due). */
export class WalCheckpointer {
  readonly #db: Database.Database;
  readonly #shmPath: string;
  readonly #pages: number;
  readonly #header = Buffer.alloc(4);
  #shm: number | null = null;
  #worker: Worker | null = null;
  #exited: Promise<void> | null = null;
  /** `mxFrame` when the last checkpoint was asked for. */
  #base = 0;
  #running = false;
  #paused: Promise<void> | null = null;
  #resume: (() => void) | null = null;
  #failed = false;
  #closed = false;
  /** Checkpoints completed (for tests and diagnostics). */
  completed = 0;

  /** `db`: the write queue's connection (its automatic checkpoint is turned off here). */
  constructor(db: Database.Database, pages = CHECKPOINT_PAGES) {
    this.#db = db;
    this.#shmPath = `${db.name}-shm`;
    this.#pages = pages;
    db.pragma("wal_autocheckpoint = 0");
  }

  /** After a COMMIT: asks the worker for a checkpoint once enough pages have accumulated. */
  afterCommit(): void {
    if (this.#running || this.#failed || this.#closed) return;
    const frames = this.#walFrames();
    if (frames === null) return;
    if (frames < this.#base) this.#base = 0; // the WAL restarted from its beginning
    if (frames - this.#base < this.#pages) return;
    this.#base = frames;
    this.#running = true;
    try {
      (this.#worker ??= this.#start()).postMessage("checkpoint");
    } catch {
      this.#fallBack();
    }
  }

  /**
   * Null, or a promise to await before the next `BEGIN`: while the worker's RESTART runs it holds
   * the write lock, and a `BEGIN` would wait for it in SQLite's busy handler, asleep on this
   * thread; the write queue waits here instead, with the event loop free.
   */
  get paused(): Promise<void> | null {
    return this.#paused;
  }

  #unpause(): void {
    const resume = this.#resume;
    this.#paused = null;
    this.#resume = null;
    resume?.();
  }

  /** Stops the worker (waiting for a checkpoint in progress); the connection stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#shm !== null) closeSync(this.#shm);
    this.#shm = null;
    const worker = this.#worker;
    if (worker === null) return;
    // Keep the process up until the worker has closed its connection (it runs unreferenced).
    worker.ref();
    worker.postMessage("close");
    await this.#exited;
    this.#unpause();
  }

  /** Frames in the WAL (`mxFrame` of the wal-index header), or null if it cannot be read. */
  #walFrames(): number | null {
    try {
      this.#shm ??= openSync(this.#shmPath, "r");
      if (readSync(this.#shm, this.#header, 0, 4, 16) !== 4) return null;
      // The wal-index is in the machine's byte order.
      return LITTLE_ENDIAN ? this.#header.readUInt32LE(0) : this.#header.readUInt32BE(0);
    } catch {
      return null;
    }
  }

  #start(): Worker {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    // node:worker_threads is loaded with the first checkpoint, not with every store (issue 31).
    const { Worker } = createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads");
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path: this.#db.name, restartWaitMs: RESTART_WAIT_MS } });
    // A checkpoint never keeps the process alive: one cut short is redone by the next.
    worker.unref();
    this.#exited = new Promise((resolve) => worker.once("exit", () => resolve()));
    worker.on("message", (reply: WorkerReply) => {
      if (reply === "restart?") {
        // No transaction of this connection is open between ticks: hold the next one back.
        this.#paused ??= new Promise((resolve) => (this.#resume = resolve));
        worker.postMessage("go");
        return;
      }
      this.#running = false;
      this.#unpause();
      if (reply.ok) this.completed++;
      else this.#fallBack();
    });
    worker.on("error", () => this.#fallBack());
    worker.on("exit", () => this.#unpause());
    return worker;
  }

  /** The worker failed: give the connection its automatic checkpoint back. */
  #fallBack(): void {
    this.#failed = true;
    this.#running = false;
    this.#unpause();
    try {
      if (this.#db.open) this.#db.pragma(`wal_autocheckpoint = ${this.#pages}`);
    } catch {
      // the connection is closing; nothing to restore
    }
  }
}
