/**
 * The SQLite side of the store core: how reads and writes run (after this instance's
 * queued writes; through the group-commit write queue), and the statements only SQLite
 * has: the FTS5 search index kept in batches behind the transcript, `dbstat` sizes,
 * `VACUUM`, and the gateway state whose atomicity comes from the database-wide write lock.
 *
 * @module
 */
import { statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type { Handoff, Insights, LeaseFence, Page, Route, RouteFields, SearchHit, SearchOptions, StoreCapabilities, StoreStats } from "../contract.js";
import type { CheckedClaimHandoff, CheckedHandoffResult, CheckedNewHandoff } from "../handoff-input.js";
import type { CheckedListRoutes } from "../routing-input.js";
import type { RouteClaim, StoreDialect } from "../core/store-dialect.js";
import { indexAttachments } from "../core/attachment-steps.js";
import { checkFence } from "../core/lease-steps.js";
import { native, type Steps } from "../core/steps.js";
import { ConflictError, NotFoundError, StoreBusyError, StoreClosedError } from "../errors.js";
import type { CheckedInsightsOptions } from "../insights.js";
import type { NormalizedMessage } from "../input-validation.js";
import { toRoute } from "../route-rows.js";
import type { TextDecoder } from "../session-rows.js";
import type { UsageValueKind } from "../usage-update.js";
import type { SqliteConfig } from "./sqlite-config.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { isSqliteBusy, translateSqliteError } from "./sqlite-errors.js";
import { exportMessagesLine, registerExportFunctions } from "./sqlite-export.js";
import * as handoffs from "./sqlite-handoffs.js";
import { messageIndexText } from "./sqlite-migrations.js";
import { listRoutes, routeBySession, routeRow, storeRoute } from "./sqlite-routes.js";
import { EXPORTED_MESSAGE_COLUMNS, toExportedMessage, toMessage, type MessageRow } from "./sqlite-rows.js";
import {
  deferDeleteMerges,
  indexIsBehind,
  indexMergeStep,
  indexPendingStep,
  indexWatermark,
  INDEX_MERGE_STEP_PAGES,
  restoreDeleteMerges,
} from "./sqlite-search-index.js";
import { runSteps } from "./sqlite-steps.js";
import { bumpSummary, insertMessages, recomputeSummary, refreshLastActive, toStoredMessage, type StoredMessage } from "./sqlite-transcript.js";
import { SqliteWriteQueue } from "./sqlite-write-queue.js";
import { WalCheckpointer } from "./sqlite-checkpointer.js";
import { WalSync } from "./sqlite-wal-sync.js";

/** Appended messages gathered before they are indexed in one transaction. */
const INDEX_BATCH = 512;
/** After writes pause this long, what is left is indexed. */
const INDEX_IDLE_MS = 250;

/**
 * Pages one `incremental_vacuum` step gives back (4 KiB pages: 8 MiB). Measured on the
 * medium benchmark data set, a step holds the write lock for well under 100 ms.
 */
export const VACUUM_STEP_PAGES = 2_048;

/** The version a routing entry had when a write claimed it (`null`: new). */
interface SqliteRouteClaim extends RouteClaim {
  version: number | null;
}

const asIs: TextDecoder = (value) => value;

/** A {@link StoreDialect} on one SQLite connection. */
export class SqliteDialect implements StoreDialect<StoredMessage> {
  readonly capabilities: StoreCapabilities = { backend: "sqlite", multiProcess: true, multiHost: false };
  readonly location: string;
  readonly forUpdate = "";
  readonly forShare = "";
  readonly bytewiseOrder = "";
  readonly messageColumns = "*";
  readonly decodeText = asIs;
  readonly #conn: SqliteConnection;
  readonly #queue: SqliteWriteQueue;
  readonly #walSync: WalSync | null = null;
  readonly #checkpointer: WalCheckpointer | null = null;
  readonly #lockTimeoutMs: number;
  #closed = false;
  /** The FTS5 `deletemerge` setting to restore at the end of a prune batch (`null`: none held). */
  #heldDeleteMerge: number | null = null;
  #unindexed = 0;
  /** The search index's catch-up in progress, if any. */
  #indexing: Promise<void> | null = null;
  #indexTimer: NodeJS.Timeout | null = null;

  constructor(conn: SqliteConnection, config: Required<SqliteConfig>) {
    this.#conn = conn;
    this.location = config.path;
    registerExportFunctions(conn);
    // FULL durability without a flush inside COMMIT on the event loop: see sqlite-wal-sync.ts.
    if (config.synchronous === "FULL" && !conn.db.memory) {
      conn.db.pragma("synchronous = NORMAL");
      this.#walSync = new WalSync(conn.db.name);
    }
    // Checkpoints off the event loop: see sqlite-checkpointer.ts.
    if (!conn.db.memory) this.#checkpointer = new WalCheckpointer(conn.db);
    this.#queue = new SqliteWriteQueue(conn.db, config.lockTimeoutMs, this.#walSync, this.#checkpointer);
    this.#lockTimeoutMs = config.lockTimeoutMs;
  }

  get closed(): boolean {
    return this.#closed;
  }

  // --- plumbing ---------------------------------------------------------------

  /** Every read runs after all of this instance's queued writes (lanes included) have committed. */
  async read<T>(doing: string, steps: () => Steps<T>, _lane?: string): Promise<T> {
    return this.#readWith(doing, (conn) => runSteps(conn, steps()));
  }

  async #readWith<T>(doing: string, run: (conn: SqliteConnection) => T): Promise<T> {
    if (this.#closed) throw new StoreClosedError();
    await this.#queue.drain();
    if (this.#closed) throw new StoreClosedError();
    try {
      return run(this.#conn);
    } catch (error) {
      throw translateSqliteError(error, doing, this.location);
    }
  }

  write<T>(doing: string, steps: () => Steps<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    return this.#queue.write(doing, () => runSteps(this.#conn, steps()));
  }

  /** A write like any other: the write queue's transaction costs no round trip here. */
  writeStatement<T>(doing: string, steps: () => Steps<T>): Promise<T> {
    return this.write(doing, steps);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue.settled();
    if (this.#indexTimer !== null) clearTimeout(this.#indexTimer);
    this.#indexTimer = null;
    // Leave the index complete, so the next open searches without catching up.
    if (this.#unindexed > 0 || this.#indexing !== null) await this.#indexNow().catch(() => {});
    this.#closed = true;
    await this.#walSync?.close().catch(() => {});
    await this.#checkpointer?.close().catch(() => {});
    try {
      this.#conn.db.pragma("optimize");
    } catch {
      // best effort: another process may hold the lock
    }
    this.#conn.db.close();
  }

  // --- text, rows and SQL fragments -------------------------------------------

  encodeText(value: string | null): string | null {
    return value;
  }

  limitOffset(limit: number | null, offset: number): string {
    return ` LIMIT ${limit ?? -1} OFFSET ${offset}`;
  }

  usageParam(_kind: Exclude<UsageValueKind, "text">): string {
    return "?";
  }

  toMessage(row: unknown): ReturnType<typeof toMessage> {
    return toMessage(row as MessageRow);
  }

  readonly exportedMessageColumns = EXPORTED_MESSAGE_COLUMNS;
  readonly toExportedMessage = toExportedMessage;

  /** The line built by SQLite (see sqlite-export.ts): no message text becomes a JavaScript string. */
  exportLine(head: string, sessionId: string, includeRewound: boolean): Steps<Uint8Array | null> {
    return native((conn: SqliteConnection) => exportMessagesLine(conn, head, sessionId, includeRewound));
  }

  // --- transcript and search index --------------------------------------------

  storeMessage(message: NormalizedMessage, rewoundAt: number | null = null): StoredMessage {
    return toStoredMessage(message, rewoundAt);
  }

  *insertMessages(sessionId: string, messages: StoredMessage[]): Steps<number[]> {
    const ids = yield* native((conn: SqliteConnection) => insertMessages(conn, sessionId, messages));
    yield* this.#indexAttachments(sessionId, ids, messages);
    return ids;
  }

  /** The attachment parts of messages just inserted, in the reference index (see attachment-steps.ts). */
  *#indexAttachments(sessionId: string, ids: number[], messages: StoredMessage[]): Steps<void> {
    if (messages.some((m) => m.attachments.length > 0)) {
      yield* indexAttachments(
        sessionId,
        ids,
        messages.map((m) => m.attachments),
        this.encodeText,
        this,
      );
    }
  }

  *appendMessages(sessionId: string, messages: StoredMessage[]): Steps<number[]> {
    const ids = yield* this.#appendRows(sessionId, messages);
    yield* this.#indexAttachments(sessionId, ids, messages);
    return ids;
  }

  #appendRows(sessionId: string, messages: StoredMessage[]): Steps<number[]> {
    return native((conn: SqliteConnection) => {
      // The counter update only touches a live session, so it is also the liveness check; a
      // second look runs only when it changed nothing (or had nothing to count).
      if (!bumpSummary(conn, sessionId, messages)) {
        const row = conn.stmt("SELECT ended_at FROM sessions WHERE id = ?").get(sessionId) as { ended_at: number | null } | undefined;
        if (row === undefined) throw new NotFoundError(`No session with id "${sessionId}" to append to. Create it first.`);
        if (row.ended_at !== null) {
          throw new ConflictError(`Session "${sessionId}" has ended; reopen it (reopenSession) before appending.`, { sessionId });
        }
      }
      const ids = insertMessages(conn, sessionId, messages);
      this.#noteAppended(ids.length);
      return ids;
    });
  }

  /** The fence check and {@link appendMessages} as one write of the group-commit queue. */
  append(doing: string, sessionId: string, messages: StoredMessage[], fence: LeaseFence | null): Promise<number[]> {
    return this.write(doing, () => this.#appendSteps(sessionId, messages, fence));
  }

  *#appendSteps(sessionId: string, messages: StoredMessage[], fence: LeaseFence | null): Steps<number[]> {
    yield* checkFence(fence, this);
    return yield* this.appendMessages(sessionId, messages);
  }

  recomputeSummary(sessionId: string): Steps<void> {
    return native((conn: SqliteConnection) => recomputeSummary(conn, sessionId));
  }

  refreshLastActive(sessionId: string): Steps<void> {
    return native((conn: SqliteConnection) => refreshLastActive(conn, sessionId));
  }

  unindexFrom(sessionId: string, fromId: number): Steps<void> {
    return native((conn: SqliteConnection) => {
      conn
        .stmt(
          `DELETE FROM messages_fts WHERE rowid IN
             (SELECT id FROM messages WHERE session_id = ? AND id >= ? AND id <= ? AND rewound_at IS NULL)`,
        )
        .run(sessionId, fromId, indexWatermark(conn));
    });
  }

  reindex(rows: unknown[]): Steps<void> {
    return native((conn: SqliteConnection) => {
      const index = conn.stmt("INSERT INTO messages_fts(rowid, body) VALUES (?, ?)");
      const watermark = indexWatermark(conn);
      for (const row of rows as MessageRow[]) {
        // Rows beyond the watermark are indexed by the next catch-up.
        if (row.id <= watermark) index.run(row.id, messageIndexText(row.content, row.content_parts, row.tool_name, row.tool_calls));
      }
    });
  }

  async searchMessages(query: string, options: SearchOptions): Promise<SearchHit[]> {
    await this.#catchUpIndex();
    // Loaded when first used (with the query parser and snippets): opening and listing do not need it (issue 31).
    const { searchMessages } = await import("./sqlite-search.js");
    return this.#readWith("searching", (conn) => searchMessages(conn, query, options));
  }

  /** Indexes every message (from any process) that the search index has not seen yet. */
  async #catchUpIndex(): Promise<void> {
    if (this.#closed) throw new StoreClosedError();
    await this.#queue.drain();
    if (!indexIsBehind(this.#conn)) return;
    await this.#indexNow();
  }

  /**
   * Indexes everything beyond the watermark, in writes of at most `INDEX_STEP_ROWS` messages
   * each (this instance's other writes, and other processes', run in between). One catch-up at a
   * time: a call while one runs waits for it and then looks again.
   */
  #indexNow(): Promise<void> {
    this.#unindexed = 0;
    const run = (async () => {
      await this.#indexing?.catch(() => {});
      while (await this.#queue.write("updating the search index", () => indexPendingStep(this.#conn))) {
        if (this.#closed) return;
      }
    })();
    const tracked = run.finally(() => {
      if (this.#indexing === tracked) this.#indexing = null;
    });
    // The caller gets a failure through `run`; this copy only marks the catch-up as running, and
    // left unhandled it would be an unhandled rejection, which ends a Node process by default.
    tracked.catch(() => {});
    this.#indexing = tracked;
    return run;
  }

  /** Counts appended messages and indexes them in a batch once enough have gathered, or soon after writes pause. */
  #noteAppended(count: number): void {
    this.#unindexed += count;
    if (this.#unindexed >= INDEX_BATCH) {
      // A later catch-up (the next batch or search) retries a failure.
      void this.#indexNow().catch(() => {});
    }
    if (this.#indexTimer === null) {
      this.#indexTimer = setTimeout(() => {
        this.#indexTimer = null;
        if (this.#closed || this.#unindexed === 0) return;
        void this.#indexNow().catch(() => {});
      }, INDEX_IDLE_MS);
      this.#indexTimer.unref();
    }
  }

  /** FTS5 would merge the segments a prune batch's deletions empty inside the batch: not now. */
  holdIndexMerges(): Steps<void> {
    return native((conn: SqliteConnection) => {
      this.#heldDeleteMerge = deferDeleteMerges(conn);
    });
  }

  releaseIndexMerges(): Steps<void> {
    return native((conn: SqliteConnection) => {
      if (this.#heldDeleteMerge === null) return;
      restoreDeleteMerges(conn, this.#heldDeleteMerge);
      this.#heldDeleteMerge = null;
    });
  }

  /** SQLite's planner keeps no statistics we rely on (no `ANALYZE` tables): nothing to refresh. */
  /** After an import (or a prune): what it stored is indexed in the background, in bounded steps, not by the next search or append. */
  afterBulkChange(): void {
    if (this.#closed) return;
    void this.#indexNow().catch(() => {});
  }

  /**
   * Merges the search index's segments in steps of about {@link INDEX_MERGE_STEP_PAGES}
   * pages, each a write of its own, until FTS5 finds no work (best effort: stops if another
   * process keeps the database busy; a later prune, or FTS5's own automerge, goes on).
   */
  async mergeIndex(): Promise<void> {
    for (;;) {
      try {
        if (!(await this.#queue.write("merging the search index", () => indexMergeStep(this.#conn)))) return;
      } catch (error) {
        if (error instanceof StoreBusyError) return;
        throw error;
      }
    }
  }

  /**
   * Gives freed pages back to the file system and shrinks the WAL (after a prune that
   * removed rows). `full: false`: `PRAGMA incremental_vacuum` in steps of
   * {@link VACUUM_STEP_PAGES} pages, each a write of its own through the write queue (other
   * writers run between steps), on a file with `auto_vacuum = INCREMENTAL` (every file this
   * version creates); an older file keeps its free pages for reuse. `full: true`: one
   * `VACUUM` of the whole file, which also turns on incremental auto-vacuum for an older
   * file; it waits for other processes' locks up to `lockTimeoutMs`, then rejects with
   * `StoreBusyError`. Then the WAL is checkpointed (best effort: if another process keeps the
   * database busy, a later prune does it).
   */
  async compact({ full }: { full: boolean }): Promise<void> {
    if (full) await this.#vacuumFull();
    else await this.#vacuumIncrementally();
    await this.#readWith("checkpointing the WAL", (conn) => {
      try {
        // PASSIVE copies the WAL back without blocking writers; TRUNCATE then has little left to do.
        conn.db.pragma("wal_checkpoint(PASSIVE)");
        conn.db.pragma("wal_checkpoint(TRUNCATE)");
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
      }
    });
  }

  async #vacuumIncrementally(): Promise<void> {
    let left = Infinity;
    for (;;) {
      let now: number;
      try {
        now = await this.#queue.write("reclaiming free pages", () => incrementalVacuumStep(this.#conn));
      } catch (error) {
        if (error instanceof StoreBusyError) return; // best effort: a later prune goes on
        throw error;
      }
      // Done, or another process frees pages as fast as we return them: stop here either way.
      if (now === 0 || now >= left) return;
      left = now;
    }
  }

  async #vacuumFull(): Promise<void> {
    const deadline = Date.now() + this.#lockTimeoutMs;
    let backoffMs = 2;
    for (;;) {
      const busy = await this.#readWith("vacuuming the database", (conn) => {
        try {
          // Takes effect with this VACUUM on a file created without it (a no-op on a newer file).
          conn.db.pragma("auto_vacuum = INCREMENTAL");
          conn.db.exec("VACUUM");
          return null;
        } catch (error) {
          if (!isSqliteBusy(error)) throw error;
          return error;
        }
      });
      if (busy === null) {
        // VACUUM ran outside the write queue: flush what it wrote to the WAL, then move the
        // rewritten file out of the WAL, so the file on disk shrinks now, not at some later checkpoint.
        await this.#walSync?.flush();
        await this.#truncateWal(deadline);
        return;
      }
      if (Date.now() >= deadline) {
        throw new StoreBusyError(
          `Another process held the database lock for over ${this.#lockTimeoutMs} ms, so VACUUM could not run; nothing was rewritten. ` +
            "Try again when the database is quieter, or raise lockTimeoutMs.",
          { cause: busy },
        );
      }
      await sleep(backoffMs / 2 + Math.random() * backoffMs);
      backoffMs = Math.min(backoffMs * 2, 100);
    }
  }

  /**
   * `wal_checkpoint(TRUNCATE)` until it is not busy (another checkpoint or a reader in the way)
   * or `deadline` passes; a checkpoint cut short is only space not yet returned, never an error.
   */
  async #truncateWal(deadline: number): Promise<void> {
    let backoffMs = 2;
    for (;;) {
      const done = await this.#readWith("checkpointing after VACUUM", (conn) => {
        try {
          const [row] = conn.db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
          return row?.busy === 0;
        } catch (error) {
          if (!isSqliteBusy(error)) throw error;
          return false;
        }
      });
      if (done || Date.now() >= deadline) return;
      await sleep(backoffMs / 2 + Math.random() * backoffMs);
      backoffMs = Math.min(backoffMs * 2, 100);
    }
  }

  // --- stats ------------------------------------------------------------------

  stats(options: { searchIndexBytes?: boolean }): Promise<StoreStats> {
    return this.#readWith("reading stats", (conn) => {
      const totals = conn.stmt("SELECT count(*) AS sessions, coalesce(sum(message_count), 0) AS messages FROM sessions").get() as {
        sessions: number;
        messages: number;
      };
      const bySource = conn.stmt("SELECT source, count(*) AS n FROM sessions GROUP BY source ORDER BY source").all() as Array<{
        source: string;
        n: number;
      }>;
      const byModel = conn
        .stmt(
          `SELECT model, count(*) AS sessions, sum(input_tokens) AS inputTokens, sum(output_tokens) AS outputTokens,
                  sum(cache_read_tokens) AS cacheReadTokens, sum(cache_write_tokens) AS cacheWriteTokens,
                  sum(reasoning_tokens) AS reasoningTokens, sum(estimated_cost_usd) AS estimatedCostUsd,
                  coalesce(sum(actual_cost_usd), 0) AS actualCostUsd
             FROM sessions GROUP BY model ORDER BY sessions DESC, model`,
        )
        .all() as StoreStats["byModel"];
      return {
        totalSessions: totals.sessions,
        totalMessages: totals.messages,
        sessionsBySource: Object.fromEntries(bySource.map((r) => [r.source, r.n])),
        byModel,
        databaseBytes: fileBytes(this.location) + fileBytes(`${this.location}-wal`),
        searchIndexBytes: options.searchIndexBytes === false ? null : searchIndexBytes(conn),
      };
    });
  }

  async insights(checked: CheckedInsightsOptions): Promise<Insights> {
    const { readInsights } = await import("./sqlite-insights.js"); // loaded when first used (issue 31)
    return this.#readWith("reading insights", (conn) => readInsights(conn, checked));
  }

  // --- gateway state ----------------------------------------------------------

  getRoute(key: string): Steps<Route | null> {
    return native((conn: SqliteConnection) => {
      const row = routeRow(conn, key);
      return row === undefined ? null : toRoute(row);
    });
  }

  routeBySession(sessionId: string): Steps<Route | null> {
    return native((conn: SqliteConnection) => routeBySession(conn, sessionId));
  }

  listRoutes(options: CheckedListRoutes): Steps<Page<Route>> {
    return native((conn: SqliteConnection) => listRoutes(conn, options));
  }

  claimRoute(key: string, expectedVersion: number | null): Steps<RouteClaim | null> {
    // The write lock is the claim: no other writer runs until this transaction commits.
    return native((conn: SqliteConnection): SqliteRouteClaim | null => {
      const current = conn.stmt("SELECT version FROM routes WHERE key = ?").pluck().get(key) as number | bigint | undefined;
      const version = current === undefined ? null : Number(current);
      return version === expectedVersion ? { version } : null;
    });
  }

  storeRoute(claim: RouteClaim, key: string, route: RouteFields): Steps<Route> {
    const { version } = claim as SqliteRouteClaim;
    return native((conn: SqliteConnection) => storeRoute(conn, key, route, (version ?? 0) + 1, version !== null));
  }

  /** The write lock already serialises every writer. */
  *lockAliasNamespace(): Steps<void> {}

  /** The write lock already serialises every writer. */
  *lockQueue(): Steps<void> {}

  /** No-op: SQLite's write lock already excludes every other writer. */
  *lockPairing(): Steps<void> {}

  createHandoff(input: CheckedNewHandoff): Steps<Handoff> {
    return native((conn: SqliteConnection) => handoffs.createHandoff(conn, input));
  }

  getHandoff(id: string): Steps<Handoff | null> {
    return native((conn: SqliteConnection) => handoffs.getHandoff(conn, id));
  }

  claimHandoff(claim: CheckedClaimHandoff): Steps<Handoff | null> {
    return native((conn: SqliteConnection) => handoffs.claimHandoff(conn, claim));
  }

  finishHandoff(id: string, result: CheckedHandoffResult): Steps<Handoff> {
    return native((conn: SqliteConnection) => handoffs.finishHandoff(conn, id, result));
  }

  // --- execution sessions -----------------------------------------------------

  readonly greatest = "max";

  /** The write lock already serialises every writer. */
  *lockExecutions(): Steps<void> {}
}

/**
 * One bounded step of giving free pages back, inside a write: returns the free pages left
 * (0 on a file without incremental auto-vacuum, which keeps its free pages for reuse).
 */
function incrementalVacuumStep(conn: SqliteConnection): number {
  if (conn.db.pragma("auto_vacuum", { simple: true }) !== 2) return 0;
  conn.db.exec(`PRAGMA incremental_vacuum(${VACUUM_STEP_PAGES})`);
  return conn.db.pragma("freelist_count", { simple: true }) as number;
}

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function searchIndexBytes(conn: SqliteConnection): number | null {
  try {
    return (conn.stmt("SELECT sum(pgsize) FROM dbstat('main', 1) WHERE name LIKE 'messages_fts%'").pluck().get() as number | null) ?? 0;
  } catch {
    return null; // dbstat not compiled in
  }
}
