/**
 * The SQLite implementation of {@link SessionDB} (better-sqlite3, WAL, FTS5).
 *
 * Reads run synchronously on the calling tick (after any queued writes of this
 * instance, so a caller always reads its own writes); writes go through a
 * group-commit queue and resolve once durable.
 *
 * @module
 */
import { statSync } from "node:fs";
import type {
  AutoPruneOptions,
  ClaimHandoffOptions,
  ConversationMessage,
  ConversationOptions,
  MessageWindowOptions,
  ExportOptions,
  FencedWriteOptions,
  Handoff,
  HandoffResult,
  ImportReport,
  Lease,
  LeaseOptions,
  ListSessionsOptions,
  Message,
  NewHandoff,
  NewMessage,
  NewSession,
  EnqueueResult,
  ExecutionChange,
  ExecutionChangeResult,
  ExecutionRecord,
  ExecutionSummary,
  FindExecutionsOptions,
  ListExecutionUnitsOptions,
  ListExecutionsOptions,
  ListRoutesOptions,
  NewQueuedEvent,
  Page,
  PruneOptions,
  QueuedItem,
  Route,
  RouteWrite,
  RewindResult,
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
import { conversationOf } from "../conversation.js";
import { ConflictError, InvalidInputError, NotFoundError, StoreClosedError } from "../errors.js";
import {
  checkId,
  checkMessageWindow,
  checkNameList,
  checkNewSession,
  checkPruneOptions,
  checkSearchOptions,
  checkSessionUpdate,
  checkTime,
  normalizeMessage,
  optionalText,
  prepareNewSession,
  toJson,
  type PreparedSession,
} from "../input-validation.js";
import { contentText } from "../preview.js";
import { runImport, type ImportOutcome } from "../session-import.js";
import { newSessionId } from "../session-id.js";
import { toSessionRecord, type ValidRecord } from "../session-record.js";
import { formatLineageTitle, parseLineageTitle, sanitizeTitle } from "../titles.js";
import { resolveSqliteConfig, type SqliteConfig } from "./sqlite-config.js";
import { openSqliteConnection, type SqliteConnection } from "./sqlite-connection.js";
import { isSqliteBusy, translateSqliteError } from "./sqlite-errors.js";
import {
  ancestorRows,
  childIds,
  COMPRESSION,
  compressionTip,
  descendantRows,
  refreshChain,
  sessionRow,
} from "./sqlite-lineage.js";
import { listSessions } from "./sqlite-listing.js";
import { readInsights } from "./sqlite-insights.js";
import { checkInsightsOptions } from "../insights.js";
import * as executions from "./sqlite-executions.js";
import {
  checkExecutionChange,
  checkFindExecutions,
  checkListExecutionUnits,
  checkListExecutions,
  checkUserIdFilter,
} from "../execution-input.js";
import { insertSession } from "./sqlite-session-insert.js";
import { messageIndexText } from "./sqlite-migrations.js";
import { toMessage, toSession, toUsage, type MessageRow, type SessionRow } from "./sqlite-rows.js";
import { searchMessages } from "./sqlite-search.js";
import { indexIsBehind, indexPending, indexWatermark } from "./sqlite-search-index.js";
import {
  bumpSummary,
  insertMessages,
  recomputeSummary,
  refreshLastActive,
  toStoredMessage,
  type StoredMessage,
} from "./sqlite-transcript.js";
import { SqliteWriteQueue } from "./sqlite-write-queue.js";
import { assertUsageNotNegative, checkUsageMode, planUsageUpdate, usageSetClauses, type UsagePlan } from "../usage-update.js";
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
import { toRoute } from "../route-rows.js";
import { listAliases, recordAlias, resolveAlias } from "./sqlite-aliases.js";
import { claimQueued, enqueue, queueItems } from "./sqlite-queue.js";
import * as leases from "./sqlite-leases.js";
import * as handoffs from "./sqlite-handoffs.js";
import { checkClaimHandoff, checkHandoffResult, checkNewHandoff } from "../handoff-input.js";
import { listRoutes, routeBySession, routeRow, storeRoute } from "./sqlite-routes.js";

const DAY_SECONDS = 86_400;
const AUTO_PRUNE_META_KEY = "auto_prune.last_run_at";
/** Appended messages gathered before they are indexed in one transaction. */
const INDEX_BATCH = 512;
/** After writes pause this long, what is left is indexed. */
const INDEX_IDLE_MS = 250;

const now = (): number => Date.now() / 1000;

/**
 * A {@link SessionDB} on one SQLite file. Open it with {@link SqliteSessionDB.open}
 * (or `openSessionDB(path)`).
 *
 * @example
 * const db = await SqliteSessionDB.open({ path: "/tmp/state.db" });
 * const s = await db.createSession({ source: "cli" });
 * await db.appendMessage(s.id, { role: "user", content: "hello" });
 * await db.close();
 */
export class SqliteSessionDB implements SessionDB {
  readonly capabilities: StoreCapabilities = { backend: "sqlite", multiProcess: true, multiHost: false };
  readonly location: string;
  readonly #conn: SqliteConnection;
  readonly #queue: SqliteWriteQueue;
  #closed = false;
  #unindexed = 0;
  #indexTimer: NodeJS.Timeout | null = null;

  private constructor(conn: SqliteConnection, config: Required<SqliteConfig>) {
    this.#conn = conn;
    this.location = config.path;
    this.#queue = new SqliteWriteQueue(conn.db, config.lockTimeoutMs);
  }

  /** Opens (creating and migrating as needed) a database file. */
  static async open(config: SqliteConfig): Promise<SqliteSessionDB> {
    const resolved = resolveSqliteConfig(config);
    const conn = await openSqliteConnection(resolved);
    return new SqliteSessionDB(conn, resolved);
  }

  // --- plumbing ---------------------------------------------------------------

  async #read<T>(doing: string, run: (conn: SqliteConnection) => T | Promise<T>): Promise<T> {
    if (this.#closed) throw new StoreClosedError();
    await this.#queue.drain();
    if (this.#closed) throw new StoreClosedError();
    try {
      // Awaited here, so that a reader that is itself async (listing) rejects through the
      // translation below too, not with the driver's raw error.
      return await run(this.#conn);
    } catch (error) {
      throw translateSqliteError(error, doing, this.location);
    }
  }

  #write<T>(doing: string, run: (conn: SqliteConnection) => T): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    return this.#queue.write(doing, () => run(this.#conn));
  }

  #requireRow(conn: SqliteConnection, id: string): SessionRow {
    const row = sessionRow(conn, id);
    if (row === undefined) {
      throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
    }
    return row;
  }

  // --- sessions ---------------------------------------------------------------

  async createSession(input: NewSession): Promise<Session> {
    checkNewSession(input);
    const prepared = prepareNewSession(input);
    return this.#write(`creating session ${prepared.id}`, (conn) => this.#insertSession(conn, input, prepared));
  }

  /** Inserts a checked new session (inside a write). */
  #insertSession(conn: SqliteConnection, input: NewSession, prepared: PreparedSession): Session {
    const { id, startedAt, title, modelConfig } = prepared;
    if (sessionRow(conn, id) !== undefined) {
      throw new ConflictError(`A session with id "${id}" already exists; choose another id.`, { sessionId: id });
    }
    const parentId = input.parentSessionId ?? null;
    if (parentId !== null && sessionRow(conn, parentId) === undefined) {
      throw new NotFoundError(`The parent session "${parentId}" does not exist.`);
    }
    if (title !== null) this.#assertTitleFree(conn, title, id, parentId);
    insertSession(conn, {
      id,
      source: input.source,
      userId: input.userId ?? null,
      model: input.model ?? null,
      modelConfig,
      systemPrompt: input.systemPrompt ?? null,
      parentId,
      startedAt,
      endedAt: null,
      endReason: null,
      title,
      sessionKey: input.sessionKey ?? null,
      chatId: input.chatId ?? null,
      chatType: input.chatType ?? null,
      threadId: input.threadId ?? null,
      usage: {},
    });
    refreshChain(conn, parentId ?? id);
    return toSession(this.#requireRow(conn, id));
  }

  async getSession(id: string): Promise<Session | null> {
    checkId(id, "id");
    return this.#read("reading a session", (conn) => {
      const row = sessionRow(conn, id);
      return row === undefined ? null : toSession(row);
    });
  }

  async endSession(id: string, reason: string, options: { endedAt?: number } = {}): Promise<boolean> {
    checkId(id, "id");
    checkId(reason, "reason");
    const endedAt = checkTime(options.endedAt, "endedAt", now());
    return this.#write(`ending session ${id}`, (conn) => this.#endSessionRow(conn, id, reason, endedAt));
  }

  #endSessionRow(conn: SqliteConnection, id: string, reason: string, endedAt: number): boolean {
    const row = this.#requireRow(conn, id);
    if (row.ended_at !== null) return false;
    conn.stmt("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?").run(endedAt, reason, id);
    refreshLastActive(conn, id);
    if (reason === COMPRESSION) refreshChain(conn, id);
    return true;
  }

  async reopenSession(id: string): Promise<boolean> {
    checkId(id, "id");
    return this.#write(`reopening session ${id}`, (conn) => this.#reopenSessionRow(conn, id));
  }

  #reopenSessionRow(conn: SqliteConnection, id: string): boolean {
    const row = this.#requireRow(conn, id);
    if (row.ended_at === null) return false;
    conn.stmt("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?").run(id);
    refreshLastActive(conn, id);
    if (row.end_reason === COMPRESSION) refreshChain(conn, id);
    return true;
  }

  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    if (this.#closed) throw new StoreClosedError();
    if (typeof idOrPrefix !== "string" || idOrPrefix === "") return null;
    return this.#read("resolving a session id", (conn) => {
      if (sessionRow(conn, idOrPrefix) !== undefined) return idOrPrefix;
      // Range scan on the primary key: ids in [prefix, prefix + U+FFFF).
      const matches = conn
        .stmt("SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 2")
        .pluck()
        .all(idOrPrefix, `${idOrPrefix}\uffff`) as string[];
      return matches.length === 1 ? matches[0]! : null;
    });
  }

  async updateSession(id: string, update: SessionUpdate): Promise<Session> {
    checkId(id, "id");
    checkSessionUpdate(update);
    const sets: string[] = [];
    const params: Record<string, unknown> = { id };
    if (update.model !== undefined) {
      sets.push("model = @model");
      params["model"] = update.model;
    }
    if (update.systemPrompt !== undefined) {
      sets.push("system_prompt = @systemPrompt");
      params["systemPrompt"] = update.systemPrompt;
    }
    if (update.modelConfig !== undefined) {
      sets.push("model_config = @modelConfig");
      params["modelConfig"] = update.modelConfig === null ? null : toJson(update.modelConfig, "modelConfig");
    }
    return this.#write(`updating session ${id}`, (conn) => {
      this.#requireRow(conn, id);
      if (sets.length > 0) conn.stmt(`UPDATE sessions SET ${sets.join(", ")} WHERE id = @id`).run(params);
      return toSession(this.#requireRow(conn, id));
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
    return this.#write(`recording usage of session ${id}`, (conn) => {
      leases.checkFence(conn, fence);
      return this.#applyUsage(conn, id, plan);
    });
  }

  /**
   * Applies a planned usage update to a session (inside a write) and returns the new totals.
   * Throws (so the write rolls back) when the session is missing or a total would go below zero.
   */
  #applyUsage(conn: SqliteConnection, id: string, plan: UsagePlan): SessionUsage {
    const params: Record<string, unknown> = { id };
    const sets = usageSetClauses(plan, (a) => {
      params[a.field] = a.value;
      return `@${a.field}`;
    });
    this.#requireRow(conn, id);
    if (sets.length > 0) conn.stmt(`UPDATE sessions SET ${sets.join(", ")} WHERE id = @id`).run(params);
    return assertUsageNotNegative(toUsage(this.#requireRow(conn, id)));
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
    return this.#write(`appending to session ${sessionId}`, (conn) => {
      leases.checkFence(conn, fence);
      return this.#appendRows(conn, sessionId, stored);
    });
  }

  /**
   * Appends stored messages to a live session (inside a write): checks that it exists and has
   * not ended, inserts the rows, updates its counters and preview, and notes the rows for the
   * search index. Returns the new ids in order.
   */
  #appendRows(conn: SqliteConnection, sessionId: string, stored: StoredMessage[]): number[] {
    const row = conn.stmt("SELECT ended_at FROM sessions WHERE id = ?").get(sessionId) as
      | { ended_at: number | null }
      | undefined;
    if (row === undefined) {
      throw new NotFoundError(`No session with id "${sessionId}" to append to. Create it first.`);
    }
    if (row.ended_at !== null) {
      throw new ConflictError(`Session "${sessionId}" has ended; reopen it (reopenSession) before appending.`, {
        sessionId,
      });
    }
    const ids = insertMessages(conn, sessionId, stored);
    bumpSummary(conn, sessionId, stored);
    this.#noteAppended(ids.length);
    return ids;
  }

  async getMessages(sessionId: string, options: MessageWindowOptions = {}): Promise<Message[]> {
    checkId(sessionId, "sessionId");
    const { last, afterId, limit, offset } = checkMessageWindow(options);
    return this.#read("reading messages", (conn) => {
      this.#requireRow(conn, sessionId);
      const visible = options.includeRewound ? "" : " AND rewound_at IS NULL";
      const after = afterId === null ? "" : ` AND id > ${afterId}`;
      const page = limit === null && offset === 0 ? "" : ` LIMIT ${limit ?? -1} OFFSET ${offset}`;
      const sql =
        last === null
          ? `SELECT * FROM messages WHERE session_id = ?${visible}${after} ORDER BY id${page}`
          : `SELECT * FROM (SELECT * FROM messages WHERE session_id = ?${visible} ORDER BY id DESC LIMIT ${last}) ORDER BY id`;
      return (conn.stmt(sql).all(sessionId) as MessageRow[]).map(toMessage);
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
    return this.#write(`replacing the transcript of ${sessionId}`, (conn) => {
      leases.checkFence(conn, fence);
      this.#requireRow(conn, sessionId);
      conn.stmt("DELETE FROM messages WHERE session_id = ?").run(sessionId);
      const ids = insertMessages(conn, sessionId, stored);
      recomputeSummary(conn, sessionId);
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
    return this.#write(`rewinding session ${sessionId}`, (conn) => {
      leases.checkFence(conn, fence);
      this.#requireRow(conn, sessionId);
      const users = conn
        .stmt(
          `SELECT id, content, content_parts FROM messages
            WHERE session_id = ? AND role = 'user' AND rewound_at IS NULL ORDER BY id DESC LIMIT ?`,
        )
        .all(sessionId, n) as Array<Pick<MessageRow, "id" | "content" | "content_parts">>;
      const target = users[users.length - 1];
      if (target === undefined) return { rewound: 0, turnsUndone: 0, targetText: null };
      const batch =
        ((conn.stmt("SELECT max(rewind_batch) FROM messages WHERE session_id = ?").pluck().get(sessionId) as
          | number
          | null) ?? 0) + 1;
      conn
        .stmt(
          `DELETE FROM messages_fts WHERE rowid IN
             (SELECT id FROM messages WHERE session_id = ? AND id >= ? AND id <= ? AND rewound_at IS NULL)`,
        )
        .run(sessionId, target.id, indexWatermark(conn));
      const result = conn
        .stmt(
          `UPDATE messages SET rewound_at = ?, rewind_batch = ?
            WHERE session_id = ? AND id >= ? AND rewound_at IS NULL`,
        )
        .run(at, batch, sessionId, target.id);
      recomputeSummary(conn, sessionId);
      const text = contentText(target.content_parts ? JSON.parse(target.content!) : target.content);
      return { rewound: result.changes, turnsUndone: users.length, targetText: text === "" ? null : text };
    });
  }

  async restoreRewound(sessionId: string, options: { all?: boolean } = {}): Promise<number> {
    checkId(sessionId, "sessionId");
    return this.#write(`restoring rewound messages of ${sessionId}`, (conn) => {
      this.#requireRow(conn, sessionId);
      const rows = (
        options.all
          ? conn.stmt("SELECT * FROM messages WHERE session_id = ? AND rewound_at IS NOT NULL ORDER BY id").all(sessionId)
          : conn
              .stmt(
                `SELECT * FROM messages WHERE session_id = @id AND rewound_at IS NOT NULL AND rewind_batch =
                   (SELECT max(rewind_batch) FROM messages WHERE session_id = @id AND rewound_at IS NOT NULL) ORDER BY id`,
              )
              .all({ id: sessionId })
      ) as MessageRow[];
      const index = conn.stmt("INSERT INTO messages_fts(rowid, body) VALUES (?, ?)");
      const restore = conn.stmt("UPDATE messages SET rewound_at = NULL, rewind_batch = NULL WHERE id = ?");
      const watermark = indexWatermark(conn);
      for (const row of rows) {
        restore.run(row.id);
        // Rows beyond the watermark are indexed by the next catch-up.
        if (row.id <= watermark) {
          index.run(row.id, messageIndexText(row.content, row.content_parts, row.tool_name, row.tool_calls));
        }
      }
      if (rows.length > 0) recomputeSummary(conn, sessionId);
      return rows.length;
    });
  }

  async clearMessages(sessionId: string): Promise<number> {
    checkId(sessionId, "sessionId");
    return this.#write(`clearing session ${sessionId}`, (conn) => {
      this.#requireRow(conn, sessionId);
      const result = conn.stmt("DELETE FROM messages WHERE session_id = ?").run(sessionId);
      recomputeSummary(conn, sessionId);
      return result.changes;
    });
  }

  // --- titles -----------------------------------------------------------------

  /**
   * Throws unless `title` is free for session `forId` (whose parent is `parentId`). A
   * title held by a compression ancestor (reached through parents that all ended with
   * reason `compression`) moves to the continuation instead.
   */
  #assertTitleFree(conn: SqliteConnection, title: string, forId: string, parentId: string | null): void {
    const holder = conn.stmt("SELECT id FROM sessions WHERE title = ?").get(title) as { id: string } | undefined;
    if (holder === undefined || holder.id === forId) return;
    let isCompressionAncestor = false;
    const seen = new Set<string>([forId]);
    for (let up = parentId === null ? undefined : sessionRow(conn, parentId); up !== undefined; ) {
      if (up.end_reason !== COMPRESSION || seen.has(up.id)) break;
      if (up.id === holder.id) {
        isCompressionAncestor = true;
        break;
      }
      seen.add(up.id);
      up = up.parent_session_id === null ? undefined : sessionRow(conn, up.parent_session_id);
    }
    if (isCompressionAncestor) {
      conn.stmt("UPDATE sessions SET title = NULL, title_base = NULL, title_n = NULL WHERE id = ?").run(holder.id);
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
    return this.#write(`setting the title of ${id}`, (conn) => {
      const row = this.#requireRow(conn, id);
      if (clean !== null) this.#assertTitleFree(conn, clean, id, row.parent_session_id);
      const lineage = clean === null ? null : parseLineageTitle(clean);
      conn
        .stmt("UPDATE sessions SET title = ?, title_base = ?, title_n = ? WHERE id = ?")
        .run(clean, lineage?.base ?? null, lineage?.n ?? null, id);
      return clean;
    });
  }

  async getTitle(id: string): Promise<string | null> {
    checkId(id, "id");
    return this.#read("reading a title", (conn) => this.#requireRow(conn, id).title);
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
    return this.#read("resolving a title", (conn) => {
      const newest = conn
        .stmt("SELECT id, title_n FROM sessions WHERE title_base = ? ORDER BY title_n DESC LIMIT 1")
        .get(clean) as { id: string; title_n: number } | undefined;
      if (newest !== undefined && newest.title_n >= 2) return newest.id;
      return (conn.stmt("SELECT id FROM sessions WHERE title = ?").pluck().get(clean) as string | undefined) ?? null;
    });
  }

  async nextTitleInLineage(title: string): Promise<string> {
    const clean = sanitizeTitle(title);
    if (clean === null) throw new InvalidInputError("The title is empty after sanitising.", { field: "title" });
    const { base } = parseLineageTitle(clean);
    return this.#read("finding the next title", (conn) => {
      const max = conn.stmt("SELECT max(title_n) FROM sessions WHERE title_base = ?").pluck().get(base) as number | null;
      const next = max === null ? base : formatLineageTitle(base, Math.max(max, 1) + 1);
      return sanitizeTitle(next) ?? next; // throws when the numbered title would exceed the limit
    });
  }

  // --- lineage ----------------------------------------------------------------

  async getAncestors(id: string): Promise<Session[]> {
    checkId(id, "id");
    return this.#read("reading ancestors", (conn) => {
      this.#requireRow(conn, id);
      return ancestorRows(conn, id).map((row) => toSession(row));
    });
  }

  async getDescendants(id: string): Promise<Session[]> {
    checkId(id, "id");
    return this.#read("reading descendants", (conn) => {
      this.#requireRow(conn, id);
      return descendantRows(conn, id).map((row) => toSession(row));
    });
  }

  async getCompressionTip(id: string): Promise<string> {
    checkId(id, "id");
    return this.#read("finding the compression tip", (conn) => {
      this.#requireRow(conn, id);
      return compressionTip(conn, id);
    });
  }

  // --- listing and search -----------------------------------------------------

  async listSessions(options: ListSessionsOptions = {}): Promise<Page<SessionSummary>> {
    return this.#read("listing sessions", (conn) => listSessions(conn, options));
  }

  async searchMessages(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    checkSearchOptions(query, options); // before the index catch-up writes anything
    await this.#catchUpIndex();
    return this.#read("searching", (conn) => searchMessages(conn, query, options));
  }

  /** Indexes every message (from any process) that the search index has not seen yet. */
  async #catchUpIndex(): Promise<void> {
    if (this.#closed) throw new StoreClosedError();
    await this.#queue.drain();
    if (!indexIsBehind(this.#conn)) return;
    await this.#write("updating the search index", (conn) => indexPending(conn));
    this.#unindexed = 0;
  }

  /** Counts appended messages and indexes them in a batch once enough have gathered, or soon after writes pause. */
  #noteAppended(count: number): void {
    this.#unindexed += count;
    if (this.#unindexed >= INDEX_BATCH) {
      this.#unindexed = 0;
      void this.#write("updating the search index", (conn) => indexPending(conn)).catch(() => {
        // A later catch-up (the next batch or search) retries.
      });
    }
    if (this.#indexTimer === null) {
      this.#indexTimer = setTimeout(() => {
        this.#indexTimer = null;
        if (this.#closed || this.#unindexed === 0) return;
        this.#unindexed = 0;
        void this.#write("updating the search index", (conn) => indexPending(conn)).catch(() => {});
      }, INDEX_IDLE_MS);
      this.#indexTimer.unref();
    }
  }

  // --- export / import --------------------------------------------------------

  async *exportSessions(options: ExportOptions = {}): AsyncIterable<SessionRecord> {
    const sources = checkNameList(options.sources, "sources");
    const userId = checkUserIdFilter(options.userId);
    const messageSql = options.includeRewound
      ? "SELECT * FROM messages WHERE session_id = ? ORDER BY id"
      : "SELECT * FROM messages WHERE session_id = ? AND rewound_at IS NULL ORDER BY id";
    const toRecord = (conn: SqliteConnection, row: SessionRow): SessionRecord =>
      toSessionRecord(toSession(row), (conn.stmt(messageSql).all(row.id) as MessageRow[]).map(toMessage));

    if (options.sessionId !== undefined) {
      const id = checkId(options.sessionId, "sessionId");
      yield await this.#read("exporting a session", (conn) => {
        const row = this.#requireRow(conn, id);
        // Another user's session is not found (its existence is not disclosed).
        if (userId !== null && row.user_id !== userId) {
          throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
        }
        return toRecord(conn, row);
      });
      return;
    }
    let filter = sources === null ? "" : `AND source IN (${sources.map(() => "?").join(", ")})`;
    if (userId !== null) filter = `AND user_id = ? ${filter}`;
    const filterParams = [...(userId === null ? [] : [userId]), ...(sources ?? [])];
    const pageSql = `SELECT * FROM sessions WHERE (started_at, id) > (?, ?) ${filter} ORDER BY started_at, id LIMIT 50`;
    let after: [number, string] = [-Infinity, ""];
    for (;;) {
      // One page of sessions at a time, each with its messages: memory stays bounded by the largest session.
      const rows = await this.#read("exporting sessions", (conn) =>
        conn.stmt(pageSql).all(after[0], after[1], ...filterParams) as SessionRow[],
      );
      if (rows.length === 0) return;
      for (const row of rows) {
        const record = await this.#read("exporting a session", (conn) => {
          const fresh = sessionRow(conn, row.id);
          return fresh === undefined ? null : toRecord(conn, fresh);
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
      this.#write(`importing session ${record.session.id}`, (conn) => this.#importOne(conn, record, waiting)),
    );
  }

  #importOne(conn: SqliteConnection, record: ValidRecord, waitingChildren: string[]): ImportOutcome {
    const s = record.session;
    if (sessionRow(conn, s.id) !== undefined) return { status: "skipped", missingParent: null };
    const parentId = s.parentSessionId ?? null;
    if (parentId === s.id) {
      throw new InvalidInputError(`session ${s.id} names itself as its parent, which would close a lineage cycle; record skipped.`);
    }
    const parentExists = parentId !== null && sessionRow(conn, parentId) !== undefined;
    if (s.title !== null) this.#assertTitleFree(conn, s.title, s.id, parentExists ? parentId : null);
    insertSession(conn, {
      id: s.id,
      source: s.source,
      userId: s.userId ?? null,
      model: s.model ?? null,
      modelConfig: s.modelConfig == null ? null : JSON.stringify(s.modelConfig),
      systemPrompt: s.systemPrompt ?? null,
      parentId: parentExists ? parentId : null,
      startedAt: s.startedAt,
      endedAt: s.endedAt ?? null,
      endReason: s.endedAt == null ? null : (s.endReason ?? null),
      title: s.title,
      sessionKey: s.sessionKey ?? null,
      chatId: s.chatId ?? null,
      chatType: s.chatType ?? null,
      threadId: s.threadId ?? null,
      usage: s.usage ?? {},
    });
    const stored: StoredMessage[] = record.messages.map(({ message, rewoundAt }) => toStoredMessage(message, rewoundAt));
    insertMessages(conn, s.id, stored);
    recomputeSummary(conn, s.id);
    const link = conn.stmt("UPDATE sessions SET parent_session_id = ? WHERE id = ? AND parent_session_id IS NULL");
    for (const child of waitingChildren) link.run(s.id, child);
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
      up = sessionRow(conn, up)?.parent_session_id ?? null;
    }
    refreshChain(conn, parentExists ? parentId! : s.id);
    return { status: "imported", missingParent: parentId !== null && !parentExists ? parentId : null };
  }

  // --- deletion and retention -------------------------------------------------

  async deleteSession(id: string): Promise<boolean> {
    checkId(id, "id");
    return this.#write(`deleting session ${id}`, (conn) => {
      const row = sessionRow(conn, id);
      if (row === undefined) return false;
      this.#deleteRows(conn, [row]);
      return true;
    });
  }

  /** Deletes sessions (messages cascade, children are detached) and refreshes what their removal changes. */
  #deleteRows(conn: SqliteConnection, rows: SessionRow[]): void {
    const gone = new Set(rows.map((r) => r.id));
    const touched = new Set<string>();
    for (const row of rows) {
      for (const child of childIds(conn, row.id)) if (!gone.has(child)) touched.add(child);
      if (row.parent_session_id !== null && !gone.has(row.parent_session_id)) touched.add(row.parent_session_id);
    }
    const del = conn.stmt("DELETE FROM sessions WHERE id = ?");
    for (const row of rows) del.run(row.id);
    for (const id of touched) refreshChain(conn, id);
  }

  async pruneSessions(options: PruneOptions): Promise<number> {
    const { cutoffDays, sources, vacuum } = checkPruneOptions(options);
    return this.#prune(cutoffDays, sources, checkTime(options.now, "now", now()), vacuum);
  }

  async #prune(olderThanDays: number, sources: string[] | null, at: number, vacuum: boolean): Promise<number> {
    const cutoff = at - olderThanDays * DAY_SECONDS;
    const filter = sources === null ? "" : `AND source IN (${sources.map(() => "?").join(", ")})`;
    const deleted = await this.#write("pruning sessions", (conn) => {
      const rows = conn
        .stmt(`SELECT * FROM sessions WHERE ended_at IS NOT NULL AND last_active_at < ? ${filter}`)
        .all(cutoff, ...(sources ?? [])) as SessionRow[];
      this.#deleteRows(conn, rows);
      return rows.length;
    });
    if (deleted > 0 && vacuum) await this.#compact();
    return deleted;
  }

  /**
   * Gives freed pages back to the file system and shrinks the WAL (after a prune that
   * removed rows). Best effort: the prune has committed already, so if another process
   * keeps the database busy the space is reclaimed by a later prune instead.
   */
  async #compact(): Promise<void> {
    await this.#read("compacting the database", (conn) => {
      try {
        conn.db.exec("VACUUM");
        conn.db.pragma("wal_checkpoint(TRUNCATE)");
      } catch (error) {
        if (!isSqliteBusy(error)) throw error;
      }
    });
  }

  async autoPrune(options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }> {
    const interval = options?.intervalSeconds ?? DAY_SECONDS;
    if (typeof interval !== "number" || !Number.isFinite(interval) || interval < 0) {
      throw new InvalidInputError("intervalSeconds must be a number of seconds, 0 or more.", { field: "intervalSeconds" });
    }
    const at = checkTime(options?.now, "now", now());
    const prune = checkPruneOptions(options);
    // Claim the run in the database, so every process sharing it agrees on the last run.
    const due = await this.#write("scheduling an auto-prune", (conn) => {
      const last = conn.stmt("SELECT value FROM meta WHERE key = ?").pluck().get(AUTO_PRUNE_META_KEY) as string | undefined;
      if (last !== undefined && at - Number(last) < interval) return false;
      conn.stmt("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(AUTO_PRUNE_META_KEY, String(at));
      return true;
    });
    if (!due) return { ran: false, deleted: 0 };
    return { ran: true, deleted: await this.#prune(prune.cutoffDays, prune.sources, at, prune.vacuum) };
  }

  // --- execution sessions -----------------------------------------------------

  async writeExecutions(change: ExecutionChange): Promise<ExecutionChangeResult | null> {
    const checked = checkExecutionChange(change);
    return this.#write("writing execution sessions", (conn) => executions.writeExecutions(conn, checked));
  }

  async getExecution(id: string): Promise<ExecutionRecord | null> {
    checkId(id, "id");
    return this.#read("reading an execution session", (conn) => executions.getExecution(conn, id));
  }

  async findExecutions(options: FindExecutionsOptions): Promise<ExecutionSummary[]> {
    const checked = checkFindExecutions(options);
    return this.#read("finding execution sessions", (conn) => executions.findExecutions(conn, checked));
  }

  async listExecutions(options: ListExecutionsOptions = {}): Promise<Page<ExecutionSummary> & { total: number }> {
    const checked = checkListExecutions(options);
    return this.#read("listing execution sessions", (conn) => executions.listExecutions(conn, checked));
  }

  async listExecutionUnits(options: ListExecutionUnitsOptions = {}): Promise<ExecutionSummary[]> {
    const checked = checkListExecutionUnits(options);
    return this.#read("listing execution units", (conn) => executions.listExecutionUnits(conn, checked));
  }

  // --- stats and meta ---------------------------------------------------------

  async getStats(options: { searchIndexBytes?: boolean } = {}): Promise<StoreStats> {
    return this.#read("reading stats", (conn) => {
      const totals = conn
        .stmt("SELECT count(*) AS sessions, coalesce(sum(message_count), 0) AS messages FROM sessions")
        .get() as { sessions: number; messages: number };
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

  async getInsights(options: InsightsOptions = {}): Promise<Insights> {
    const checked = checkInsightsOptions(options, now());
    return this.#read("reading insights", (conn) => readInsights(conn, checked));
  }

  // --- gateway routing state --------------------------------------------------

  async getRoute(key: string): Promise<Route | null> {
    checkId(key, "key");
    return this.#read("reading a routing entry", (conn) => {
      const row = routeRow(conn, key);
      return row === undefined ? null : toRoute(row);
    });
  }

  async findRouteBySession(sessionId: string): Promise<Route | null> {
    checkId(sessionId, "sessionId");
    return this.#read("finding a routing entry", (conn) => routeBySession(conn, sessionId));
  }

  async listRoutes(options: ListRoutesOptions = {}): Promise<Page<Route>> {
    const checked = checkListRoutes(options);
    return this.#read("listing routing entries", (conn) => listRoutes(conn, checked));
  }

  async writeRoute(write: RouteWrite): Promise<Route | null> {
    const checked = checkRouteWrite(write, now());
    const prepared = checked.createSession === null ? null : prepareNewSession(checked.createSession);
    const appended = checked.appendMessages === null ? null : checked.appendMessages.map((m) => toStoredMessage(m));
    return this.#write(`writing the routing entry ${checked.key}`, (conn) => {
      leases.checkFence(conn, checked.fence);
      const current = routeRow(conn, checked.key);
      const version = current === undefined ? null : Number(current.version);
      if (version !== checked.expectedVersion) return null;
      if (checked.endSession !== null) {
        const { id, reason, endedAt } = checked.endSession;
        this.#endSessionRow(conn, id, reason, endedAt);
      }
      if (checked.createSession !== null) this.#insertSession(conn, checked.createSession, prepared!);
      if (checked.reopenSession !== null) this.#reopenSessionRow(conn, checked.reopenSession);
      this.#requireRow(conn, checked.route.sessionId);
      if (appended !== null) this.#appendRows(conn, checked.route.sessionId, appended);
      if (checked.recordUsage !== null) this.#applyUsage(conn, checked.route.sessionId, checked.recordUsage);
      return storeRoute(conn, checked.key, checked.route, (version ?? 0) + 1);
    });
  }

  async deleteRoute(key: string, options: { expectedVersion?: number } = {}): Promise<boolean> {
    checkId(key, "key");
    const expected = options.expectedVersion;
    return this.#write(`deleting the routing entry ${key}`, (conn) =>
      expected === undefined
        ? conn.stmt("DELETE FROM routes WHERE key = ?").run(key).changes > 0
        : conn.stmt("DELETE FROM routes WHERE key = ? AND version = ?").run(key, expected).changes > 0,
    );
  }

  async findLiveSessionByKey(key: string): Promise<Session | null> {
    checkId(key, "key");
    return this.#read("finding the live session of a key", (conn) => {
      const row = conn
        .stmt("SELECT * FROM sessions WHERE session_key = ? AND ended_at IS NULL ORDER BY started_at DESC, id DESC LIMIT 1")
        .get(key) as SessionRow | undefined;
      return row === undefined ? null : toSession(row);
    });
  }

  async recordAlias(namespace: string, a: string, b: string): Promise<string> {
    checkId(namespace, "namespace");
    checkId(a, "a");
    checkId(b, "b");
    return this.#write("recording an identity alias", (conn) => recordAlias(conn, namespace, a, b));
  }

  async resolveAlias(namespace: string, id: string): Promise<string> {
    checkId(namespace, "namespace");
    checkId(id, "id");
    return this.#read("resolving an identity alias", (conn) => resolveAlias(conn, namespace, id));
  }

  async listAliases(namespace: string, id: string): Promise<string[]> {
    checkId(namespace, "namespace");
    checkId(id, "id");
    return this.#read("listing identity aliases", (conn) => listAliases(conn, namespace, id));
  }

  async enqueue(key: string, event: NewQueuedEvent, options: { maxDepth?: number } = {}): Promise<EnqueueResult> {
    checkPathSafe(key, "key");
    const checked = checkQueuedEvent(event, options, now());
    return this.#write(`queueing an event for ${key}`, (conn) => enqueue(conn, key, checked.event, checked.maxDepth));
  }

  async listQueue(key: string): Promise<QueuedItem[]> {
    checkId(key, "key");
    return this.#read("reading a queue", (conn) => queueItems(conn, key));
  }

  async claimQueued(key: string, options: { at?: number } = {}): Promise<QueuedItem | null> {
    checkId(key, "key");
    const at = checkTime(options.at, "at", now());
    return this.#write(`claiming the next queued event of ${key}`, (conn) => claimQueued(conn, key, at));
  }

  async completeQueued(key: string, itemId: number): Promise<boolean> {
    checkId(key, "key");
    checkItemId(itemId);
    return this.#write("completing a queued event", (conn) =>
      conn.stmt("DELETE FROM inbound_queue WHERE key = ? AND id = ?").run(key, itemId).changes > 0,
    );
  }

  async clearQueue(key: string): Promise<number> {
    checkId(key, "key");
    return this.#write(`clearing the queue of ${key}`, (conn) =>
      conn.stmt("DELETE FROM inbound_queue WHERE key = ? AND claimed_at IS NULL").run(key).changes,
    );
  }

  async listQueuedKeys(): Promise<string[]> {
    return this.#read("listing queued keys", (conn) =>
      conn.stmt("SELECT DISTINCT key FROM inbound_queue ORDER BY key").pluck().all() as string[],
    );
  }

  async acquireLease(key: string, holder: string, options: LeaseOptions): Promise<Lease | null> {
    const request = checkLeaseRequest(key, holder, options, now());
    return this.#write(`acquiring the lease on ${request.key}`, (conn) => leases.acquireLease(conn, request));
  }

  async renewLease(key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null> {
    const request = checkLeaseRequest(key, holder, options, now());
    checkLeaseToken(token);
    return this.#write(`renewing the lease on ${request.key}`, (conn) => leases.renewLease(conn, request, token));
  }

  async releaseLease(key: string, holder: string, token: number): Promise<boolean> {
    checkPathSafe(key, "key");
    checkId(holder, "holder");
    checkLeaseToken(token);
    return this.#write(`releasing the lease on ${key}`, (conn) => leases.releaseLease(conn, key, holder, token));
  }

  async getLease(key: string): Promise<Lease | null> {
    checkPathSafe(key, "key");
    return this.#read("reading a lease", (conn) => leases.getLease(conn, key));
  }

  // --- cross-platform handoffs --------------------------------------------------

  async createHandoff(input: NewHandoff): Promise<Handoff> {
    const checked = checkNewHandoff(input, now());
    return this.#write(`recording a handoff of ${checked.sessionId}`, (conn) => handoffs.createHandoff(conn, checked));
  }

  async getHandoff(id: string): Promise<Handoff | null> {
    checkId(id, "id");
    return this.#read("reading a handoff", (conn) => handoffs.getHandoff(conn, id));
  }

  async claimHandoff(options: ClaimHandoffOptions): Promise<Handoff | null> {
    const checked = checkClaimHandoff(options, now());
    return this.#write("claiming a handoff", (conn) => handoffs.claimHandoff(conn, checked));
  }

  async finishHandoff(id: string, result: HandoffResult): Promise<Handoff> {
    checkId(id, "id");
    const checked = checkHandoffResult(result, now());
    return this.#write(`finishing handoff ${id}`, (conn) => handoffs.finishHandoff(conn, id, checked));
  }

  async getMeta(key: string): Promise<string | null> {
    checkId(key, "key");
    return this.#read("reading meta", (conn) =>
      ((conn.stmt("SELECT value FROM meta WHERE key = ?").pluck().get(key) as string | undefined) ?? null),
    );
  }

  async setMeta(key: string, value: string): Promise<void> {
    checkId(key, "key");
    if (optionalText(value, "value") === null) throw new InvalidInputError("value must be a string.", { field: "value" });
    await this.#write("writing meta", (conn) => {
      conn.stmt("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").run(key, value);
    });
  }

  async deleteMeta(key: string): Promise<boolean> {
    checkId(key, "key");
    return this.#write("deleting meta", (conn) => conn.stmt("DELETE FROM meta WHERE key = ?").run(key).changes > 0);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#queue.drain();
    if (this.#indexTimer !== null) clearTimeout(this.#indexTimer);
    this.#indexTimer = null;
    // Leave the index complete, so the next open searches without catching up.
    if (this.#unindexed > 0) await this.#write("updating the search index", (conn) => indexPending(conn)).catch(() => {});
    this.#closed = true;
    try {
      this.#conn.db.pragma("optimize");
    } catch {
      // best effort: another process may hold the lock
    }
    this.#conn.db.close();
  }
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
    return (
      (conn
        .stmt("SELECT sum(pgsize) FROM dbstat('main', 1) WHERE name LIKE 'messages_fts%'")
        .pluck()
        .get() as number | null) ?? 0
    );
  } catch {
    return null; // dbstat not compiled in
  }
}
