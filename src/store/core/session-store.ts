/**
 * The store core: every {@link SessionDB} method, written once. A backend hands it a
 * {@link StoreDialect} (its connection, transactions and the few statements that differ)
 * and gets the whole contract: validation, paging, title rules, lineage, export/import
 * streaming, prune orchestration, the routing write and error translation are the same on
 * every database by construction.
 *
 * @module
 */
import type {
  AutoPruneOptions,
  ClaimHandoffOptions,
  ConversationMessage,
  ConversationOptions,
  EnqueueResult,
  ExecutionChange,
  ExecutionChangeResult,
  ExecutionPage,
  ExecutionRecord,
  ExecutionSummary,
  ExportOptions,
  FencedWriteOptions,
  FindExecutionsOptions,
  Handoff,
  HandoffResult,
  ImportReport,
  Insights,
  InsightsOptions,
  Lease,
  LeaseOptions,
  ListExecutionUnitsOptions,
  ListExecutionsOptions,
  ListRoutesOptions,
  ListSessionsOptions,
  Message,
  MessageWindowOptions,
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
} from "../contract.js";
import { conversationOf } from "../conversation.js";
import { ConflictError, InvalidInputError, NotFoundError, StoreClosedError } from "../errors.js";
import {
  checkExecutionChange,
  checkFindExecutions,
  checkListExecutionUnits,
  checkListExecutions,
  checkUserIdFilter,
} from "../execution-input.js";
import { checkClaimHandoff, checkHandoffResult, checkNewHandoff } from "../handoff-input.js";
import {
  checkId,
  checkLimit,
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
import { checkInsightsOptions } from "../insights.js";
import { contentText } from "../preview.js";
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
import { toSession, toSummary, toUsage, type SessionRow } from "../session-rows.js";
import { formatLineageTitle, parseLineageTitle, sanitizeTitle } from "../titles.js";
import { assertUsageNotNegative, checkUsageMode, planUsageUpdate, usageSetClauses, type UsagePlan } from "../usage-update.js";
import {
  ancestorRows,
  childIds,
  COMPRESSION,
  compressionTip,
  descendantRows,
  refreshChain,
  sessionRow,
} from "./lineage-steps.js";
import * as aliases from "./alias-steps.js";
import * as leases from "./lease-steps.js";
import { checkFence } from "./lease-steps.js";
import * as executions from "./execution-steps.js";
import { listSessionsPage } from "./listing-steps.js";
import * as queue from "./queue-steps.js";
import { insertSession } from "./session-insert.js";
import { all, column, one, placeholders, run, value, type Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { claimTitle } from "./title-steps.js";

const DAY_SECONDS = 86_400;
const AUTO_PRUNE_META_KEY = "auto_prune.last_run_at";
/** Most ids in one `IN (…)` list (well under every driver's parameter limit). */
const DELETE_CHUNK = 500;

const now = (): number => Date.now() / 1000;

/** The write lane of a key's queue (apart from session lanes: a session id never holds a NUL). */
const queueLane = (key: string): string => `\u0000queue:${key}`;

/**
 * A {@link SessionDB} over a {@link StoreDialect}. Backends subclass it only to add their
 * `open` (see `SqliteSessionDB`, `PostgresSessionDB`).
 */
export class SessionStore<M> implements SessionDB {
  readonly capabilities: StoreCapabilities;
  readonly location: string;
  readonly #d: StoreDialect<M>;

  protected constructor(dialect: StoreDialect<M>) {
    this.#d = dialect;
    this.capabilities = dialect.capabilities;
    this.location = dialect.location;
  }

  // --- row helpers (inside steps) ---------------------------------------------

  #session(row: SessionRow): Session {
    return toSession(row, this.#d.decodeText);
  }

  /** The session row, or NotFoundError. `lock`: held until the write commits. */
  *#requireRow(id: string, lock = false): Steps<SessionRow> {
    const row = yield* sessionRow(id, lock ? this.#d.forUpdate : "");
    if (row === undefined) throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
    return row;
  }

  #assertOpen(): void {
    if (this.#d.closed) throw new StoreClosedError();
  }

  // --- sessions ---------------------------------------------------------------

  async createSession(input: NewSession): Promise<Session> {
    checkNewSession(input);
    const prepared = prepareNewSession(input, now());
    return this.#d.write(`creating session ${prepared.id}`, () => this.#insertSession(input, prepared));
  }

  /** Inserts a checked new session (inside a write). */
  *#insertSession(input: NewSession, prepared: PreparedSession): Steps<Session> {
    const { id, startedAt, title, modelConfig } = prepared;
    if ((yield* sessionRow(id)) !== undefined) {
      throw new ConflictError(`A session with id "${id}" already exists; choose another id.`, { sessionId: id });
    }
    const parentId = input.parentSessionId ?? null;
    if (parentId !== null && (yield* sessionRow(parentId, this.#d.forUpdate)) === undefined) {
      throw new NotFoundError(`The parent session "${parentId}" does not exist.`);
    }
    if (title !== null) yield* claimTitle(title, id, parentId);
    yield* insertSession(
      {
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
      },
      this.#d.encodeText,
    );
    yield* refreshChain(parentId ?? id);
    return this.#session(yield* this.#requireRow(id));
  }

  async getSession(id: string): Promise<Session | null> {
    checkId(id, "id");
    return this.#d.read("reading a session", function* (this: SessionStore<M>) {
      const row = yield* sessionRow(id);
      return row === undefined ? null : this.#session(row);
    }.bind(this));
  }

  async endSession(id: string, reason: string, options: { endedAt?: number } = {}): Promise<boolean> {
    checkId(id, "id");
    checkId(reason, "reason");
    const endedAt = checkTime(options.endedAt, "endedAt", now());
    return this.#d.write(`ending session ${id}`, () => this.#endSessionRow(id, reason, endedAt));
  }

  /** Ends a session (inside a write); false when it had already ended. */
  *#endSessionRow(id: string, reason: string, endedAt: number): Steps<boolean> {
    const row = yield* this.#requireRow(id, true);
    if (row.ended_at !== null) return false;
    yield* run("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?", [endedAt, reason, id]);
    yield* this.#d.refreshLastActive(id);
    if (reason === COMPRESSION) yield* refreshChain(id);
    return true;
  }

  async reopenSession(id: string): Promise<boolean> {
    checkId(id, "id");
    return this.#d.write(`reopening session ${id}`, () => this.#reopenSessionRow(id));
  }

  /** Reopens a session (inside a write); false when it was not ended. */
  *#reopenSessionRow(id: string): Steps<boolean> {
    const row = yield* this.#requireRow(id, true);
    if (row.ended_at === null) return false;
    yield* run("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", [id]);
    yield* this.#d.refreshLastActive(id);
    if (row.end_reason === COMPRESSION) yield* refreshChain(id);
    return true;
  }

  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    this.#assertOpen();
    if (typeof idOrPrefix !== "string" || idOrPrefix === "" || idOrPrefix.includes("\u0000")) return null;
    return this.#d.read("resolving a session id", function* () {
      if ((yield* sessionRow(idOrPrefix)) !== undefined) return idOrPrefix;
      // Range scan on the primary key: ids in [prefix, prefix + U+FFFF).
      const matches = yield* column<string>("SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 2", [
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
    const params: unknown[] = [];
    const encode = this.#d.encodeText;
    if (update.model !== undefined) {
      sets.push("model = ?");
      params.push(encode(update.model));
    }
    if (update.systemPrompt !== undefined) {
      sets.push("system_prompt = ?");
      params.push(encode(update.systemPrompt));
    }
    if (update.modelConfig !== undefined) {
      sets.push("model_config = ?");
      params.push(update.modelConfig === null ? null : toJson(update.modelConfig, "modelConfig"));
    }
    return this.#d.write(`updating session ${id}`, function* (this: SessionStore<M>) {
      yield* this.#requireRow(id, true);
      if (sets.length > 0) yield* run(`UPDATE sessions SET ${sets.join(", ")} WHERE id = ?`, [...params, id]);
      return this.#session(yield* this.#requireRow(id));
    }.bind(this));
  }

  async recordUsage(
    id: string,
    usage: UsageUpdate,
    options: { mode?: "delta" | "absolute" } & FencedWriteOptions = {},
  ): Promise<SessionUsage> {
    checkId(id, "id");
    const fence = fenceOf(options);
    const plan = planUsageUpdate(usage, checkUsageMode(options.mode));
    return this.#d.write(`recording usage of session ${id}`, function* (this: SessionStore<M>) {
      yield* checkFence(fence, this.#d);
      return yield* this.#applyUsage(id, plan);
    }.bind(this));
  }

  /**
   * Applies a planned usage update to a session (inside a write, under its row lock) and
   * returns the new totals. Throws (so the write rolls back) when the session is missing or
   * a total would go below zero.
   */
  *#applyUsage(id: string, plan: UsagePlan): Steps<SessionUsage> {
    const params: unknown[] = [];
    const sets = usageSetClauses(plan, (a) => {
      if (a.kind === "text") {
        params.push(this.#d.encodeText(a.value as string | null));
        return "?";
      }
      params.push(a.value);
      return this.#d.usageParam(a.kind);
    });
    yield* this.#requireRow(id, true);
    if (sets.length > 0) yield* run(`UPDATE sessions SET ${sets.join(", ")} WHERE id = ?`, [...params, id]);
    return assertUsageNotNegative(toUsage(yield* this.#requireRow(id), this.#d.decodeText));
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
      this.#d.storeMessage(normalizeMessage(m, messages.length === 1 && field === "message" ? field : `${field}[${i}]`, at)),
    );
    const d = this.#d;
    return d.write(
      `appending to session ${sessionId}`,
      function* () {
        yield* checkFence(fence, d);
        return yield* d.appendMessages(sessionId, stored);
      },
      sessionId,
    );
  }

  async getMessages(sessionId: string, options: MessageWindowOptions = {}): Promise<Message[]> {
    checkId(sessionId, "sessionId");
    const { last, afterId, limit, offset } = checkMessageWindow(options);
    const d = this.#d;
    const visible = options.includeRewound === true ? "" : " AND rewound_at IS NULL";
    const from = `SELECT ${d.messageColumns} FROM messages WHERE session_id = ?${visible}`;
    let sql: string;
    if (last === null) {
      const after = afterId === null ? "" : ` AND id > ${afterId}`;
      const page = limit === null && offset === 0 ? "" : d.limitOffset(limit, offset);
      sql = `${from}${after} ORDER BY id${page}`;
    } else {
      sql = `SELECT * FROM (${from} ORDER BY id DESC LIMIT ${last}) AS w ORDER BY id`;
    }
    return d.read("reading messages", function* (this: SessionStore<M>) {
      yield* this.#requireRow(sessionId);
      return (yield* all<unknown>(sql, [sessionId])).map((row) => d.toMessage(row));
    }.bind(this));
  }

  async getConversation(sessionId: string, options: ConversationOptions = {}): Promise<ConversationMessage[]> {
    return conversationOf(this, sessionId, options);
  }

  async replaceMessages(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
    checkId(sessionId, "sessionId");
    if (!Array.isArray(messages)) throw new InvalidInputError("replaceMessages needs an array of messages.", { field: "messages" });
    const fence = fenceOf(options);
    const at = now();
    const d = this.#d;
    const stored = messages.map((m, i) => d.storeMessage(normalizeMessage(m, `messages[${i}]`, at)));
    return d.write(`replacing the transcript of ${sessionId}`, function* (this: SessionStore<M>) {
      yield* checkFence(fence, d);
      yield* this.#requireRow(sessionId, true);
      yield* run("DELETE FROM messages WHERE session_id = ?", [sessionId]);
      const ids = yield* d.insertMessages(sessionId, stored);
      yield* d.recomputeSummary(sessionId);
      return ids;
    }.bind(this));
  }

  async rewind(sessionId: string, turns = 1, options?: FencedWriteOptions): Promise<RewindResult> {
    checkId(sessionId, "sessionId");
    if (typeof turns !== "number" || Number.isNaN(turns)) {
      throw new InvalidInputError("turns must be a number.", { field: "turns" });
    }
    const fence = fenceOf(options);
    const n = Math.max(1, Math.min(Math.floor(turns), 1_000_000));
    const at = now();
    const d = this.#d;
    return d.write(`rewinding session ${sessionId}`, function* (this: SessionStore<M>): Steps<RewindResult> {
      yield* checkFence(fence, d);
      yield* this.#requireRow(sessionId, true);
      const users = yield* all<unknown>(
        `SELECT ${d.messageColumns} FROM messages
          WHERE session_id = ? AND role = 'user' AND rewound_at IS NULL ORDER BY id DESC LIMIT ?`,
        [sessionId, n],
      );
      const targetRow = users[users.length - 1];
      if (targetRow === undefined) return { rewound: 0, turnsUndone: 0, targetText: null };
      const target = d.toMessage(targetRow);
      const batch = ((yield* value<number | null>("SELECT max(rewind_batch) FROM messages WHERE session_id = ?", [sessionId])) ?? 0) + 1;
      yield* d.unindexFrom(sessionId, target.id);
      const rewound = yield* run(
        "UPDATE messages SET rewound_at = ?, rewind_batch = ? WHERE session_id = ? AND id >= ? AND rewound_at IS NULL",
        [at, batch, sessionId, target.id],
      );
      yield* d.recomputeSummary(sessionId);
      const text = contentText(target.content);
      return { rewound, turnsUndone: users.length, targetText: text === "" ? null : text };
    }.bind(this));
  }

  async restoreRewound(sessionId: string, options: { all?: boolean } = {}): Promise<number> {
    checkId(sessionId, "sessionId");
    const d = this.#d;
    const which = options.all
      ? "session_id = ? AND rewound_at IS NOT NULL"
      : `session_id = ? AND rewound_at IS NOT NULL AND rewind_batch =
           (SELECT max(rewind_batch) FROM messages WHERE session_id = ? AND rewound_at IS NOT NULL)`;
    const params = options.all ? [sessionId] : [sessionId, sessionId];
    return d.write(`restoring rewound messages of ${sessionId}`, function* (this: SessionStore<M>) {
      yield* this.#requireRow(sessionId, true);
      const rows = yield* all<unknown>(`SELECT ${d.messageColumns} FROM messages WHERE ${which} ORDER BY id`, params);
      if (rows.length === 0) return 0;
      yield* run(`UPDATE messages SET rewound_at = NULL, rewind_batch = NULL WHERE ${which}`, params);
      yield* d.reindex(rows);
      yield* d.recomputeSummary(sessionId);
      return rows.length;
    }.bind(this));
  }

  async clearMessages(sessionId: string): Promise<number> {
    checkId(sessionId, "sessionId");
    return this.#d.write(`clearing session ${sessionId}`, function* (this: SessionStore<M>) {
      yield* this.#requireRow(sessionId, true);
      const deleted = yield* run("DELETE FROM messages WHERE session_id = ?", [sessionId]);
      yield* this.#d.recomputeSummary(sessionId);
      return deleted;
    }.bind(this));
  }

  // --- titles -----------------------------------------------------------------

  async setTitle(id: string, title: string | null): Promise<string | null> {
    checkId(id, "id");
    const clean = sanitizeTitle(title);
    return this.#d.write(`setting the title of ${id}`, function* (this: SessionStore<M>) {
      const row = yield* this.#requireRow(id, true);
      if (clean !== null) yield* claimTitle(clean, id, row.parent_session_id);
      const lineage = clean === null ? null : parseLineageTitle(clean);
      yield* run("UPDATE sessions SET title = ?, title_base = ?, title_n = ? WHERE id = ?", [
        clean,
        lineage?.base ?? null,
        lineage?.n ?? null,
        id,
      ]);
      return clean;
    }.bind(this));
  }

  async getTitle(id: string): Promise<string | null> {
    checkId(id, "id");
    return this.#d.read("reading a title", function* (this: SessionStore<M>) {
      return (yield* this.#requireRow(id)).title;
    }.bind(this));
  }

  async resolveByTitle(title: string): Promise<string | null> {
    this.#assertOpen();
    let clean: string | null;
    try {
      clean = sanitizeTitle(title);
    } catch {
      return null; // longer than any stored title can be
    }
    if (clean === null) return null;
    const wanted = clean;
    return this.#d.read("resolving a title", function* () {
      const newest = yield* one<{ id: string; title_n: number }>(
        "SELECT id, title_n FROM sessions WHERE title_base = ? ORDER BY title_n DESC LIMIT 1",
        [wanted],
      );
      if (newest !== undefined && newest.title_n >= 2) return newest.id;
      return (yield* value<string>("SELECT id FROM sessions WHERE title = ?", [wanted])) ?? null;
    });
  }

  async nextTitleInLineage(title: string): Promise<string> {
    const clean = sanitizeTitle(title);
    if (clean === null) throw new InvalidInputError("The title is empty after sanitising.", { field: "title" });
    const { base } = parseLineageTitle(clean);
    return this.#d.read("finding the next title", function* () {
      const max = (yield* value<number | null>("SELECT max(title_n) FROM sessions WHERE title_base = ?", [base])) ?? null;
      const next = max === null ? base : formatLineageTitle(base, Math.max(max, 1) + 1);
      return sanitizeTitle(next) ?? next; // throws when the numbered title would exceed the limit
    });
  }

  // --- lineage ----------------------------------------------------------------

  async getAncestors(id: string): Promise<Session[]> {
    checkId(id, "id");
    return this.#d.read("reading ancestors", function* (this: SessionStore<M>) {
      yield* this.#requireRow(id);
      return (yield* ancestorRows(id)).map((row) => this.#session(row));
    }.bind(this));
  }

  async getDescendants(id: string): Promise<Session[]> {
    checkId(id, "id");
    return this.#d.read("reading descendants", function* (this: SessionStore<M>) {
      yield* this.#requireRow(id);
      return (yield* descendantRows(id)).map((row) => this.#session(row));
    }.bind(this));
  }

  async getCompressionTip(id: string): Promise<string> {
    checkId(id, "id");
    return this.#d.read("finding the compression tip", function* (this: SessionStore<M>) {
      yield* this.#requireRow(id);
      return yield* compressionTip(id);
    }.bind(this));
  }

  // --- listing and search -----------------------------------------------------

  async listSessions(options: ListSessionsOptions = {}): Promise<Page<SessionSummary>> {
    const d = this.#d;
    return d.read("listing sessions", () => listSessionsPage(options, d.encodeText, d.decodeText));
  }

  async searchMessages(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    checkSearchOptions(query, options); // before any index catch-up writes anything
    return this.#d.searchMessages(query, options);
  }

  // --- export / import --------------------------------------------------------

  async *exportSessions(options: ExportOptions = {}): AsyncIterable<SessionRecord> {
    const sources = checkNameList(options.sources, "sources");
    const userId = checkUserIdFilter(options.userId);
    const d = this.#d;
    const messageSql = `SELECT ${d.messageColumns} FROM messages WHERE session_id = ?${
      options.includeRewound ? "" : " AND rewound_at IS NULL"
    } ORDER BY id`;
    const self = this;
    function* record(row: SessionRow): Steps<SessionRecord> {
      const messages = (yield* all<unknown>(messageSql, [row.id])).map((m) => d.toMessage(m));
      return toSessionRecord(self.#session(row), messages);
    }

    if (options.sessionId !== undefined) {
      const id = checkId(options.sessionId, "sessionId");
      yield await d.read("exporting a session", function* (this: SessionStore<M>) {
        const row = yield* this.#requireRow(id);
        // Another user's session is not found (its existence is not disclosed).
        if (userId !== null && d.decodeText(row.user_id) !== userId) {
          throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
        }
        return yield* record(row);
      }.bind(this));
      return;
    }
    const filterParams: unknown[] = [];
    let filter = "";
    if (userId !== null) {
      filter += " AND user_id = ?";
      filterParams.push(d.encodeText(userId));
    }
    if (sources !== null) {
      filter += ` AND source IN (${placeholders(sources.length)})`;
      filterParams.push(...sources);
    }
    const pageSql = `SELECT * FROM sessions WHERE (started_at, id) > (?, ?)${filter} ORDER BY started_at, id LIMIT 50`;
    let after: [number, string] = [-Infinity, ""];
    for (;;) {
      // One page of sessions at a time, each with its messages: memory stays bounded by the largest session.
      const rows = await d.read("exporting sessions", () => all<SessionRow>(pageSql, [after[0], after[1], ...filterParams]));
      if (rows.length === 0) return;
      for (const row of rows) {
        const exported = await d.read("exporting a session", function* () {
          const fresh = yield* sessionRow(row.id);
          return fresh === undefined ? null : yield* record(fresh);
        });
        if (exported !== null) yield exported;
      }
      const last = rows[rows.length - 1]!;
      after = [last.started_at, last.id];
    }
  }

  async importSessions(lines: AsyncIterable<string> | Iterable<string>): Promise<ImportReport> {
    this.#assertOpen();
    return runImport(lines, (record, waiting) =>
      this.#d.write(`importing session ${record.session.id}`, () => this.#importOne(record, waiting)),
    );
  }

  *#importOne(record: ValidRecord, waitingChildren: string[]): Steps<ImportOutcome> {
    const d = this.#d;
    const s = record.session;
    if ((yield* sessionRow(s.id)) !== undefined) return { status: "skipped", missingParent: null };
    const parentId = s.parentSessionId ?? null;
    if (parentId === s.id) {
      throw new InvalidInputError(`session ${s.id} names itself as its parent, which would close a lineage cycle; record skipped.`);
    }
    const parentExists = parentId !== null && (yield* sessionRow(parentId, d.forUpdate)) !== undefined;
    if (s.title !== null) yield* claimTitle(s.title, s.id, parentExists ? parentId : null);
    yield* insertSession(
      {
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
      },
      d.encodeText,
    );
    const stored = record.messages.map(({ message, rewoundAt }) => d.storeMessage(message, rewoundAt));
    yield* d.insertMessages(s.id, stored);
    yield* d.recomputeSummary(s.id);
    for (const child of waitingChildren) {
      yield* run("UPDATE sessions SET parent_session_id = ? WHERE id = ? AND parent_session_id IS NULL", [s.id, child]);
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
      up = (yield* sessionRow(up))?.parent_session_id ?? null;
    }
    yield* refreshChain(parentExists ? parentId! : s.id);
    return { status: "imported", missingParent: parentId !== null && !parentExists ? parentId : null };
  }

  // --- deletion and retention -------------------------------------------------

  async deleteSession(id: string): Promise<boolean> {
    checkId(id, "id");
    return this.#d.write(`deleting session ${id}`, function* (this: SessionStore<M>) {
      const row = yield* sessionRow(id, this.#d.forUpdate);
      if (row === undefined) return false;
      yield* deleteRows([row]);
      return true;
    }.bind(this));
  }

  async pruneSessions(options: PruneOptions): Promise<number> {
    const { cutoffDays, sources, vacuum } = checkPruneOptions(options);
    return this.#prune(cutoffDays, sources, checkTime(options.now, "now", now()), vacuum);
  }

  async #prune(olderThanDays: number, sources: string[] | null, at: number, vacuum: boolean): Promise<number> {
    const cutoff = at - olderThanDays * DAY_SECONDS;
    const filter = sources === null ? "" : ` AND source IN (${placeholders(sources.length)})`;
    const d = this.#d;
    const deleted = await d.write("pruning sessions", function* () {
      const rows = yield* all<SessionRow>(
        `SELECT * FROM sessions WHERE ended_at IS NOT NULL AND last_active_at < ?${filter} ORDER BY id${d.forUpdate}`,
        [cutoff, ...(sources ?? [])],
      );
      yield* deleteRows(rows);
      return rows.length;
    });
    // Space comes back to the file system where the backend can do that without locking others out.
    if (deleted > 0 && vacuum) await d.compact();
    return deleted;
  }

  async autoPrune(options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }> {
    const interval = options?.intervalSeconds ?? DAY_SECONDS;
    if (typeof interval !== "number" || !Number.isFinite(interval) || interval < 0) {
      throw new InvalidInputError("intervalSeconds must be a number of seconds, 0 or more.", { field: "intervalSeconds" });
    }
    const at = checkTime(options?.now, "now", now());
    const prune = checkPruneOptions(options);
    const d = this.#d;
    // Claim the run in the database (under the meta row's lock), so every process sharing it agrees on the last run.
    const due = await d.write("scheduling an auto-prune", function* () {
      yield* run("INSERT INTO meta(key, value) VALUES (?, '') ON CONFLICT (key) DO NOTHING", [AUTO_PRUNE_META_KEY]);
      const last = yield* value<string>(`SELECT value FROM meta WHERE key = ?${d.forUpdate}`, [AUTO_PRUNE_META_KEY]);
      if (last !== undefined && last !== "" && at - Number(last) < interval) return false;
      yield* run("UPDATE meta SET value = ? WHERE key = ?", [String(at), AUTO_PRUNE_META_KEY]);
      return true;
    });
    if (!due) return { ran: false, deleted: 0 };
    return { ran: true, deleted: await this.#prune(prune.cutoffDays, prune.sources, at, prune.vacuum) };
  }

  // --- execution sessions -----------------------------------------------------

  async writeExecutions(change: ExecutionChange): Promise<ExecutionChangeResult | null> {
    const checked = checkExecutionChange(change);
    const d = this.#d;
    return d.write("writing execution sessions", function* () {
      yield* d.lockExecutions(executions.executionLockIds(checked));
      return yield* executions.writeExecutions(checked, d.greatest);
    });
  }

  async getExecution(id: string): Promise<ExecutionRecord | null> {
    checkId(id, "id");
    return this.#d.read("reading an execution session", () => executions.getExecution(id));
  }

  async findExecutions(options: FindExecutionsOptions): Promise<ExecutionSummary[]> {
    const checked = checkFindExecutions(options);
    return this.#d.read("finding execution sessions", () => executions.findExecutions(checked));
  }

  async listExecutions(options: ListExecutionsOptions = {}): Promise<ExecutionPage> {
    const checked = checkListExecutions(options);
    return this.#d.read("listing execution sessions", () => executions.listExecutions(checked));
  }

  async listExecutionUnits(options: ListExecutionUnitsOptions = {}): Promise<ExecutionSummary[]> {
    const checked = checkListExecutionUnits(options);
    return this.#d.read("listing execution units", () => executions.listExecutionUnits(checked));
  }

  // --- stats ------------------------------------------------------------------

  async getStats(options: { searchIndexBytes?: boolean } = {}): Promise<StoreStats> {
    this.#assertOpen();
    return this.#d.stats(options);
  }

  async getInsights(options: InsightsOptions = {}): Promise<Insights> {
    const checked = checkInsightsOptions(options, now());
    this.#assertOpen();
    return this.#d.insights(checked);
  }

  // --- gateway routing state --------------------------------------------------

  async getRoute(key: string): Promise<Route | null> {
    checkId(key, "key");
    return this.#d.read("reading a routing entry", () => this.#d.getRoute(key));
  }

  async findRouteBySession(sessionId: string): Promise<Route | null> {
    checkId(sessionId, "sessionId");
    return this.#d.read("finding a routing entry", () => this.#d.routeBySession(sessionId));
  }

  async listRoutes(options: ListRoutesOptions = {}): Promise<Page<Route>> {
    const checked = checkListRoutes(options);
    return this.#d.read("listing routing entries", () => this.#d.listRoutes(checked));
  }

  /**
   * One transaction: the fence (if any) is checked first; then the entry is claimed at the
   * expected version (a concurrent writer of the key in any process waits, then sees the new
   * version); the session changes follow under it.
   */
  async writeRoute(write: RouteWrite): Promise<Route | null> {
    const at = now();
    const checked = checkRouteWrite(write, at);
    const d = this.#d;
    const prepared = checked.createSession === null ? null : prepareNewSession(checked.createSession, at);
    const appended = checked.appendMessages === null ? null : checked.appendMessages.map((m) => d.storeMessage(m));
    // With messages to append, the write joins the session's lane, so this instance's appends land in call order.
    const lane = appended === null ? undefined : checked.route.sessionId;
    return d.write(
      `writing the routing entry ${checked.key}`,
      function* (this: SessionStore<M>): Steps<Route | null> {
        yield* checkFence(checked.fence, d);
        const claim = yield* d.claimRoute(checked.key, checked.expectedVersion, checked.route);
        if (claim === null) return null;
        if (checked.endSession !== null) {
          const { id, reason, endedAt } = checked.endSession;
          yield* this.#endSessionRow(id, reason, endedAt);
        }
        if (checked.createSession !== null) yield* this.#insertSession(checked.createSession, prepared!);
        if (checked.reopenSession !== null) yield* this.#reopenSessionRow(checked.reopenSession);
        // The routed-to session must exist; its row lock keeps a concurrent delete out until commit.
        yield* this.#requireRow(checked.route.sessionId, true);
        if (appended !== null) yield* d.appendMessages(checked.route.sessionId, appended);
        if (checked.recordUsage !== null) yield* this.#applyUsage(checked.route.sessionId, checked.recordUsage);
        return yield* d.storeRoute(claim, checked.key, checked.route, checked.expectedVersion);
      }.bind(this),
      lane,
    );
  }

  async deleteRoute(key: string, options: { expectedVersion?: number } = {}): Promise<boolean> {
    checkId(key, "key");
    const expected = options.expectedVersion;
    return this.#d.write(`deleting the routing entry ${key}`, function* () {
      const deleted =
        expected === undefined
          ? yield* run("DELETE FROM routes WHERE key = ?", [key])
          : yield* run("DELETE FROM routes WHERE key = ? AND version = ?", [key, expected]);
      return deleted > 0;
    });
  }

  async listSessionsByKey(key: string, options: { limit?: number } = {}): Promise<SessionSummary[]> {
    checkId(key, "key");
    const limit = checkLimit(options.limit, 20);
    const d = this.#d;
    return d.read("listing the sessions of a key", function* () {
      const rows = yield* all<SessionRow>("SELECT * FROM sessions WHERE session_key = ? ORDER BY started_at DESC, id DESC LIMIT ?", [
        d.encodeText(key),
        limit,
      ]);
      return rows.map((row) => toSummary(row, false, d.decodeText));
    });
  }

  async findLiveSessionByKey(key: string): Promise<Session | null> {
    checkId(key, "key");
    const d = this.#d;
    return d.read("finding the live session of a key", function* (this: SessionStore<M>) {
      const row = yield* one<SessionRow>(
        "SELECT * FROM sessions WHERE session_key = ? AND ended_at IS NULL ORDER BY started_at DESC, id DESC LIMIT 1",
        [d.encodeText(key)],
      );
      return row === undefined ? null : this.#session(row);
    }.bind(this));
  }

  async recordAlias(namespace: string, a: string, b: string): Promise<string> {
    checkId(namespace, "namespace");
    checkId(a, "a");
    checkId(b, "b");
    const d = this.#d;
    return d.write("recording an identity alias", function* () {
      yield* d.lockAliasNamespace(namespace);
      return yield* aliases.recordAlias(namespace, a, b);
    });
  }

  async resolveAlias(namespace: string, id: string): Promise<string> {
    checkId(namespace, "namespace");
    checkId(id, "id");
    return this.#d.read("resolving an identity alias", () => aliases.resolveAlias(namespace, id));
  }

  async listAliases(namespace: string, id: string): Promise<string[]> {
    checkId(namespace, "namespace");
    checkId(id, "id");
    return this.#d.read("listing identity aliases", () => aliases.listAliases(namespace, id, this.#d.bytewiseOrder));
  }

  async enqueue(key: string, event: NewQueuedEvent, options: { maxDepth?: number } = {}): Promise<EnqueueResult> {
    checkPathSafe(key, "key");
    const checked = checkQueuedEvent(event, options, now());
    // The queue lane keeps this instance's enqueues of a key in call order (FIFO as called).
    return this.#queueWrite(`queueing an event for ${key}`, key, () => queue.enqueue(key, checked.event, checked.maxDepth));
  }

  async listQueue(key: string): Promise<QueuedItem[]> {
    checkId(key, "key");
    return this.#d.read("reading a queue", () => queue.queueItems(key));
  }

  async claimQueued(key: string, options: { at?: number } = {}): Promise<QueuedItem | null> {
    checkId(key, "key");
    const at = checkTime(options.at, "at", now());
    return this.#queueWrite(`claiming the next queued event of ${key}`, key, () => queue.claimQueued(key, at));
  }

  async completeQueued(key: string, itemId: number): Promise<boolean> {
    checkId(key, "key");
    checkItemId(itemId);
    return this.#queueWrite("completing a queued event", key, () => queue.completeQueued(key, itemId));
  }

  async clearQueue(key: string): Promise<number> {
    checkId(key, "key");
    return this.#queueWrite(`clearing the queue of ${key}`, key, () => queue.clearQueue(key));
  }

  /** A write to a key's queue: in the key's lane, under its writer lock. */
  #queueWrite<T>(doing: string, key: string, change: () => Steps<T>): Promise<T> {
    const d = this.#d;
    return d.write(
      doing,
      function* () {
        yield* d.lockQueue(key);
        return yield* change();
      },
      queueLane(key),
    );
  }

  async listQueuedKeys(): Promise<string[]> {
    return this.#d.read("listing queued keys", () => column<string>("SELECT DISTINCT key FROM inbound_queue ORDER BY key"));
  }

  async acquireLease(key: string, holder: string, options: LeaseOptions): Promise<Lease | null> {
    const request = checkLeaseRequest(key, holder, options, now());
    return this.#d.write(`acquiring the lease on ${request.key}`, () => leases.acquireLease(request, this.#d));
  }

  async renewLease(key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null> {
    const request = checkLeaseRequest(key, holder, options, now());
    checkLeaseToken(token);
    return this.#d.write(`renewing the lease on ${request.key}`, () => leases.renewLease(request, token));
  }

  async releaseLease(key: string, holder: string, token: number): Promise<boolean> {
    checkPathSafe(key, "key");
    checkId(holder, "holder");
    checkLeaseToken(token);
    return this.#d.write(`releasing the lease on ${key}`, () => leases.releaseLease(key, holder, token));
  }

  async getLease(key: string): Promise<Lease | null> {
    checkPathSafe(key, "key");
    return this.#d.read("reading a lease", () => leases.getLease(key));
  }

  // --- cross-platform handoffs --------------------------------------------------

  async createHandoff(input: NewHandoff): Promise<Handoff> {
    const checked = checkNewHandoff(input, now());
    return this.#d.write(`recording a handoff of ${checked.sessionId}`, () => this.#d.createHandoff(checked));
  }

  async getHandoff(id: string): Promise<Handoff | null> {
    checkId(id, "id");
    return this.#d.read("reading a handoff", () => this.#d.getHandoff(id));
  }

  async claimHandoff(options: ClaimHandoffOptions): Promise<Handoff | null> {
    const checked = checkClaimHandoff(options, now());
    return this.#d.write("claiming a handoff", () => this.#d.claimHandoff(checked));
  }

  async finishHandoff(id: string, result: HandoffResult): Promise<Handoff> {
    checkId(id, "id");
    const checked = checkHandoffResult(result, now());
    return this.#d.write(`finishing handoff ${id}`, () => this.#d.finishHandoff(id, checked));
  }

  // --- meta -------------------------------------------------------------------

  async getMeta(key: string): Promise<string | null> {
    checkId(key, "key");
    const d = this.#d;
    return d.read("reading meta", function* () {
      const stored = yield* value<string>("SELECT value FROM meta WHERE key = ?", [key]);
      return stored === undefined ? null : d.decodeText(stored);
    });
  }

  async setMeta(key: string, value: string): Promise<void> {
    checkId(key, "key");
    if (optionalText(value, "value") === null) throw new InvalidInputError("value must be a string.", { field: "value" });
    const stored = this.#d.encodeText(value);
    await this.#d.write("writing meta", () =>
      run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, stored]),
    );
  }

  async deleteMeta(key: string): Promise<boolean> {
    checkId(key, "key");
    return this.#d.write("deleting meta", function* () {
      return (yield* run("DELETE FROM meta WHERE key = ?", [key])) > 0;
    });
  }

  async close(): Promise<void> {
    await this.#d.close();
  }
}

/** Deletes sessions (messages cascade, children are detached) and refreshes what their removal changes. */
function* deleteRows(rows: SessionRow[]): Steps<void> {
  const gone = new Set(rows.map((r) => r.id));
  const touched = new Set<string>();
  for (const row of rows) {
    for (const child of yield* childIds(row.id)) if (!gone.has(child)) touched.add(child);
    if (row.parent_session_id !== null && !gone.has(row.parent_session_id)) touched.add(row.parent_session_id);
  }
  const ids = [...gone];
  for (let i = 0; i < ids.length; i += DELETE_CHUNK) {
    const chunk = ids.slice(i, i + DELETE_CHUNK);
    yield* run(`DELETE FROM sessions WHERE id IN (${placeholders(chunk.length)})`, chunk);
  }
  for (const id of touched) yield* refreshChain(id);
}
