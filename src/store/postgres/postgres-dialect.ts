/**
 * The PostgreSQL side of the store core: how reads and writes run (a pooled client per
 * transaction, retried on serialization failures and deadlocks; per-session lanes so one
 * instance's writes to a session land in call order; an append as one prepared statement outside
 * BEGIN/COMMIT, in one round trip, and appends to different sessions waiting at the same moment
 * as one such statement, one commit: `postgres-append-queue.ts`), the NUL escape of free text, row locks
 * (`FOR UPDATE`), and the statements only PostgreSQL has: tsvector search maintained with
 * each insert, and the gateway state guarded by row locks rather than one database lock.
 *
 * @module
 */
import type pg from "pg";
import type { Handoff, Insights, LeaseFence, Message, Page, Route, RouteFields, SearchHit, SearchOptions, StoreCapabilities, StoreStats } from "../contract.js";
import { indexAttachments } from "../core/attachment-steps.js";
import { checkFence } from "../core/lease-steps.js";
import { native, type Steps } from "../core/steps.js";
import type { RouteClaim, StoreDialect } from "../core/store-dialect.js";
import { StoreClosedError } from "../errors.js";
import type { CheckedClaimHandoff, CheckedHandoffResult, CheckedNewHandoff } from "../handoff-input.js";
import type { NormalizedMessage } from "../input-validation.js";
import type { CheckedInsightsOptions } from "../insights.js";
import type { RouteRow } from "../route-rows.js";
import type { CheckedListRoutes } from "../routing-input.js";
import type { UsageValueKind } from "../usage-update.js";
import { AppendQueue, appendRefused } from "./postgres-append-queue.js";
import { Sql } from "./postgres-connection.js";
import { isRetryable, translatePostgresError } from "./postgres-errors.js";
import * as handoffs from "./postgres-handoffs.js";
import { readInsights } from "./postgres-insights.js";
import { insertRouteIfAbsent, listRoutes, routeBySession, routeRow, toRoute, updateRoute } from "./postgres-routes.js";
import { decodeText, encodeText, EXPORTED_MESSAGE_COLUMNS, MESSAGE_COLUMNS, toExportedMessage, toMessage, type MessageRow } from "./postgres-rows.js";
import { searchMessages } from "./postgres-search.js";
import { PlannerStatistics } from "./postgres-statistics.js";
import { runSteps } from "./postgres-steps.js";
import { insertMessages, lockAndBumpForAppend, recomputeSummary, refreshLastActive, toStoredMessage, type StoredMessage } from "./postgres-transcript.js";

/** How often a write transaction is retried after a serialization failure or deadlock. */
const MAX_ATTEMPTS = 8;

/** The PostgreSQL type a numeric usage parameter is cast to. */
const USAGE_SQL_TYPES: Record<Exclude<UsageValueKind, "text">, string> = { integer: "bigint", real: "double precision" };

/** Class id of the per-namespace alias advisory lock (two-key form; "tla" + 1). */
const ALIAS_LOCK_CLASS = 0x746c6101;

/** Class id of the per-key queue advisory lock (two-key form; "tla" + 2). */
const QUEUE_LOCK_CLASS = 0x746c6102;

/** Class id of the per-platform pairing advisory lock (two-key form; "tla" + 4; + 3 is the analyse lock). */
const PAIRING_LOCK_CLASS = 0x746c6104;

/**
 * Append batches on the server at once: one. While it runs, every append that arrives waits and
 * leaves with the next batch, so concurrent sessions share one statement and one commit (one WAL
 * flush) instead of each paying its own. Measured (docs/benchmarks.md, "PostgreSQL writes and
 * group commit"): at 10 concurrent sessions 1 in flight reached 3,400–5,200 appends/s where 8 in
 * flight (the pool but two) reached 2,650–2,800, and 100 sessions did as well or better; a lone
 * append still goes at once, as its own statement.
 */
const APPEND_BATCHES_IN_FLIGHT = 1;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A route claimed by a write: the row inserted for a new key, else nothing (the existing row is locked). */
interface PostgresRouteClaim extends RouteClaim {
  inserted: RouteRow | undefined;
}

/** A {@link StoreDialect} on a node-postgres pool. */
export class PostgresDialect implements StoreDialect<StoredMessage> {
  readonly capabilities: StoreCapabilities = { backend: "postgres", multiProcess: true, multiHost: true };
  readonly location: string;
  readonly forUpdate = " FOR UPDATE";
  readonly forShare = " FOR SHARE";
  readonly bytewiseOrder = ' COLLATE "C"';
  readonly messageColumns = MESSAGE_COLUMNS;
  readonly decodeText = decodeText;
  readonly #pool: pg.Pool;
  readonly #sql: Sql;
  readonly #pending = new Set<Promise<unknown>>();
  /** The last write queued per lane: one instance's writes to a session (or queue) run in call order. */
  readonly #lanes = new Map<string, Promise<unknown>>();
  /** Runs `ANALYZE` in the background once enough rows were written (`postgres-statistics.ts`). */
  readonly #statistics: PlannerStatistics;
  /** Group commit: appends to different sessions waiting at the same moment share one statement and one commit. */
  readonly #appends: AppendQueue;
  #closed = false;

  constructor(pool: pg.Pool, location: string, options: { autoAnalyze: boolean } = { autoAnalyze: true }) {
    this.#pool = pool;
    this.#sql = new Sql(pool);
    this.location = location;
    this.#statistics = new PlannerStatistics(pool, { enabled: options.autoAnalyze });
    this.#appends = new AppendQueue(this.#sql, location, (rows) => this.#statistics.wrote(rows), APPEND_BATCHES_IN_FLIGHT);
  }

  get closed(): boolean {
    return this.#closed;
  }

  // --- plumbing ---------------------------------------------------------------

  #track<T>(promise: Promise<T>): Promise<T> {
    this.#pending.add(promise);
    const done = (): void => {
      this.#pending.delete(promise);
    };
    promise.then(done, done);
    return promise;
  }

  async read<T>(doing: string, steps: () => Steps<T>, lane?: string): Promise<T> {
    if (lane === undefined) return this.#readWith(doing, (sql) => runSteps(sql, steps()));
    if (this.#closed) throw new StoreClosedError();
    return this.#inLane(lane, () => this.#readWith(doing, (sql) => runSteps(sql, steps())));
  }

  async #readWith<T>(doing: string, run: (sql: Sql) => Promise<T>): Promise<T> {
    if (this.#closed) throw new StoreClosedError();
    return this.#track(
      (async () => {
        try {
          return await run(this.#sql);
        } catch (error) {
          throw translatePostgresError(error, doing, this.location);
        }
      })(),
    );
  }

  /**
   * Runs `steps` in a transaction. With a `lane`, it starts only after this instance's earlier
   * writes in that lane have settled, so calls land in call order.
   */
  async write<T>(doing: string, steps: () => Steps<T>, lane?: string): Promise<T> {
    if (this.#closed) throw new StoreClosedError();
    return this.#inLane(lane, () => this.#transaction(doing, (sql) => runSteps(sql, steps())));
  }

  /** One statement outside BEGIN/COMMIT (its own transaction): one round trip instead of three. */
  async writeStatement<T>(doing: string, steps: () => Steps<T>, lane?: string): Promise<T> {
    if (this.#closed) throw new StoreClosedError();
    return this.#inLane(lane, () => this.#statement(doing, (sql) => runSteps(sql, steps())));
  }

  /** Runs `run` after this instance's earlier writes in `lane` have settled (at once without a lane). */
  #inLane<T>(lane: string | undefined, run: () => Promise<T>): Promise<T> {
    if (lane === undefined) return this.#track(run());
    const previous = this.#lanes.get(lane);
    const next = previous === undefined ? run() : previous.then(run, run);
    this.#lanes.set(lane, next);
    const clear = (): void => {
      if (this.#lanes.get(lane) === next) this.#lanes.delete(lane);
    };
    next.then(clear, clear);
    return this.#track(next);
  }

  async #transaction<T>(doing: string, run: (sql: Sql) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (error) {
        throw translatePostgresError(error, doing, this.location);
      }
      let broken = false;
      try {
        await client.query("BEGIN");
        const result = await run(new Sql(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {
          broken = true;
        });
        if (isRetryable(error) && attempt < MAX_ATTEMPTS) {
          await sleep(Math.random() * 10 * attempt);
          continue;
        }
        throw translatePostgresError(error, doing, this.location);
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * Runs one statement outside BEGIN/COMMIT on a pooled connection (one round trip; a single
   * statement is its own transaction), retried like a transaction on serialization failures
   * and deadlocks (a failed statement has written nothing).
   */
  async #statement<T>(doing: string, run: (sql: Sql) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run(this.#sql);
      } catch (error) {
        if (isRetryable(error) && attempt < MAX_ATTEMPTS) {
          await sleep(Math.random() * 10 * attempt);
          continue;
        }
        throw translatePostgresError(error, doing, this.location);
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#statistics.stop();
    await Promise.allSettled([...this.#pending]);
    await this.#pool.end();
  }

  // --- text, rows and SQL fragments -------------------------------------------

  encodeText(value: string | null): string | null {
    return encodeText(value);
  }

  limitOffset(limit: number | null, offset: number): string {
    return `${limit === null ? "" : ` LIMIT ${limit}`}${offset === 0 ? "" : ` OFFSET ${offset}`}`;
  }

  usageParam(kind: Exclude<UsageValueKind, "text">): string {
    return `?::${USAGE_SQL_TYPES[kind]}`;
  }

  toMessage(row: unknown): Message {
    return toMessage(row as MessageRow);
  }

  readonly exportedMessageColumns = EXPORTED_MESSAGE_COLUMNS;
  readonly toExportedMessage = toExportedMessage;

  // --- transcript and search index --------------------------------------------

  storeMessage(message: NormalizedMessage, rewoundAt: number | null = null): StoredMessage {
    return toStoredMessage(message, rewoundAt);
  }

  *insertMessages(sessionId: string, messages: StoredMessage[]): Steps<number[]> {
    const ids = yield* native(async (sql: Sql) => {
      const ids = await insertMessages(sql, sessionId, messages);
      this.#statistics.wrote(ids.length);
      return ids;
    });
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
        encodeText,
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
    return native(async (sql: Sql) => {
      // The row lock (taken by the counter update) serialises every writer of this
      // session, in any process, until commit: a turn's ids stay contiguous.
      if (!(await lockAndBumpForAppend(sql, sessionId, messages))) {
        throw await appendRefused(sql, sessionId);
      }
      const ids = await insertMessages(sql, sessionId, messages);
      this.#statistics.wrote(ids.length);
      return ids;
    });
  }

  /**
   * In the session's lane, through the group commit (`postgres-append-queue.ts`): appends to
   * different sessions waiting at the same moment go as one statement, its own transaction,
   * with the fences, the sessions' counters, the rows with their search vectors and the tool
   * tallies; each append is written only if its session is live and its fence holds, and
   * resolves once that statement committed. A lone append is one statement, one round trip.
   */
  append(doing: string, sessionId: string, messages: StoredMessage[], fence: LeaseFence | null): Promise<number[]> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    // Attachments are indexed in the same transaction: the fence check and appendMessages, in the session's lane.
    if (messages.some((m) => m.attachments.length > 0)) return this.write(doing, () => this.#fencedAppend(sessionId, messages, fence), sessionId);
    return this.#inLane(sessionId, () => this.#appends.append(doing, sessionId, messages, fence));
  }

  *#fencedAppend(sessionId: string, messages: StoredMessage[], fence: LeaseFence | null): Steps<number[]> {
    yield* checkFence(fence, this);
    return yield* this.appendMessages(sessionId, messages);
  }

  recomputeSummary(sessionId: string): Steps<void> {
    return native((sql: Sql) => recomputeSummary(sql, sessionId));
  }

  refreshLastActive(sessionId: string): Steps<void> {
    return native((sql: Sql) => refreshLastActive(sql, sessionId));
  }

  /** Search reads visibility from the rows themselves: nothing to drop. */
  *unindexFrom(): Steps<void> {}

  /** The search vectors stayed on the rows: nothing to add back. */
  *reindex(): Steps<void> {}

  searchMessages(query: string, options: SearchOptions): Promise<SearchHit[]> {
    return this.#readWith("searching", (sql) => searchMessages(sql, query, options));
  }

  /** The GIN index needs no upkeep held back from a prune batch. */
  *holdIndexMerges(): Steps<void> {}

  /** The GIN index needs no upkeep held back from a prune batch. */
  *releaseIndexMerges(): Steps<void> {}

  /** Nothing was held back. */
  async mergeIndex(): Promise<void> {}

  /** A background check of the planner statistics (`ANALYZE` when enough rows changed); never awaited, never throws. */
  afterBulkChange(): void {
    if (!this.#closed) this.#statistics.check();
  }

  /** Space is reclaimed by autovacuum for reuse; no `VACUUM FULL` (it would lock the tables against every other process). */
  async compact(_options: { full: boolean }): Promise<void> {}

  // --- stats ------------------------------------------------------------------

  stats(options: { searchIndexBytes?: boolean }): Promise<StoreStats> {
    return this.#readWith("reading stats", async (sql) => {
      const totals = (await sql.one<{ sessions: number; messages: number }>(
        "SELECT count(*)::int AS sessions, coalesce(sum(message_count), 0)::bigint AS messages FROM sessions",
      ))!;
      const bySource = await sql.all<{ source: string; n: number }>("SELECT source, count(*)::int AS n FROM sessions GROUP BY source ORDER BY source");
      const byModel = await sql.all<StoreStats["byModel"][number]>(
        `SELECT model, count(*)::int AS sessions, sum(input_tokens)::bigint AS "inputTokens",
                sum(output_tokens)::bigint AS "outputTokens", sum(cache_read_tokens)::bigint AS "cacheReadTokens",
                sum(cache_write_tokens)::bigint AS "cacheWriteTokens", sum(reasoning_tokens)::bigint AS "reasoningTokens",
                sum(estimated_cost_usd) AS "estimatedCostUsd", coalesce(sum(actual_cost_usd), 0) AS "actualCostUsd"
           FROM sessions GROUP BY model ORDER BY count(*) DESC, model NULLS FIRST`,
      );
      const sizes = (await sql.one<{ total: number; search: number }>(
        `SELECT (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
                   FROM pg_class c WHERE c.relnamespace = to_regnamespace(current_schema()) AND c.relkind = 'r') AS total,
                coalesce(pg_relation_size(to_regclass('messages_search')), 0)::bigint AS search`,
      ))!;
      return {
        totalSessions: totals.sessions,
        totalMessages: totals.messages,
        sessionsBySource: Object.fromEntries(bySource.map((r) => [r.source, r.n])),
        byModel: byModel.map((m) => ({ ...m, model: m.model === null ? null : decodeText(m.model) })),
        databaseBytes: sizes.total,
        searchIndexBytes: options.searchIndexBytes === false ? null : sizes.search,
      };
    });
  }

  insights(checked: CheckedInsightsOptions): Promise<Insights> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    // One snapshot for every figure: a read-only REPEATABLE READ transaction.
    return this.#track(
      this.#transaction("reading insights", async (sql) => {
        await sql.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
        return readInsights(sql, checked);
      }),
    );
  }

  // --- gateway state ----------------------------------------------------------

  getRoute(key: string): Steps<Route | null> {
    return native(async (sql: Sql) => {
      const row = await routeRow(sql, key);
      return row === undefined ? null : toRoute(row);
    });
  }

  routeBySession(sessionId: string): Steps<Route | null> {
    return native((sql: Sql) => routeBySession(sql, sessionId));
  }

  listRoutes(options: CheckedListRoutes): Steps<Page<Route>> {
    return native((sql: Sql) => listRoutes(sql, options));
  }

  /**
   * A new key is claimed by `INSERT … ON CONFLICT DO NOTHING`, an existing one by its row
   * lock, so a concurrent writer of the key in any process waits and then sees the new version.
   */
  claimRoute(key: string, expectedVersion: number | null, route: RouteFields): Steps<RouteClaim | null> {
    return native(async (sql: Sql): Promise<PostgresRouteClaim | null> => {
      if (expectedVersion === null) {
        const inserted = await insertRouteIfAbsent(sql, key, route);
        return inserted === undefined ? null : { inserted };
      }
      const current = await routeRow(sql, key, true);
      return current === undefined || Number(current.version) !== expectedVersion ? null : { inserted: undefined };
    });
  }

  storeRoute(claim: RouteClaim, key: string, route: RouteFields, expectedVersion: number | null): Steps<Route> {
    const { inserted } = claim as PostgresRouteClaim;
    return native(async (sql: Sql) => toRoute(inserted ?? (await updateRoute(sql, key, route, expectedVersion! + 1))));
  }

  /** A transaction-scoped advisory lock per namespace: concurrent merges in any process never leave a group split. */
  lockAliasNamespace(namespace: string): Steps<void> {
    return native(async (sql: Sql) => {
      await sql.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [ALIAS_LOCK_CLASS, namespace]);
    });
  }

  /** A transaction-scoped advisory lock per key: queue writers in any process are serialised per key. */
  lockQueue(key: string): Steps<void> {
    return native(async (sql: Sql) => {
      await sql.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [QUEUE_LOCK_CLASS, key]);
    });
  }

  /** A transaction-scoped advisory lock per platform: pairing writers in any process are serialised per platform. */
  lockPairing(platform: string): Steps<void> {
    return native(async (sql: Sql) => {
      await sql.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [PAIRING_LOCK_CLASS, platform]);
    });
  }

  createHandoff(input: CheckedNewHandoff): Steps<Handoff> {
    return native((sql: Sql) => handoffs.createHandoff(sql, input));
  }

  getHandoff(id: string): Steps<Handoff | null> {
    return native((sql: Sql) => handoffs.getHandoff(sql, id));
  }

  /** One statement: the oldest pending row is picked `FOR UPDATE SKIP LOCKED` and moved to running. */
  claimHandoff(claim: CheckedClaimHandoff): Steps<Handoff | null> {
    return native((sql: Sql) => handoffs.claimHandoff(sql, claim));
  }

  finishHandoff(id: string, result: CheckedHandoffResult): Steps<Handoff> {
    return native((sql: Sql) => handoffs.finishHandoff(sql, id, result));
  }

  // --- execution sessions -----------------------------------------------------

  readonly greatest = "greatest";

  /** A transaction-scoped advisory lock per id, taken in id order: writers of the same records in any process queue up. */
  lockExecutions(ids: string[]): Steps<void> {
    return native(async (sql: Sql) => {
      for (const id of ids) await sql.run("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`threadline.execution:${id}`]);
    });
  }
}
