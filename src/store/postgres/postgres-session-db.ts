/**
 * The PostgreSQL implementation of {@link SessionDB} (node-postgres pool, one
 * schema, tsvector + GIN search).
 *
 * Every write is one transaction, retried on serialization failures and deadlocks.
 * Writes to a session first lock its row (`SELECT … FOR UPDATE`), so appends from
 * any number of processes are serialised per session: a turn's messages stay
 * contiguous and counters stay exact.
 *
 * @module
 */
import type pg from "pg";
import type {
  AutoPruneOptions,
  ClaimHandoffOptions,
  ConversationMessage,
  ConversationOptions,
  MessageWindowOptions,
  EnqueueResult,
  ExecutionChange,
  ExecutionChangeResult,
  ExecutionRecord,
  ExecutionSummary,
  ExportOptions,
  FindExecutionsOptions,
  ListExecutionUnitsOptions,
  ListExecutionsOptions,
  FencedWriteOptions,
  Handoff,
  HandoffResult,
  ImportReport,
  Lease,
  LeaseOptions,
  ListRoutesOptions,
  ListSessionsOptions,
  Message,
  NewHandoff,
  NewMessage,
  NewQueuedEvent,
  NewSession,
  Page,
  PruneOptions,
  QueuedItem,
  RewindResult,
  Route,
  RouteWrite,
  SearchHit,
  SearchOptions,
  Session,
  SessionDB,
  SessionRecord,
  SessionSummary,
  SessionUpdate,
  SessionUsage,
  StoreCapabilities,
  StoreStats,
  UsageUpdate,
  Insights,
  InsightsOptions,
} from "../contract.js";
import { checkInsightsOptions } from "../insights.js";
import { readInsights } from "./postgres-insights.js";
import { conversationOf } from "../conversation.js";
import { ConflictError, InvalidInputError, NotFoundError, StoreClosedError } from "../errors.js";
import {
  checkId,
  checkMessageWindow,
  checkNameList,
  checkNewSession,
  checkPruneOptions,
  checkSessionUpdate,
  checkTime,
  normalizeMessage,
  optionalText,
  prepareNewSession,
  toJson,
  type PreparedSession,
} from "../input-validation.js";
import { contentText } from "../preview.js";
import type { RouteRow } from "../route-rows.js";
import {
  checkItemId,
  checkLeaseRequest,
  checkLeaseToken,
  checkListRoutes,
  checkPathSafe,
  checkQueuedEvent,
  checkRouteWrite,
  fenceOf,
} from "../routing-input.js";
import { runImport, type ImportOutcome } from "../session-import.js";
import { toSessionRecord, type ValidRecord } from "../session-record.js";
import { formatLineageTitle, parseLineageTitle, sanitizeTitle } from "../titles.js";
import { listAliases, recordAlias, resolveAlias } from "./postgres-aliases.js";
import { redactPassword, resolvePostgresConfig, type PostgresConfig } from "./postgres-config.js";
import { createPool, Sql } from "./postgres-connection.js";
import { isRetryable, translatePostgresError } from "./postgres-errors.js";
import {
  ancestorRows,
  childIds,
  COMPRESSION,
  compressionTip,
  descendantRows,
  refreshChain,
  sessionRow,
} from "./postgres-lineage.js";
import { listSessions } from "./postgres-listing.js";
import * as executions from "./postgres-executions.js";
import {
  checkExecutionChange,
  checkFindExecutions,
  checkListExecutionUnits,
  checkListExecutions,
  checkUserIdFilter,
} from "../execution-input.js";
import { migrate } from "./postgres-migrations.js";
import {
  decodeText,
  encodeText,
  MESSAGE_COLUMNS,
  rowContent,
  toMessage,
  toSession,
  toUsage,
  type MessageRow,
  type SessionRow,
} from "./postgres-rows.js";
import { claimQueued, clearQueue, completeQueued, enqueue, queueItems } from "./postgres-queue.js";
import * as leases from "./postgres-leases.js";
import * as handoffs from "./postgres-handoffs.js";
import { checkClaimHandoff, checkHandoffResult, checkNewHandoff } from "../handoff-input.js";
import { insertRouteIfAbsent, listRoutes, routeBySession, routeRow, toRoute, updateRoute } from "./postgres-routes.js";
import { searchMessages } from "./postgres-search.js";
import {
  insertMessages,
  lockAndBumpForAppend,
  recomputeSummary,
  refreshLastActive,
  toStoredMessage,
  type StoredMessage,
} from "./postgres-transcript.js";
import {
  assertUsageNotNegative,
  checkUsageMode,
  planUsageUpdate,
  usageSetClauses,
  type UsagePlan,
  type UsageValueKind,
} from "../usage-update.js";

const DAY_SECONDS = 86_400;
const AUTO_PRUNE_META_KEY = "auto_prune.last_run_at";
/** How often a write transaction is retried after a serialization failure or deadlock. */
const MAX_ATTEMPTS = 8;

/** The PostgreSQL type a numeric usage parameter is cast to. */
const USAGE_SQL_TYPES: Record<Exclude<UsageValueKind, "text">, string> = { integer: "bigint", real: "double precision" };

const now = (): number => Date.now() / 1000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A {@link SessionDB} in one PostgreSQL schema. Open it with
 * {@link PostgresSessionDB.open} (or `openSessionDB("postgres://…")`).
 *
 * @example
 * const db = await PostgresSessionDB.open({ connectionString: "postgres://127.0.0.1:5432/app" });
 * const s = await db.createSession({ source: "api-server" });
 * await db.appendMessage(s.id, { role: "user", content: "hello" });
 * await db.close();
 */
export class PostgresSessionDB implements SessionDB {
  readonly capabilities: StoreCapabilities = { backend: "postgres", multiProcess: true, multiHost: true };
  readonly location: string;
  /** The schema holding the tables. */
  readonly schema: string;
  readonly #pool: pg.Pool;
  readonly #sql: Sql;
  readonly #pending = new Set<Promise<unknown>>();
  /** The last write queued per session: one instance's writes to a session run in call order. */
  readonly #lanes = new Map<string, Promise<unknown>>();
  #closed = false;

  private constructor(pool: pg.Pool, config: Required<PostgresConfig>) {
    this.#pool = pool;
    this.#sql = new Sql(pool);
    this.location = redactPassword(config.connectionString);
    this.schema = config.schema;
  }

  /** Connects, creates the schema if missing and migrates it (under an advisory lock). */
  static async open(config: PostgresConfig): Promise<PostgresSessionDB> {
    const resolved = resolvePostgresConfig(config);
    const pool = createPool(resolved);
    const location = redactPassword(resolved.connectionString);
    try {
      const client = await pool.connect();
      try {
        await migrate(client, resolved.schema);
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => {});
      throw translatePostgresError(error, "opening the database", location);
    }
    return new PostgresSessionDB(pool, resolved);
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

  async #read<T>(doing: string, run: (sql: Sql) => Promise<T>): Promise<T> {
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
   * Runs `run` in a transaction. With a `lane` (a session id), it starts only after this
   * instance's earlier writes in that lane have settled, so calls land in call order.
   */
  async #write<T>(doing: string, run: (sql: Sql) => Promise<T>, lane?: string): Promise<T> {
    if (this.#closed) throw new StoreClosedError();
    if (lane === undefined) return this.#track(this.#transaction(doing, run));
    const previous = this.#lanes.get(lane);
    const next = (previous === undefined ? this.#transaction(doing, run) : previous.then(
      () => this.#transaction(doing, run),
      () => this.#transaction(doing, run),
    ));
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

  async #requireRow(sql: Sql, id: string, lock = false): Promise<SessionRow> {
    const row = await sessionRow(sql, id, lock);
    if (row === undefined) {
      throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
    }
    return row;
  }

  // --- sessions ---------------------------------------------------------------

  async createSession(input: NewSession): Promise<Session> {
    checkNewSession(input);
    const prepared = prepareNewSession(input, now());
    return this.#write(`creating session ${prepared.id}`, (sql) => this.#insertSession(sql, input, prepared));
  }

  /** Inserts a checked new session (inside a write transaction). */
  async #insertSession(sql: Sql, input: NewSession, prepared: PreparedSession): Promise<Session> {
    const { id, startedAt, title, modelConfig } = prepared;
    if ((await sessionRow(sql, id)) !== undefined) {
      throw new ConflictError(`A session with id "${id}" already exists; choose another id.`, { sessionId: id });
    }
    const parentId = input.parentSessionId ?? null;
    if (parentId !== null && (await sessionRow(sql, parentId, true)) === undefined) {
      throw new NotFoundError(`The parent session "${parentId}" does not exist.`);
    }
    if (title !== null) await this.#assertTitleFree(sql, title, id, parentId);
    const lineage = title === null ? null : parseLineageTitle(title);
    await sql.run(
      `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
         title, title_base, title_n, session_key, chat_id, chat_type, thread_id, last_active_at, chain_started_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $8, $8)`,
      [
        id,
        input.source,
        encodeText(input.userId ?? null),
        encodeText(input.model ?? null),
        modelConfig,
        encodeText(input.systemPrompt ?? null),
        parentId,
        startedAt,
        title,
        lineage?.base ?? null,
        lineage?.n ?? null,
        encodeText(input.sessionKey ?? null),
        encodeText(input.chatId ?? null),
        encodeText(input.chatType ?? null),
        encodeText(input.threadId ?? null),
      ],
    );
    await refreshChain(sql, parentId ?? id);
    return toSession(await this.#requireRow(sql, id));
  }

  async getSession(id: string): Promise<Session | null> {
    checkId(id, "id");
    return this.#read("reading a session", async (sql) => {
      const row = await sessionRow(sql, id);
      return row === undefined ? null : toSession(row);
    });
  }

  async endSession(id: string, reason: string, options: { endedAt?: number } = {}): Promise<boolean> {
    checkId(id, "id");
    checkId(reason, "reason");
    const endedAt = checkTime(options.endedAt, "endedAt", now());
    return this.#write(`ending session ${id}`, (sql) => this.#endSessionRow(sql, id, reason, endedAt));
  }

  /** Ends a session (inside a write transaction); false when it had already ended. */
  async #endSessionRow(sql: Sql, id: string, reason: string, endedAt: number): Promise<boolean> {
    const row = await this.#requireRow(sql, id, true);
    if (row.ended_at !== null) return false;
    await sql.run("UPDATE sessions SET ended_at = $1, end_reason = $2 WHERE id = $3", [endedAt, reason, id]);
    await refreshLastActive(sql, id);
    if (reason === COMPRESSION) await refreshChain(sql, id);
    return true;
  }

  async reopenSession(id: string): Promise<boolean> {
    checkId(id, "id");
    return this.#write(`reopening session ${id}`, (sql) => this.#reopenSessionRow(sql, id));
  }

  /** Reopens a session (inside a write transaction); false when it was not ended. */
  async #reopenSessionRow(sql: Sql, id: string): Promise<boolean> {
    const row = await this.#requireRow(sql, id, true);
    if (row.ended_at === null) return false;
    await sql.run("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = $1", [id]);
    await refreshLastActive(sql, id);
    if (row.end_reason === COMPRESSION) await refreshChain(sql, id);
    return true;
  }

  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    if (this.#closed) throw new StoreClosedError();
    if (typeof idOrPrefix !== "string" || idOrPrefix === "" || idOrPrefix.includes("\u0000")) return null;
    return this.#read("resolving a session id", async (sql) => {
      if ((await sessionRow(sql, idOrPrefix)) !== undefined) return idOrPrefix;
      // Range scan on the primary key (binary collation): ids in [prefix, prefix + U+FFFF).
      const matches = await sql.column<string>("SELECT id FROM sessions WHERE id >= $1 AND id < $2 ORDER BY id LIMIT 2", [
        idOrPrefix,
        `${idOrPrefix}\uffff`,
      ]);
      return matches.length === 1 ? matches[0]! : null;
    });
  }

  async updateSession(id: string, update: SessionUpdate): Promise<Session> {
    checkId(id, "id");
    checkSessionUpdate(update);
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (update.model !== undefined) sets.push(`model = $${params.push(encodeText(update.model))}`);
    if (update.systemPrompt !== undefined) sets.push(`system_prompt = $${params.push(encodeText(update.systemPrompt))}`);
    if (update.modelConfig !== undefined) {
      const value = update.modelConfig === null ? null : toJson(update.modelConfig, "modelConfig");
      sets.push(`model_config = $${params.push(value)}`);
    }
    return this.#write(`updating session ${id}`, async (sql) => {
      await this.#requireRow(sql, id, true);
      if (sets.length > 0) await sql.run(`UPDATE sessions SET ${sets.join(", ")} WHERE id = $1`, params);
      return toSession(await this.#requireRow(sql, id));
    });
  }

  async recordUsage(
    id: string,
    usage: UsageUpdate,
    options: { mode?: "delta" | "absolute" } & FencedWriteOptions = {},
  ): Promise<SessionUsage> {
    checkId(id, "id");
    const fence = fenceOf(options);
    const plan = planUsageUpdate(usage, checkUsageMode(options.mode));
    return this.#write(`recording usage of session ${id}`, async (sql) => {
      await leases.checkFence(sql, fence);
      return this.#applyUsage(sql, id, plan);
    });
  }

  /**
   * Applies a planned usage update to a session (inside a write transaction, under its row
   * lock) and returns the new totals. Throws (so the transaction rolls back) when the session
   * is missing or a total would go below zero.
   */
  async #applyUsage(sql: Sql, id: string, plan: UsagePlan): Promise<SessionUsage> {
    const params: unknown[] = [id];
    const sets = usageSetClauses(plan, (a) =>
      a.kind === "text"
        ? `$${params.push(encodeText(a.value as string | null))}`
        : `$${params.push(a.value)}::${USAGE_SQL_TYPES[a.kind]}`,
    );
    await this.#requireRow(sql, id, true);
    if (sets.length > 0) await sql.run(`UPDATE sessions SET ${sets.join(", ")} WHERE id = $1`, params);
    return assertUsageNotNegative(toUsage(await this.#requireRow(sql, id)));
  }

  // --- messages ---------------------------------------------------------------

  async appendMessage(sessionId: string, message: NewMessage, options?: FencedWriteOptions): Promise<number> {
    const ids = await this.#append(sessionId, [message], "message", options);
    return ids[0]!;
  }

  async appendTurn(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
    if (!Array.isArray(messages)) throw new InvalidInputError("appendTurn needs an array of messages.", { field: "messages" });
    return this.#append(sessionId, messages, "messages", options);
  }

  async #append(sessionId: string, messages: NewMessage[], field: string, options?: FencedWriteOptions): Promise<number[]> {
    checkId(sessionId, "sessionId");
    const fence = fenceOf(options);
    const at = now();
    const stored = messages.map((m, i) =>
      toStoredMessage(normalizeMessage(m, messages.length === 1 && field === "message" ? field : `${field}[${i}]`, at)),
    );
    return this.#write(`appending to session ${sessionId}`, async (sql) => {
      await leases.checkFence(sql, fence);
      return this.#appendRows(sql, sessionId, stored);
    }, sessionId);
  }

  /**
   * Appends stored messages (with their search vectors) to a live session, inside a write
   * transaction, and updates its counters and preview. Returns the new ids in order.
   */
  async #appendRows(sql: Sql, sessionId: string, stored: StoredMessage[]): Promise<number[]> {
    // The row lock (taken by the counter update) serialises every writer of this
    // session, in any process, until commit: a turn's ids stay contiguous.
    if (!(await lockAndBumpForAppend(sql, sessionId, stored))) {
      const row = await sql.one<{ ended_at: number | null }>("SELECT ended_at FROM sessions WHERE id = $1", [sessionId]);
      if (row === undefined) {
        throw new NotFoundError(`No session with id "${sessionId}" to append to. Create it first.`);
      }
      throw new ConflictError(`Session "${sessionId}" has ended; reopen it (reopenSession) before appending.`, {
        sessionId,
      });
    }
    return insertMessages(sql, sessionId, stored);
  }

  async getMessages(sessionId: string, options: MessageWindowOptions = {}): Promise<Message[]> {
    checkId(sessionId, "sessionId");
    const { last, afterId, limit, offset } = checkMessageWindow(options);
    return this.#read("reading messages", async (sql) => {
      await this.#requireRow(sql, sessionId);
      const after = afterId === null ? "" : ` AND id > ${afterId}`;
      const page = `${limit === null ? "" : ` LIMIT ${limit}`}${offset === 0 ? "" : ` OFFSET ${offset}`}`;
      const query =
        last === null
          ? messagesSql(options.includeRewound === true).replace(" ORDER BY id", `${after} ORDER BY id${page}`)
          : `SELECT * FROM (${messagesSql(options.includeRewound === true).replace("ORDER BY id", "ORDER BY id DESC")} LIMIT ${last}) AS w ORDER BY id`;
      return (await sql.all<MessageRow>(query, [sessionId])).map(toMessage);
    });
  }

  async getConversation(sessionId: string, options: ConversationOptions = {}): Promise<ConversationMessage[]> {
    return conversationOf(this, sessionId, options);
  }


  async replaceMessages(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
    checkId(sessionId, "sessionId");
    if (!Array.isArray(messages)) throw new InvalidInputError("replaceMessages needs an array of messages.", { field: "messages" });
    const fence = fenceOf(options);
    const at = now();
    const stored = messages.map((m, i) => toStoredMessage(normalizeMessage(m, `messages[${i}]`, at)));
    return this.#write(`replacing the transcript of ${sessionId}`, async (sql) => {
      await leases.checkFence(sql, fence);
      await this.#requireRow(sql, sessionId, true);
      await sql.run("DELETE FROM messages WHERE session_id = $1", [sessionId]);
      const ids = await insertMessages(sql, sessionId, stored);
      await recomputeSummary(sql, sessionId);
      return ids;
    });
  }

  async rewind(sessionId: string, turns = 1, options?: FencedWriteOptions): Promise<RewindResult> {
    checkId(sessionId, "sessionId");
    if (typeof turns !== "number" || Number.isNaN(turns)) {
      throw new InvalidInputError("turns must be a number.", { field: "turns" });
    }
    const fence = fenceOf(options);
    const n = Math.max(1, Math.min(Math.floor(turns), 1_000_000));
    const at = now();
    return this.#write(`rewinding session ${sessionId}`, async (sql) => {
      await leases.checkFence(sql, fence);
      await this.#requireRow(sql, sessionId, true);
      const users = await sql.all<Pick<MessageRow, "id" | "content" | "content_kind">>(
        `SELECT id, content, content_kind FROM messages
          WHERE session_id = $1 AND role = 'user' AND rewound_at IS NULL ORDER BY id DESC LIMIT $2`,
        [sessionId, n],
      );
      const target = users[users.length - 1];
      if (target === undefined) return { rewound: 0, turnsUndone: 0, targetText: null };
      const batch =
        ((await sql.value<number | null>("SELECT max(rewind_batch) FROM messages WHERE session_id = $1", [sessionId])) ??
          0) + 1;
      const rewound = await sql.run(
        `UPDATE messages SET rewound_at = $1, rewind_batch = $2
          WHERE session_id = $3 AND id >= $4 AND rewound_at IS NULL`,
        [at, batch, sessionId, target.id],
      );
      await recomputeSummary(sql, sessionId);
      const text = contentText(rowContent(target));
      return { rewound, turnsUndone: users.length, targetText: text === "" ? null : text };
    });
  }

  async restoreRewound(sessionId: string, options: { all?: boolean } = {}): Promise<number> {
    checkId(sessionId, "sessionId");
    return this.#write(`restoring rewound messages of ${sessionId}`, async (sql) => {
      await this.#requireRow(sql, sessionId, true);
      const restored = options.all
        ? await sql.run(
            "UPDATE messages SET rewound_at = NULL, rewind_batch = NULL WHERE session_id = $1 AND rewound_at IS NOT NULL",
            [sessionId],
          )
        : await sql.run(
            `UPDATE messages SET rewound_at = NULL, rewind_batch = NULL
              WHERE session_id = $1 AND rewound_at IS NOT NULL AND rewind_batch =
                (SELECT max(rewind_batch) FROM messages WHERE session_id = $1 AND rewound_at IS NOT NULL)`,
            [sessionId],
          );
      if (restored > 0) await recomputeSummary(sql, sessionId);
      return restored;
    });
  }

  async clearMessages(sessionId: string): Promise<number> {
    checkId(sessionId, "sessionId");
    return this.#write(`clearing session ${sessionId}`, async (sql) => {
      await this.#requireRow(sql, sessionId, true);
      const deleted = await sql.run("DELETE FROM messages WHERE session_id = $1", [sessionId]);
      await recomputeSummary(sql, sessionId);
      return deleted;
    });
  }

  // --- titles -----------------------------------------------------------------

  /**
   * Throws unless `title` is free for session `forId` (whose parent is `parentId`). A
   * title held by a compression ancestor moves to the continuation instead.
   */
  async #assertTitleFree(sql: Sql, title: string, forId: string, parentId: string | null): Promise<void> {
    const holder = await sql.one<{ id: string }>("SELECT id FROM sessions WHERE title = $1", [title]);
    if (holder === undefined || holder.id === forId) return;
    let isCompressionAncestor = false;
    const seen = new Set<string>([forId]);
    for (let up = parentId === null ? undefined : await sessionRow(sql, parentId); up !== undefined; ) {
      if (up.end_reason !== COMPRESSION || seen.has(up.id)) break;
      if (up.id === holder.id) {
        isCompressionAncestor = true;
        break;
      }
      seen.add(up.id);
      up = up.parent_session_id === null ? undefined : await sessionRow(sql, up.parent_session_id);
    }
    if (isCompressionAncestor) {
      await sql.run("UPDATE sessions SET title = NULL, title_base = NULL, title_n = NULL WHERE id = $1", [holder.id]);
      return;
    }
    throw new ConflictError(
      `The title "${title}" is already used by session ${holder.id}. Choose another title, or rename that session first.`,
      { sessionId: holder.id },
    );
  }

  async setTitle(id: string, title: string | null): Promise<string | null> {
    checkId(id, "id");
    const clean = sanitizeTitle(title);
    return this.#write(`setting the title of ${id}`, async (sql) => {
      const row = await this.#requireRow(sql, id, true);
      if (clean !== null) await this.#assertTitleFree(sql, clean, id, row.parent_session_id);
      const lineage = clean === null ? null : parseLineageTitle(clean);
      await sql.run("UPDATE sessions SET title = $1, title_base = $2, title_n = $3 WHERE id = $4", [
        clean,
        lineage?.base ?? null,
        lineage?.n ?? null,
        id,
      ]);
      return clean;
    });
  }

  async getTitle(id: string): Promise<string | null> {
    checkId(id, "id");
    return this.#read("reading a title", async (sql) => (await this.#requireRow(sql, id)).title);
  }

  async resolveByTitle(title: string): Promise<string | null> {
    if (this.#closed) throw new StoreClosedError();
    let clean: string | null;
    try {
      clean = sanitizeTitle(title);
    } catch {
      return null; // longer than any stored title can be
    }
    if (clean === null) return null;
    return this.#read("resolving a title", async (sql) => {
      const newest = await sql.one<{ id: string; title_n: number }>(
        "SELECT id, title_n FROM sessions WHERE title_base = $1 ORDER BY title_n DESC LIMIT 1",
        [clean],
      );
      if (newest !== undefined && newest.title_n >= 2) return newest.id;
      return (await sql.value<string>("SELECT id FROM sessions WHERE title = $1", [clean])) ?? null;
    });
  }

  async nextTitleInLineage(title: string): Promise<string> {
    const clean = sanitizeTitle(title);
    if (clean === null) throw new InvalidInputError("The title is empty after sanitising.", { field: "title" });
    const { base } = parseLineageTitle(clean);
    return this.#read("finding the next title", async (sql) => {
      const max = (await sql.value<number | null>("SELECT max(title_n) FROM sessions WHERE title_base = $1", [base])) ?? null;
      const next = max === null ? base : formatLineageTitle(base, Math.max(max, 1) + 1);
      return sanitizeTitle(next) ?? next; // throws when the numbered title would exceed the limit
    });
  }

  // --- lineage ----------------------------------------------------------------

  async getAncestors(id: string): Promise<Session[]> {
    checkId(id, "id");
    return this.#read("reading ancestors", async (sql) => {
      await this.#requireRow(sql, id);
      return (await ancestorRows(sql, id)).map(toSession);
    });
  }

  async getDescendants(id: string): Promise<Session[]> {
    checkId(id, "id");
    return this.#read("reading descendants", async (sql) => {
      await this.#requireRow(sql, id);
      return (await descendantRows(sql, id)).map(toSession);
    });
  }

  async getCompressionTip(id: string): Promise<string> {
    checkId(id, "id");
    return this.#read("finding the compression tip", async (sql) => {
      await this.#requireRow(sql, id);
      return compressionTip(sql, id);
    });
  }

  // --- listing and search -----------------------------------------------------

  async listSessions(options: ListSessionsOptions = {}): Promise<Page<SessionSummary>> {
    return this.#read("listing sessions", (sql) => listSessions(sql, options));
  }

  async searchMessages(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    return this.#read("searching", (sql) => searchMessages(sql, query, options));
  }

  // --- export / import --------------------------------------------------------

  async *exportSessions(options: ExportOptions = {}): AsyncIterable<SessionRecord> {
    const sources = checkNameList(options.sources, "sources");
    const userId = checkUserIdFilter(options.userId);
    const includeRewound = options.includeRewound === true;
    const toRecord = async (sql: Sql, row: SessionRow): Promise<SessionRecord> =>
      toSessionRecord(toSession(row), (await sql.all<MessageRow>(messagesSql(includeRewound), [row.id])).map(toMessage));

    if (options.sessionId !== undefined) {
      const id = checkId(options.sessionId, "sessionId");
      yield await this.#read("exporting a session", async (sql) => {
        const row = await this.#requireRow(sql, id);
        // Another user's session is not found (its existence is not disclosed).
        if (userId !== null && decodeText(row.user_id) !== userId) {
          throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
        }
        return toRecord(sql, row);
      });
      return;
    }
    const filterParams: unknown[] = [];
    let filter = "";
    if (userId !== null) filter += ` AND user_id = $${filterParams.push(encodeText(userId)) + 2}`;
    if (sources !== null) filter += ` AND source = ANY($${filterParams.push(sources) + 2}::text[])`;
    const pageSql = `SELECT * FROM sessions WHERE (started_at, id) > ($1, $2)${filter} ORDER BY started_at, id LIMIT 50`;
    let after: [number, string] = [-Infinity, ""];
    for (;;) {
      // One page of sessions at a time, each with its messages: memory stays bounded by the largest session.
      const rows = await this.#read("exporting sessions", (sql) =>
        sql.all<SessionRow>(pageSql, [after[0], after[1], ...filterParams]),
      );
      if (rows.length === 0) return;
      for (const row of rows) {
        const record = await this.#read("exporting a session", async (sql) => {
          const fresh = await sessionRow(sql, row.id);
          return fresh === undefined ? null : toRecord(sql, fresh);
        });
        if (record !== null) yield record;
      }
      const last = rows[rows.length - 1]!;
      after = [last.started_at, last.id];
    }
  }

  async importSessions(lines: AsyncIterable<string> | Iterable<string>): Promise<ImportReport> {
    if (this.#closed) throw new StoreClosedError();
    return runImport(lines, (record, waiting) =>
      this.#write(`importing session ${record.session.id}`, (sql) => this.#importOne(sql, record, waiting)),
    );
  }

  async #importOne(sql: Sql, record: ValidRecord, waitingChildren: string[]): Promise<ImportOutcome> {
    const s = record.session;
    if ((await sessionRow(sql, s.id)) !== undefined) return { status: "skipped", missingParent: null };
    const parentId = s.parentSessionId ?? null;
    if (parentId === s.id) {
      throw new InvalidInputError(`session ${s.id} names itself as its parent, which would close a lineage cycle; record skipped.`);
    }
    const parentExists = parentId !== null && (await sessionRow(sql, parentId, true)) !== undefined;
    if (s.title !== null) await this.#assertTitleFree(sql, s.title, s.id, parentExists ? parentId : null);
    const lineage = s.title === null ? null : parseLineageTitle(s.title);
    const u = s.usage ?? {};
    await sql.run(
      `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
         ended_at, end_reason, title, title_base, title_n, session_key, chat_id, chat_type, thread_id,
         last_active_at, chain_started_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
         reasoning_tokens, api_calls, estimated_cost_usd, actual_cost_usd, billing_provider, billing_mode, cost_status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $8, $8,
         $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)`,
      [
        s.id,
        s.source,
        encodeText(s.userId ?? null),
        encodeText(s.model ?? null),
        s.modelConfig == null ? null : JSON.stringify(s.modelConfig),
        encodeText(s.systemPrompt ?? null),
        parentExists ? parentId : null,
        s.startedAt,
        s.endedAt ?? null,
        s.endedAt == null ? null : (s.endReason ?? null),
        s.title,
        lineage?.base ?? null,
        lineage?.n ?? null,
        encodeText(s.sessionKey ?? null),
        encodeText(s.chatId ?? null),
        encodeText(s.chatType ?? null),
        encodeText(s.threadId ?? null),
        u.inputTokens ?? 0,
        u.outputTokens ?? 0,
        u.cacheReadTokens ?? 0,
        u.cacheWriteTokens ?? 0,
        u.reasoningTokens ?? 0,
        u.apiCalls ?? 0,
        u.estimatedCostUsd ?? 0,
        u.actualCostUsd ?? null,
        encodeText(u.billingProvider ?? null),
        encodeText(u.billingMode ?? null),
        encodeText(u.costStatus ?? null),
      ],
    );
    const stored: StoredMessage[] = record.messages.map(({ message, rewoundAt }) => toStoredMessage(message, rewoundAt));
    await insertMessages(sql, s.id, stored);
    await recomputeSummary(sql, s.id);
    for (const child of waitingChildren) {
      await sql.run("UPDATE sessions SET parent_session_id = $1 WHERE id = $2 AND parent_session_id IS NULL", [s.id, child]);
    }
    // Linking the waiting children must not close a cycle through this session.
    const seen = new Set<string>();
    let up = parentExists ? parentId : null;
    while (up !== null && !seen.has(up)) {
      if (up === s.id) {
        throw new InvalidInputError(
          `session ${s.id} would close a lineage cycle (it is its own ancestor through ${parentId}); record skipped.`,
        );
      }
      seen.add(up);
      up = (await sessionRow(sql, up))?.parent_session_id ?? null;
    }
    await refreshChain(sql, parentExists ? parentId! : s.id);
    return { status: "imported", missingParent: parentId !== null && !parentExists ? parentId : null };
  }

  // --- deletion and retention -------------------------------------------------

  async deleteSession(id: string): Promise<boolean> {
    checkId(id, "id");
    return this.#write(`deleting session ${id}`, async (sql) => {
      const row = await sessionRow(sql, id, true);
      if (row === undefined) return false;
      await this.#deleteRows(sql, [row]);
      return true;
    });
  }

  /** Deletes sessions (messages cascade, children are detached) and refreshes what their removal changes. */
  async #deleteRows(sql: Sql, rows: SessionRow[]): Promise<void> {
    const gone = new Set(rows.map((r) => r.id));
    const touched = new Set<string>();
    for (const row of rows) {
      for (const child of await childIds(sql, row.id)) if (!gone.has(child)) touched.add(child);
      if (row.parent_session_id !== null && !gone.has(row.parent_session_id)) touched.add(row.parent_session_id);
    }
    if (rows.length > 0) await sql.run("DELETE FROM sessions WHERE id = ANY($1::text[])", [[...gone]]);
    for (const id of touched) await refreshChain(sql, id);
  }

  async pruneSessions(options: PruneOptions): Promise<number> {
    const { cutoffDays, sources } = checkPruneOptions(options);
    return this.#prune(cutoffDays, sources, checkTime(options.now, "now", now()));
  }

  /**
   * Deletes in one transaction. Space is reclaimed by autovacuum for reuse; no
   * `VACUUM FULL` (it would lock the tables against every other process).
   */
  async #prune(olderThanDays: number, sources: string[] | null, at: number): Promise<number> {
    const cutoff = at - olderThanDays * DAY_SECONDS;
    const filter = sources === null ? "" : "AND source = ANY($2::text[])";
    return this.#write("pruning sessions", async (sql) => {
      const rows = await sql.all<SessionRow>(
        `SELECT * FROM sessions WHERE ended_at IS NOT NULL AND last_active_at < $1 ${filter} ORDER BY id FOR UPDATE`,
        sources === null ? [cutoff] : [cutoff, sources],
      );
      await this.#deleteRows(sql, rows);
      return rows.length;
    });
  }

  async autoPrune(options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }> {
    const interval = options?.intervalSeconds ?? DAY_SECONDS;
    if (typeof interval !== "number" || !Number.isFinite(interval) || interval < 0) {
      throw new InvalidInputError("intervalSeconds must be a number of seconds, 0 or more.", { field: "intervalSeconds" });
    }
    const at = checkTime(options?.now, "now", now());
    const prune = checkPruneOptions(options);
    // Claim the run in the database (under a row lock), so every process agrees on the last run.
    const due = await this.#write("scheduling an auto-prune", async (sql) => {
      await sql.run("INSERT INTO meta(key, value) VALUES ($1, '') ON CONFLICT (key) DO NOTHING", [AUTO_PRUNE_META_KEY]);
      const last = await sql.value<string>("SELECT value FROM meta WHERE key = $1 FOR UPDATE", [AUTO_PRUNE_META_KEY]);
      if (last !== undefined && last !== "" && at - Number(last) < interval) return false;
      await sql.run("UPDATE meta SET value = $2 WHERE key = $1", [AUTO_PRUNE_META_KEY, String(at)]);
      return true;
    });
    if (!due) return { ran: false, deleted: 0 };
    return { ran: true, deleted: await this.#prune(prune.cutoffDays, prune.sources, at) };
  }

  // --- execution sessions -----------------------------------------------------

  async writeExecutions(change: ExecutionChange): Promise<ExecutionChangeResult | null> {
    const checked = checkExecutionChange(change);
    return this.#write("writing execution sessions", (sql) => executions.writeExecutions(sql, checked));
  }

  async getExecution(id: string): Promise<ExecutionRecord | null> {
    checkId(id, "id");
    return this.#read("reading an execution session", (sql) => executions.getExecution(sql, id));
  }

  async findExecutions(options: FindExecutionsOptions): Promise<ExecutionSummary[]> {
    const checked = checkFindExecutions(options);
    return this.#read("finding execution sessions", (sql) => executions.findExecutions(sql, checked));
  }

  async listExecutions(options: ListExecutionsOptions = {}): Promise<Page<ExecutionSummary> & { total: number }> {
    const checked = checkListExecutions(options);
    return this.#read("listing execution sessions", (sql) => executions.listExecutions(sql, checked));
  }

  async listExecutionUnits(options: ListExecutionUnitsOptions = {}): Promise<ExecutionSummary[]> {
    const checked = checkListExecutionUnits(options);
    return this.#read("listing execution units", (sql) => executions.listExecutionUnits(sql, checked));
  }

  async getInsights(options: InsightsOptions = {}): Promise<Insights> {
    const checked = checkInsightsOptions(options, now());
    // One snapshot for every figure: a read-only REPEATABLE READ transaction.
    return this.#write("reading insights", async (sql) => {
      await sql.run("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
      return readInsights(sql, checked);
    });
  }

  // --- gateway routing state --------------------------------------------------

  async getRoute(key: string): Promise<Route | null> {
    checkId(key, "key");
    return this.#read("reading a routing entry", async (sql) => {
      const row = await routeRow(sql, key);
      return row === undefined ? null : toRoute(row);
    });
  }

  async findRouteBySession(sessionId: string): Promise<Route | null> {
    checkId(sessionId, "sessionId");
    return this.#read("finding a routing entry", (sql) => routeBySession(sql, sessionId));
  }

  async listRoutes(options: ListRoutesOptions = {}): Promise<Page<Route>> {
    const checked = checkListRoutes(options);
    return this.#read("listing routing entries", (sql) => listRoutes(sql, checked));
  }

  /**
   * One transaction: the fence (if any) is checked first under the lease row's share lock;
   * then the entry is claimed (a new key by `INSERT … ON CONFLICT DO
   * NOTHING`, an existing one by its row lock), so a concurrent writer of the key in any
   * process waits and then sees the new version; the session changes follow under it.
   */
  async writeRoute(write: RouteWrite): Promise<Route | null> {
    const at = now();
    const checked = checkRouteWrite(write, at);
    const prepared = checked.createSession === null ? null : prepareNewSession(checked.createSession, at);
    const appended = checked.appendMessages === null ? null : checked.appendMessages.map((m) => toStoredMessage(m));
    // With messages to append, the write joins the session's lane, so this instance's appends land in call order.
    const lane = appended === null ? undefined : checked.route.sessionId;
    return this.#write(`writing the routing entry ${checked.key}`, async (sql) => {
      await leases.checkFence(sql, checked.fence);
      let inserted: RouteRow | undefined = undefined;
      if (checked.expectedVersion === null) {
        inserted = await insertRouteIfAbsent(sql, checked.key, checked.route);
        if (inserted === undefined) return null;
      } else {
        const current = await routeRow(sql, checked.key, true);
        if (current === undefined || Number(current.version) !== checked.expectedVersion) return null;
      }
      if (checked.endSession !== null) {
        const { id, reason, endedAt } = checked.endSession;
        await this.#endSessionRow(sql, id, reason, endedAt);
      }
      if (checked.createSession !== null) await this.#insertSession(sql, checked.createSession, prepared!);
      if (checked.reopenSession !== null) await this.#reopenSessionRow(sql, checked.reopenSession);
      // The routed-to session must exist; its row lock keeps a concurrent delete out until commit.
      await this.#requireRow(sql, checked.route.sessionId, true);
      if (appended !== null) await this.#appendRows(sql, checked.route.sessionId, appended);
      if (checked.recordUsage !== null) await this.#applyUsage(sql, checked.route.sessionId, checked.recordUsage);
      const stored = inserted ?? (await updateRoute(sql, checked.key, checked.route, checked.expectedVersion! + 1));
      return toRoute(stored);
    }, lane);
  }

  async deleteRoute(key: string, options: { expectedVersion?: number } = {}): Promise<boolean> {
    checkId(key, "key");
    const expected = options.expectedVersion;
    return this.#write(`deleting the routing entry ${key}`, async (sql) =>
      expected === undefined
        ? (await sql.run("DELETE FROM routes WHERE key = $1", [key])) > 0
        : (await sql.run("DELETE FROM routes WHERE key = $1 AND version = $2", [key, expected])) > 0,
    );
  }

  async findLiveSessionByKey(key: string): Promise<Session | null> {
    checkId(key, "key");
    return this.#read("finding the live session of a key", async (sql) => {
      const row = await sql.one<SessionRow>(
        `SELECT * FROM sessions WHERE session_key = $1 AND ended_at IS NULL
          ORDER BY started_at DESC, id DESC LIMIT 1`,
        [encodeText(key)],
      );
      return row === undefined ? null : toSession(row);
    });
  }

  async recordAlias(namespace: string, a: string, b: string): Promise<string> {
    checkId(namespace, "namespace");
    checkId(a, "a");
    checkId(b, "b");
    return this.#write("recording an identity alias", (sql) => recordAlias(sql, namespace, a, b));
  }

  async resolveAlias(namespace: string, id: string): Promise<string> {
    checkId(namespace, "namespace");
    checkId(id, "id");
    return this.#read("resolving an identity alias", (sql) => resolveAlias(sql, namespace, id));
  }

  async listAliases(namespace: string, id: string): Promise<string[]> {
    checkId(namespace, "namespace");
    checkId(id, "id");
    return this.#read("listing identity aliases", (sql) => listAliases(sql, namespace, id));
  }

  async enqueue(key: string, event: NewQueuedEvent, options: { maxDepth?: number } = {}): Promise<EnqueueResult> {
    checkPathSafe(key, "key");
    const checked = checkQueuedEvent(event, options, now());
    // The queue lane keeps this instance's enqueues of a key in call order (FIFO as called).
    return this.#write(
      `queueing an event for ${key}`,
      (sql) => enqueue(sql, key, checked.event, checked.maxDepth),
      queueLane(key),
    );
  }

  async listQueue(key: string): Promise<QueuedItem[]> {
    checkId(key, "key");
    return this.#read("reading a queue", (sql) => queueItems(sql, key));
  }

  async claimQueued(key: string, options: { at?: number } = {}): Promise<QueuedItem | null> {
    checkId(key, "key");
    const at = checkTime(options.at, "at", now());
    return this.#write(`claiming the next queued event of ${key}`, (sql) => claimQueued(sql, key, at), queueLane(key));
  }

  async completeQueued(key: string, itemId: number): Promise<boolean> {
    checkId(key, "key");
    checkItemId(itemId);
    return this.#write("completing a queued event", (sql) => completeQueued(sql, key, itemId), queueLane(key));
  }

  async clearQueue(key: string): Promise<number> {
    checkId(key, "key");
    return this.#write(`clearing the queue of ${key}`, (sql) => clearQueue(sql, key), queueLane(key));
  }

  async listQueuedKeys(): Promise<string[]> {
    return this.#read("listing queued keys", (sql) =>
      sql.column<string>("SELECT DISTINCT key FROM inbound_queue ORDER BY key"),
    );
  }

  /**
   * One transaction under the key's lease row lock: concurrent acquirers in any process
   * queue on it, and a takeover waits for fenced writes in flight (they hold its share lock).
   */
  async acquireLease(key: string, holder: string, options: LeaseOptions): Promise<Lease | null> {
    const request = checkLeaseRequest(key, holder, options, now());
    return this.#write(`acquiring the lease on ${request.key}`, (sql) => leases.acquireLease(sql, request));
  }

  async renewLease(key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null> {
    const request = checkLeaseRequest(key, holder, options, now());
    checkLeaseToken(token);
    return this.#write(`renewing the lease on ${request.key}`, (sql) => leases.renewLease(sql, request, token));
  }

  async releaseLease(key: string, holder: string, token: number): Promise<boolean> {
    checkPathSafe(key, "key");
    checkId(holder, "holder");
    checkLeaseToken(token);
    return this.#write(`releasing the lease on ${key}`, (sql) => leases.releaseLease(sql, key, holder, token));
  }

  async getLease(key: string): Promise<Lease | null> {
    checkPathSafe(key, "key");
    return this.#read("reading a lease", (sql) => leases.getLease(sql, key));
  }

  // --- cross-platform handoffs --------------------------------------------------

  async createHandoff(input: NewHandoff): Promise<Handoff> {
    const checked = checkNewHandoff(input, now());
    return this.#write(`recording a handoff of ${checked.sessionId}`, (sql) => handoffs.createHandoff(sql, checked));
  }

  async getHandoff(id: string): Promise<Handoff | null> {
    checkId(id, "id");
    return this.#read("reading a handoff", (sql) => handoffs.getHandoff(sql, id));
  }

  /** One statement: the oldest pending row is picked `FOR UPDATE SKIP LOCKED` and moved to running. */
  async claimHandoff(options: ClaimHandoffOptions): Promise<Handoff | null> {
    const checked = checkClaimHandoff(options, now());
    return this.#write("claiming a handoff", (sql) => handoffs.claimHandoff(sql, checked));
  }

  async finishHandoff(id: string, result: HandoffResult): Promise<Handoff> {
    checkId(id, "id");
    const checked = checkHandoffResult(result, now());
    return this.#write(`finishing handoff ${id}`, (sql) => handoffs.finishHandoff(sql, id, checked));
  }

  // --- stats and meta ---------------------------------------------------------

  async getStats(options: { searchIndexBytes?: boolean } = {}): Promise<StoreStats> {
    return this.#read("reading stats", async (sql) => {
      const totals = (await sql.one<{ sessions: number; messages: number }>(
        "SELECT count(*)::int AS sessions, coalesce(sum(message_count), 0)::bigint AS messages FROM sessions",
      ))!;
      const bySource = await sql.all<{ source: string; n: number }>(
        "SELECT source, count(*)::int AS n FROM sessions GROUP BY source ORDER BY source",
      );
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

  async getMeta(key: string): Promise<string | null> {
    checkId(key, "key");
    return this.#read("reading meta", async (sql) => {
      const value = await sql.value<string>("SELECT value FROM meta WHERE key = $1", [key]);
      return value === undefined ? null : decodeText(value);
    });
  }

  async setMeta(key: string, value: string): Promise<void> {
    checkId(key, "key");
    if (optionalText(value, "value") === null) throw new InvalidInputError("value must be a string.", { field: "value" });
    await this.#write("writing meta", async (sql) => {
      await sql.run("INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [
        key,
        encodeText(value),
      ]);
    });
  }

  async deleteMeta(key: string): Promise<boolean> {
    checkId(key, "key");
    return this.#write("deleting meta", async (sql) => (await sql.run("DELETE FROM meta WHERE key = $1", [key])) > 0);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#pending]);
    await this.#pool.end();
  }
}

/** The write lane of a key's queue (apart from session lanes: a session id never holds a NUL). */
function queueLane(key: string): string {
  return `\u0000queue:${key}`;
}

/** Messages of a session in transcript order. */
function messagesSql(includeRewound: boolean): string {
  return includeRewound
    ? `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ORDER BY id`
    : `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND rewound_at IS NULL ORDER BY id`;
}

