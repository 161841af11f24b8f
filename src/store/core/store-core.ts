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
  ClaimInboundOptions,
  ContinuationWrite,
  ConversationMessage,
  ConversationOptions,
  EnqueueResult,
  ExecutionChange,
  ExecutionChangeResult,
  ExecutionRecord,
  ExecutionSummary,
  ExportOptions,
  FencedWriteOptions,
  FindExecutionsOptions,
  Handoff,
  HandoffResult,
  ImportReport,
  InboundClaim,
  Insights,
  InsightsOptions,
  ListMemoriesOptions,
  ListPairingOptions,
  Lease,
  LeaseOptions,
  ListExecutionUnitsOptions,
  ListExecutionsOptions,
  ListRoutesOptions,
  ListSessionsOptions,
  MemoryKind,
  MemoryOwner,
  MemoryRecord,
  MemoryWrite,
  Message,
  MessageWindowOptions,
  NewHandoff,
  NewMessage,
  NewQueuedEvent,
  NewSession,
  Page,
  PairingApproveOptions,
  PairingApproveOutcome,
  PairingCodeOutcome,
  PairingCodeRequestOptions,
  PairingList,
  PruneInboundClaimsOptions,
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
import { checkExecutionChange, checkFindExecutions, checkListExecutionUnits, checkListExecutions, checkUserIdFilter } from "../execution-input.js";
import { checkClaimHandoff, checkHandoffResult, checkNewHandoff } from "../handoff-input.js";
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
} from "../input-validation.js";
import { checkInsightsOptions } from "../insights.js";
import {
  checkItemId,
  checkLeaseRequest,
  checkLeaseToken,
  checkListRoutes,
  checkPathSafe,
  checkQueuedEvent,
  checkLastMessageId,
  checkRouteWrite,
  fenceOf,
} from "../routing-input.js";
import { runImport } from "../session-import.js";
import { toSession, type SessionRow } from "../session-rows.js";
import { formatCollisionTitle, formatLineageTitle, parseCollisionTitle, parseLineageTitle, sanitizeTitle } from "../titles.js";
import { checkUsageMode, planUsageUpdate } from "../usage-update.js";
import { ancestorRows, compressionTip, descendantRows, sessionRow } from "./lineage-steps.js";
import * as aliases from "./alias-steps.js";
import * as leases from "./lease-steps.js";
import { checkFence } from "./lease-steps.js";
import * as executions from "./execution-steps.js";
import { listSessionsPage } from "./listing-steps.js";
import { deleteRows, pruneBatch, type PruneScope } from "./deletion-steps.js";
import { applyUsage, endSessionRow, insertNewSession, reopenSessionRow, requireRow, requireSession } from "./session-steps.js";
import { messageWindowSql, restoreRewound, rewindLastMessages, rewindTurns } from "./transcript-steps.js";
import { exportLine, exportMessagesSql, exportRecord, importRecord } from "./transfer-steps.js";
import * as queue from "./queue-steps.js";
import * as claims from "./inbound-claims.js";
import * as pairing from "./pairing-steps.js";
import * as memory from "./memory-steps.js";
import { checkListMemories, checkMemoryKind, checkMemoryOwner, checkMemoryWrite } from "../memory-input.js";
import { checkListPairing, checkPairingApproval, checkPairingCodeRequest } from "../pairing-input.js";
import { all, column, one, placeholders, run, value, type Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { claimTitle } from "./title-steps.js";

const DAY_SECONDS = 86_400;
const AUTO_PRUNE_META_KEY = "auto_prune.last_run_at";

const now = (): number => Date.now() / 1000;

/** How many collision forms (`t (2)` … `t (N)`) {@link StoreCore.similarTitles} looks for. */
const SIMILAR_COLLISION_FORMS = 20;
/** {@link StoreCore.freeTitle} tries collision forms in batches of this many, up to `(FREE_TITLE_LIMIT - 1)`. */
const FREE_TITLE_BATCH = 50;
const FREE_TITLE_LIMIT = 10_001;

/** A title as looked up: sanitised, or `null` when no stored title can equal it (empty, too long, not text). */
function lookupTitle(title: string): string | null {
  try {
    return sanitizeTitle(title);
  } catch {
    return null; // longer than any stored title can be
  }
}

/** The write lane of a key's queue (apart from session lanes: a session id never holds a NUL). */
const queueLane = (key: string): string => `\u0000queue:${key}`;

/**
 * A {@link SessionDB} over a {@link StoreDialect}. Backends subclass it only to add their
 * `open` (see `SqliteSessionDB`, `PostgresSessionDB`).
 */
export class StoreCore implements SessionDB {
  readonly capabilities: StoreCapabilities;
  readonly location: string;
  readonly #d: StoreDialect<unknown>;

  /** @internal Backends construct it with their dialect (see `SqliteSessionDB.open`). */
  protected constructor(dialect: StoreDialect<unknown>) {
    this.#d = dialect;
    this.capabilities = dialect.capabilities;
    this.location = dialect.location;
  }

  // --- row helpers (inside steps) ---------------------------------------------

  #assertOpen(): void {
    if (this.#d.closed) throw new StoreClosedError();
  }

  // --- sessions ---------------------------------------------------------------

  async createSession(input: NewSession): Promise<Session> {
    const d = this.#d;
    checkNewSession(input);
    const prepared = prepareNewSession(input, now());
    return d.write(`creating session ${prepared.id}`, () => insertNewSession(d, input, prepared));
  }

  async getSession(id: string): Promise<Session | null> {
    const d = this.#d;
    checkId(id, "id");
    return d.read("reading a session", function* () {
      const row = yield* sessionRow(id);
      return row === undefined ? null : toSession(row, d.decodeText);
    });
  }

  async endSession(id: string, reason: string, options: { endedAt?: number } = {}): Promise<boolean> {
    const d = this.#d;
    checkId(id, "id");
    checkId(reason, "reason");
    const endedAt = checkTime(options.endedAt, "endedAt", now());
    return d.write(`ending session ${id}`, () => endSessionRow(d, id, reason, endedAt));
  }

  async reopenSession(id: string): Promise<boolean> {
    const d = this.#d;
    checkId(id, "id");
    return d.write(`reopening session ${id}`, () => reopenSessionRow(d, id));
  }

  async resolveSessionId(idOrPrefix: string): Promise<string | null> {
    const d = this.#d;
    this.#assertOpen();
    if (typeof idOrPrefix !== "string" || idOrPrefix === "" || idOrPrefix.includes("\u0000")) return null;
    return d.read("resolving a session id", function* () {
      if ((yield* sessionRow(idOrPrefix)) !== undefined) return idOrPrefix;
      // Range scan on the primary key: ids in [prefix, prefix + U+FFFF).
      const matches = yield* column<string>("SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 2", [idOrPrefix, `${idOrPrefix}\uffff`]);
      return matches.length === 1 ? matches[0]! : null;
    });
  }

  async updateSession(id: string, update: SessionUpdate): Promise<Session> {
    const d = this.#d;
    checkId(id, "id");
    checkSessionUpdate(update);
    const sets: string[] = [];
    const params: unknown[] = [];
    const encode = d.encodeText;
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
    return d.write(`updating session ${id}`, function* () {
      yield* requireSession(d, id, true);
      if (sets.length > 0) yield* run(`UPDATE sessions SET ${sets.join(", ")} WHERE id = ?`, [...params, id]);
      return toSession(yield* requireRow(d, id), d.decodeText);
    });
  }

  async recordUsage(id: string, usage: UsageUpdate, options: { mode?: "delta" | "absolute" } & FencedWriteOptions = {}): Promise<SessionUsage> {
    const d = this.#d;
    checkId(id, "id");
    const fence = fenceOf(options);
    const plan = planUsageUpdate(usage, checkUsageMode(options.mode));
    return d.write(`recording usage of session ${id}`, function* () {
      yield* checkFence(fence, d);
      return yield* applyUsage(d, id, plan);
    });
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
    const d = this.#d;
    checkId(sessionId, "sessionId");
    const fence = fenceOf(options);
    const at = now();
    const stored = messages.map((m, i) => d.storeMessage(normalizeMessage(m, messages.length === 1 && field === "message" ? field : `${field}[${i}]`, at)));
    return d.append(`appending to session ${sessionId}`, sessionId, stored, fence);
  }

  async getMessages(sessionId: string, options: MessageWindowOptions = {}): Promise<Message[]> {
    const d = this.#d;
    checkId(sessionId, "sessionId");
    const sql = messageWindowSql(d, checkMessageWindow(options), options.includeRewound === true);
    return d.read("reading messages", function* () {
      yield* requireSession(d, sessionId);
      return (yield* all<unknown>(sql, [sessionId])).map((row) => d.toMessage(row));
    });
  }

  async getConversation(sessionId: string, options: ConversationOptions = {}): Promise<ConversationMessage[]> {
    return conversationOf(this, sessionId, options);
  }

  async replaceMessages(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
    const d = this.#d;
    checkId(sessionId, "sessionId");
    if (!Array.isArray(messages)) throw new InvalidInputError("replaceMessages needs an array of messages.", { field: "messages" });
    const fence = fenceOf(options);
    const at = now();
    const stored = messages.map((m, i) => d.storeMessage(normalizeMessage(m, `messages[${i}]`, at)));
    return d.write(`replacing the transcript of ${sessionId}`, function* () {
      yield* checkFence(fence, d);
      yield* requireSession(d, sessionId, true);
      yield* run("DELETE FROM messages WHERE session_id = ?", [sessionId]);
      const ids = yield* d.insertMessages(sessionId, stored);
      yield* d.recomputeSummary(sessionId);
      return ids;
    });
  }

  async rewind(sessionId: string, turns = 1, options?: FencedWriteOptions): Promise<RewindResult> {
    const d = this.#d;
    checkId(sessionId, "sessionId");
    if (typeof turns !== "number" || Number.isNaN(turns)) {
      throw new InvalidInputError("turns must be a number.", { field: "turns" });
    }
    const fence = fenceOf(options);
    const n = Math.max(1, Math.min(Math.floor(turns), 1_000_000));
    const at = now();
    return d.write(`rewinding session ${sessionId}`, function* () {
      yield* checkFence(fence, d);
      yield* requireSession(d, sessionId, true);
      return yield* rewindTurns(d, sessionId, n, at);
    });
  }

  async rewindMessages(sessionId: string, count = 1, options?: FencedWriteOptions): Promise<Message[]> {
    const d = this.#d;
    checkId(sessionId, "sessionId");
    if (typeof count !== "number" || Number.isNaN(count)) {
      throw new InvalidInputError("count must be a number.", { field: "count" });
    }
    const fence = fenceOf(options);
    const n = Math.max(1, Math.min(Math.floor(count), 1_000_000));
    const at = now();
    return d.write(`rewinding the last messages of ${sessionId}`, function* () {
      yield* checkFence(fence, d);
      yield* requireSession(d, sessionId, true);
      return yield* rewindLastMessages(d, sessionId, n, at);
    });
  }

  async restoreRewound(sessionId: string, options: { all?: boolean } = {}): Promise<number> {
    const d = this.#d;
    checkId(sessionId, "sessionId");
    return d.write(`restoring rewound messages of ${sessionId}`, function* () {
      yield* requireSession(d, sessionId, true);
      return yield* restoreRewound(d, sessionId, options.all === true);
    });
  }

  async clearMessages(sessionId: string): Promise<number> {
    const d = this.#d;
    checkId(sessionId, "sessionId");
    return d.write(`clearing session ${sessionId}`, function* () {
      yield* requireSession(d, sessionId, true);
      const deleted = yield* run("DELETE FROM messages WHERE session_id = ?", [sessionId]);
      yield* d.recomputeSummary(sessionId);
      return deleted;
    });
  }

  // --- titles -----------------------------------------------------------------

  async setTitle(id: string, title: string | null): Promise<string | null> {
    const d = this.#d;
    checkId(id, "id");
    const clean = sanitizeTitle(title);
    return d.write(`setting the title of ${id}`, function* () {
      const row = yield* requireRow(d, id, true);
      if (clean !== null) yield* claimTitle(clean, id, row.parent_session_id);
      const lineage = clean === null ? null : parseLineageTitle(clean);
      yield* run("UPDATE sessions SET title = ?, title_base = ?, title_n = ? WHERE id = ?", [clean, lineage?.base ?? null, lineage?.n ?? null, id]);
      return clean;
    });
  }

  async getTitle(id: string): Promise<string | null> {
    const d = this.#d;
    checkId(id, "id");
    return d.read("reading a title", function* () {
      return (yield* requireRow(d, id)).title;
    });
  }

  async resolveByTitle(title: string): Promise<string | null> {
    const d = this.#d;
    this.#assertOpen();
    const wanted = lookupTitle(title);
    if (wanted === null) return null;
    return d.read("resolving a title", function* () {
      return (yield* value<string>("SELECT id FROM sessions WHERE title = ?", [wanted])) ?? null;
    });
  }

  async similarTitles(title: string, limit = 20): Promise<Array<{ id: string; title: string }>> {
    const d = this.#d;
    this.#assertOpen();
    const wanted = lookupTitle(title);
    if (wanted === null) return [];
    const cap = Math.min(Math.max(Math.trunc(Number(limit)) || 1, 1), 100);
    const lineageBase = parseLineageTitle(wanted).base;
    const collisionBase = parseCollisionTitle(lineageBase).base;
    const forms = new Set<string>([lineageBase, collisionBase]);
    for (let n = 2; n <= SIMILAR_COLLISION_FORMS; n++) forms.add(formatCollisionTitle(collisionBase, n));
    forms.delete(wanted);
    const list = [...forms];
    return d.read("finding similar titles", function* () {
      const rows = yield* all<{ id: string; title: string }>(
        `SELECT id, title FROM sessions WHERE (title_base IN (?, ?) OR title IN (${placeholders(list.length)})) AND title <> ?
         ORDER BY started_at DESC, id DESC LIMIT ?`,
        [lineageBase, collisionBase, ...list, wanted, cap],
      );
      return rows;
    });
  }

  async freeTitle(title: string): Promise<string> {
    const d = this.#d;
    const clean = sanitizeTitle(title);
    if (clean === null) throw new InvalidInputError("The title is empty after sanitising.", { field: "title" });
    const { base } = parseCollisionTitle(clean);
    return d.read("finding a free title", function* () {
      if ((yield* value<string>("SELECT id FROM sessions WHERE title = ?", [clean])) === undefined) return clean;
      for (let from = 2; from < FREE_TITLE_LIMIT; from += FREE_TITLE_BATCH) {
        const candidates: string[] = [];
        for (let n = from; n < from + FREE_TITLE_BATCH; n++) candidates.push(formatCollisionTitle(base, n));
        const held = new Set(yield* column<string>(`SELECT title FROM sessions WHERE title IN (${placeholders(candidates.length)})`, candidates));
        const free = candidates.find((c) => !held.has(c));
        if (free !== undefined) return free;
      }
      throw new ConflictError(`Every numbered form of the title "${base}" up to (${FREE_TITLE_LIMIT - 1}) is taken. Choose another title.`);
    });
  }

  async nextTitleInLineage(title: string): Promise<string> {
    const d = this.#d;
    const clean = sanitizeTitle(title);
    if (clean === null) throw new InvalidInputError("The title is empty after sanitising.", { field: "title" });
    const { base } = parseLineageTitle(clean);
    return d.read("finding the next title", function* () {
      const max = (yield* value<number | null>("SELECT max(title_n) FROM sessions WHERE title_base = ?", [base])) ?? null;
      const next = max === null ? base : formatLineageTitle(base, Math.max(max, 1) + 1);
      return sanitizeTitle(next) ?? next; // throws when the numbered title would exceed the limit
    });
  }

  // --- lineage ----------------------------------------------------------------

  async getAncestors(id: string): Promise<Session[]> {
    const d = this.#d;
    checkId(id, "id");
    return d.read("reading ancestors", function* () {
      yield* requireSession(d, id);
      return (yield* ancestorRows(id)).map((row) => toSession(row, d.decodeText));
    });
  }

  async getDescendants(id: string): Promise<Session[]> {
    const d = this.#d;
    checkId(id, "id");
    return d.read("reading descendants", function* () {
      yield* requireSession(d, id);
      return (yield* descendantRows(id)).map((row) => toSession(row, d.decodeText));
    });
  }

  async getCompressionTip(id: string): Promise<string> {
    const d = this.#d;
    checkId(id, "id");
    return d.read("finding the compression tip", function* () {
      yield* requireSession(d, id);
      return yield* compressionTip(id);
    });
  }
  async continueSession(write: ContinuationWrite): Promise<Session | null> {
    const d = this.#d;
    if (write === null || typeof write !== "object") {
      throw new InvalidInputError("continueSession needs { parentId, reason, ifLastMessageId, createSession, messages }.", { field: "write" });
    }
    const parentId = checkId(write.parentId, "parentId");
    const reason = checkId(write.reason, "reason");
    const ifLastMessageId = checkLastMessageId(write.ifLastMessageId, "ifLastMessageId");
    if (ifLastMessageId === undefined) {
      throw new InvalidInputError(
        "continueSession needs ifLastMessageId: the id of the parent's newest visible message when it was read (null when it has none).",
        { field: "ifLastMessageId" },
      );
    }
    if (!Array.isArray(write.messages)) throw new InvalidInputError("continueSession needs an array of messages.", { field: "messages" });
    const at = checkTime(write.at, "at", now());
    const input = checkNewSession({ ...write.createSession, parentSessionId: write.createSession?.parentSessionId ?? parentId });
    if (input.parentSessionId !== parentId) {
      throw new InvalidInputError("createSession.parentSessionId must be parentId (the child continues the session that ends).", {
        field: "createSession.parentSessionId",
      });
    }
    const prepared = prepareNewSession(input, at);
    const stored = write.messages.map((m, i) => d.storeMessage(normalizeMessage(m, `messages[${i}]`, at)));
    const fence = fenceOf(write);
    const guardMissed = new ConflictError("The session got a new message while it was being continued.");
    return d
      .write(
        `continuing session ${parentId}`,
        function* (): Steps<Session> {
          yield* checkFence(fence, d);
          const parent = yield* requireRow(d, parentId, true);
          if (parent.ended_at !== null) {
            throw new ConflictError(`Session "${parentId}" has ended; only a live session can be continued.`, { sessionId: parentId });
          }
          if (!(yield* lastMessageIs(d, parentId, ifLastMessageId))) throw guardMissed;
          yield* endSessionRow(d, parentId, reason, at);
          const child = yield* insertNewSession(d, input, prepared);
          if (stored.length > 0) yield* d.appendMessages(child.id, stored);
          return toSession(yield* requireRow(d, child.id), d.decodeText);
        },
        parentId,
      )
      .catch((error: unknown) => {
        if (error === guardMissed) return null;
        throw error;
      });
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
    const d = this.#d;
    const messagesSql = exportMessagesSql(d, options.includeRewound === true);
    yield* this.#exportEach(options, (row) => exportRecord(d, row, messagesSql));
  }

  async *exportSessionLines(options: ExportOptions = {}): AsyncIterable<Uint8Array> {
    const d = this.#d;
    const includeRewound = options.includeRewound === true;
    const messagesSql = exportMessagesSql(d, includeRewound);
    yield* this.#exportEach(options, (row) => exportLine(d, row, messagesSql, includeRewound));
  }

  /** The sessions an export selects, oldest first, each read fresh and turned into `T` by `each` in a read of its own. */
  async *#exportEach<T>(options: ExportOptions, each: (row: SessionRow) => Steps<T>): AsyncIterable<T> {
    const d = this.#d;
    const sources = checkNameList(options.sources, "sources");
    const userId = checkUserIdFilter(options.userId);

    if (options.sessionId !== undefined) {
      const id = checkId(options.sessionId, "sessionId");
      yield await d.read("exporting a session", function* () {
        const row = yield* requireRow(d, id);
        // Another user's session is not found (its existence is not disclosed).
        if (userId !== null && d.decodeText(row.user_id) !== userId) {
          throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
        }
        return yield* each(row);
      });
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
          return fresh === undefined ? null : yield* each(fresh);
        });
        if (exported !== null) yield exported;
      }
      const last = rows[rows.length - 1]!;
      after = [last.started_at, last.id];
    }
  }

  async importSessions(lines: AsyncIterable<string> | Iterable<string>): Promise<ImportReport> {
    const d = this.#d;
    this.#assertOpen();
    try {
      return await runImport(lines, (record, waiting) => d.write(`importing session ${record.session.id}`, () => importRecord(d, record, waiting)));
    } finally {
      // Even a failed import may have written sessions before it stopped.
      d.afterBulkChange();
    }
  }

  // --- deletion and retention -------------------------------------------------

  async deleteSession(id: string): Promise<boolean> {
    const d = this.#d;
    checkId(id, "id");
    return d.write(`deleting session ${id}`, function* () {
      const row = yield* sessionRow(id, d.forUpdate);
      if (row === undefined) return false;
      yield* deleteRows([row]);
      return true;
    });
  }

  async pruneSessions(options: PruneOptions): Promise<number> {
    const { cutoffDays, sources, vacuum } = checkPruneOptions(options);
    return this.#prune(cutoffDays, sources, checkTime(options.now, "now", now()), vacuum);
  }

  /**
   * Deletes in batches ({@link pruneBatch}), each its own write, so other writers (this
   * instance's through its write queue, other processes through the database lock) run
   * between batches; then reclaims space (`vacuum`: true, bounded steps; "full", the whole file).
   */
  async #prune(olderThanDays: number, sources: string[] | null, at: number, vacuum: boolean | "full"): Promise<number> {
    const d = this.#d;
    const cutoff = at - olderThanDays * DAY_SECONDS;
    let deleted = 0;
    let after: string | null = "";
    while (after !== null) {
      const scope: PruneScope = { cutoff, sources, after };
      const batch = await d.write("pruning sessions", () => pruneBatch(d, scope));
      deleted += batch.deleted;
      after = batch.next;
    }
    if (deleted > 0) {
      await d.mergeIndex();
      d.afterBulkChange();
    }
    // Space comes back to the file system where the backend can do that without locking others out.
    if (vacuum === "full") await d.compact({ full: true });
    else if (deleted > 0 && vacuum) await d.compact({ full: false });
    return deleted;
  }

  async autoPrune(options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }> {
    const d = this.#d;
    const interval = options?.intervalSeconds ?? DAY_SECONDS;
    if (typeof interval !== "number" || !Number.isFinite(interval) || interval < 0) {
      throw new InvalidInputError("intervalSeconds must be a number of seconds, 0 or more.", { field: "intervalSeconds" });
    }
    const at = checkTime(options?.now, "now", now());
    const prune = checkPruneOptions(options);
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
    const d = this.#d;
    const checked = checkExecutionChange(change);
    return d.write("writing execution sessions", function* () {
      yield* d.lockExecutions(executions.executionLockIds(checked));
      return yield* executions.writeExecutions(checked, d.greatest);
    });
  }

  async getExecution(id: string): Promise<ExecutionRecord | null> {
    const d = this.#d;
    checkId(id, "id");
    return d.read("reading an execution session", () => executions.getExecution(id));
  }

  async findExecutions(options: FindExecutionsOptions): Promise<ExecutionSummary[]> {
    const d = this.#d;
    const checked = checkFindExecutions(options);
    return d.read("finding execution sessions", () => executions.findExecutions(checked));
  }

  async listExecutions(options: ListExecutionsOptions = {}): Promise<Page<ExecutionSummary> & { total: number }> {
    const d = this.#d;
    const checked = checkListExecutions(options);
    return d.read("listing execution sessions", () => executions.listExecutions(checked));
  }

  async listExecutionUnits(options: ListExecutionUnitsOptions = {}): Promise<ExecutionSummary[]> {
    const d = this.#d;
    const checked = checkListExecutionUnits(options);
    return d.read("listing execution units", () => executions.listExecutionUnits(checked));
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
    const d = this.#d;
    checkId(key, "key");
    return d.read("reading a routing entry", () => d.getRoute(key));
  }

  async findRouteBySession(sessionId: string): Promise<Route | null> {
    const d = this.#d;
    checkId(sessionId, "sessionId");
    return d.read("finding a routing entry", () => d.routeBySession(sessionId));
  }

  async listRoutes(options: ListRoutesOptions = {}): Promise<Page<Route>> {
    const d = this.#d;
    const checked = checkListRoutes(options);
    return d.read("listing routing entries", () => d.listRoutes(checked));
  }

  /**
   * One transaction: the fence (if any) is checked first; then the entry is claimed at the
   * expected version (a concurrent writer of the key in any process waits, then sees the new
   * version); the session changes follow under it.
   */
  async writeRoute(write: RouteWrite): Promise<Route | null> {
    const d = this.#d;
    const at = now();
    const checked = checkRouteWrite(write, at);
    const taking = claims.checkClaims(write.claims);
    const prepared = checked.createSession === null ? null : prepareNewSession(checked.createSession, at);
    const appended = checked.appendMessages === null ? null : checked.appendMessages.map((m) => d.storeMessage(m));
    // With messages to append, the write joins the session's lane, so this instance's appends land in call order.
    const lane = appended === null ? undefined : checked.route.sessionId;
    const guardMissed = new ConflictError("The session got a new message while it was being continued.");
    return d
      .write(
        `writing the routing entry ${checked.key}`,
        function* (): Steps<Route | null> {
          yield* checkFence(checked.fence, d);
          const claim = yield* d.claimRoute(checked.key, checked.expectedVersion, checked.route);
          if (claim === null) return null;
          yield* claims.takeClaims(taking, at);
          if (checked.endSession !== null) {
            const { id, reason, endedAt, ifLastMessageId } = checked.endSession;
            // A message appended since the caller read the session: nothing is written (rolled back).
            if (ifLastMessageId !== undefined && !(yield* lastMessageIs(d, id, ifLastMessageId))) throw guardMissed;
            yield* endSessionRow(d, id, reason, endedAt);
          }
          if (checked.createSession !== null) yield* insertNewSession(d, checked.createSession, prepared!);
          if (checked.reopenSession !== null) yield* reopenSessionRow(d, checked.reopenSession);
          // The routed-to session must exist; its row lock keeps a concurrent delete out until commit.
          yield* requireSession(d, checked.route.sessionId, true);
          if (appended !== null) yield* d.appendMessages(checked.route.sessionId, appended);
          if (checked.recordUsage !== null) yield* applyUsage(d, checked.route.sessionId, checked.recordUsage);
          return yield* d.storeRoute(claim, checked.key, checked.route, checked.expectedVersion);
        },
        lane,
      )
      .catch((error: unknown) => {
        if (error === guardMissed) return null;
        throw error;
      });
  }

  async deleteRoute(key: string, options: { expectedVersion?: number } = {}): Promise<boolean> {
    const d = this.#d;
    checkId(key, "key");
    const expected = options.expectedVersion;
    return d.write(`deleting the routing entry ${key}`, function* () {
      const deleted =
        expected === undefined
          ? yield* run("DELETE FROM routes WHERE key = ?", [key])
          : yield* run("DELETE FROM routes WHERE key = ? AND version = ?", [key, expected]);
      return deleted > 0;
    });
  }

  async findLiveSessionByKey(key: string): Promise<Session | null> {
    const d = this.#d;
    checkId(key, "key");
    return d.read("finding the live session of a key", function* () {
      const row = yield* one<SessionRow>("SELECT * FROM sessions WHERE session_key = ? AND ended_at IS NULL ORDER BY started_at DESC, id DESC LIMIT 1", [
        d.encodeText(key),
      ]);
      return row === undefined ? null : toSession(row, d.decodeText);
    });
  }

  async recordAlias(namespace: string, a: string, b: string): Promise<string> {
    const d = this.#d;
    checkId(namespace, "namespace");
    checkId(a, "a");
    checkId(b, "b");
    return d.write("recording an identity alias", function* () {
      yield* d.lockAliasNamespace(namespace);
      return yield* aliases.recordAlias(namespace, a, b);
    });
  }

  async resolveAlias(namespace: string, id: string): Promise<string> {
    const d = this.#d;
    checkId(namespace, "namespace");
    checkId(id, "id");
    return d.read("resolving an identity alias", () => aliases.resolveAlias(namespace, id));
  }

  async listAliases(namespace: string, id: string): Promise<string[]> {
    const d = this.#d;
    checkId(namespace, "namespace");
    checkId(id, "id");
    return d.read("listing identity aliases", () => aliases.listAliases(namespace, id, d.bytewiseOrder));
  }

  async enqueue(key: string, event: NewQueuedEvent, options: { maxDepth?: number } = {}): Promise<EnqueueResult> {
    checkPathSafe(key, "key");
    const checked = checkQueuedEvent(event, options, now());
    const taking = claims.checkClaims(event.claims);
    // The queue lane keeps this instance's enqueues of a key in call order (FIFO as called).
    return this.#queueWrite(`queueing an event for ${key}`, key, () =>
      claims.enqueueClaimed(taking, checked.event.at, key, () => queue.enqueue(key, checked.event, checked.maxDepth)),
    ).catch(claims.notQueuedResult);
  }

  async listQueue(key: string): Promise<QueuedItem[]> {
    const d = this.#d;
    checkId(key, "key");
    return d.read("reading a queue", () => queue.queueItems(key));
  }

  async claimQueued(key: string, options: { at?: number } = {}): Promise<QueuedItem | null> {
    checkId(key, "key");
    const at = checkTime(options.at, "at", now());
    // Most claims find the queue empty (a gateway looks after every turn): a read answers
    // those without taking a writer lock. A later enqueue is claimed by the next look.
    const waiting = await this.#d.read(`looking at the queue of ${key}`, () => queue.hasQueued(key), queueLane(key));
    if (!waiting) return null;
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
    const d = this.#d;
    return d.read("listing queued keys", () => column<string>("SELECT DISTINCT key FROM inbound_queue ORDER BY key"));
  }

  async acquireLease(key: string, holder: string, options: LeaseOptions): Promise<Lease | null> {
    const d = this.#d;
    const request = checkLeaseRequest(key, holder, options, now());
    return d.writeStatement(`acquiring the lease on ${request.key}`, () => leases.acquireLease(request));
  }

  async renewLease(key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null> {
    const d = this.#d;
    const request = checkLeaseRequest(key, holder, options, now());
    checkLeaseToken(token);
    return d.writeStatement(`renewing the lease on ${request.key}`, () => leases.renewLease(request, token));
  }

  async releaseLease(key: string, holder: string, token: number): Promise<boolean> {
    const d = this.#d;
    checkPathSafe(key, "key");
    checkId(holder, "holder");
    checkLeaseToken(token);
    return d.writeStatement(`releasing the lease on ${key}`, () => leases.releaseLease(key, holder, token));
  }

  async getLease(key: string): Promise<Lease | null> {
    const d = this.#d;
    checkPathSafe(key, "key");
    return d.read("reading a lease", () => leases.getLease(key));
  }

  async claimInbound(claim: InboundClaim, options: ClaimInboundOptions = {}): Promise<boolean> {
    const checked = claims.checkClaim(claim);
    const at = checkTime(options.at, "at", now());
    return this.#d.write("claiming an inbound message", () => claims.takeClaim(checked, at));
  }

  async pruneInboundClaims(options: PruneInboundClaimsOptions): Promise<number> {
    const before = claims.checkPruneBefore(options);
    return this.#d.write("pruning inbound claims", () => claims.pruneClaims(before));
  }

  // --- cross-platform handoffs --------------------------------------------------

  async createHandoff(input: NewHandoff): Promise<Handoff> {
    const d = this.#d;
    const checked = checkNewHandoff(input, now());
    return d.write(`recording a handoff of ${checked.sessionId}`, () => d.createHandoff(checked));
  }

  async getHandoff(id: string): Promise<Handoff | null> {
    const d = this.#d;
    checkId(id, "id");
    return d.read("reading a handoff", () => d.getHandoff(id));
  }

  async claimHandoff(options: ClaimHandoffOptions): Promise<Handoff | null> {
    const d = this.#d;
    const checked = checkClaimHandoff(options, now());
    return d.write("claiming a handoff", () => d.claimHandoff(checked));
  }

  async finishHandoff(id: string, result: HandoffResult): Promise<Handoff> {
    const d = this.#d;
    checkId(id, "id");
    const checked = checkHandoffResult(result, now());
    return d.write(`finishing handoff ${id}`, () => d.finishHandoff(id, checked));
  }

  // --- pairing ----------------------------------------------------------------

  async requestPairingCode(platform: string, userId: string, options?: PairingCodeRequestOptions): Promise<PairingCodeOutcome> {
    const d = this.#d;
    const checked = checkPairingCodeRequest(platform, userId, options);
    return d.write(`requesting a pairing code on ${checked.platform}`, function* () {
      yield* d.lockPairing(checked.platform);
      return yield* pairing.requestCode(checked, (t) => d.encodeText(t));
    });
  }

  async approvePairingCode(platform: string, code: string, options?: PairingApproveOptions): Promise<PairingApproveOutcome> {
    const d = this.#d;
    const checked = checkPairingApproval(platform, code, options);
    return d.write(`approving a pairing code on ${checked.platform}`, function* () {
      yield* d.lockPairing(checked.platform);
      return yield* pairing.approveCode(checked, d.decodeText);
    });
  }

  async isPairingApproved(platform: string, userId: string): Promise<boolean> {
    const d = this.#d;
    checkId(platform, "platform");
    checkId(userId, "userId");
    return d.read("reading a pairing approval", () => pairing.isApproved(platform, userId));
  }

  async listPairing(options?: ListPairingOptions): Promise<PairingList> {
    const d = this.#d;
    const { platform, now } = checkListPairing(options);
    return d.read("listing pairing", () => pairing.listPairing(platform, now, d.decodeText));
  }

  async revokePairing(platform: string, userId: string): Promise<boolean> {
    const d = this.#d;
    checkId(platform, "platform");
    checkId(userId, "userId");
    return d.write(`revoking a pairing approval on ${platform}`, function* () {
      yield* d.lockPairing(platform);
      return yield* pairing.revoke(platform, userId);
    });
  }

  // --- memory -----------------------------------------------------------------

  async getMemory(owner: MemoryOwner, kind: MemoryKind): Promise<MemoryRecord | null> {
    const d = this.#d;
    const who = checkMemoryOwner(owner);
    const k = checkMemoryKind(kind);
    return d.read("reading a memory", () => memory.getMemory(who, k));
  }

  async writeMemory(write: MemoryWrite): Promise<MemoryRecord | null> {
    const d = this.#d;
    const checked = checkMemoryWrite(write);
    return d.writeStatement(`writing the ${checked.kind} memory of ${checked.owner.platform}:${checked.owner.userId}`, () => memory.writeMemory(checked));
  }

  async clearMemory(owner: MemoryOwner, kind?: MemoryKind): Promise<number> {
    const d = this.#d;
    const who = checkMemoryOwner(owner);
    const k = kind === undefined ? null : checkMemoryKind(kind);
    return d.writeStatement(`clearing the memory of ${who.platform}:${who.userId}`, () => memory.clearMemory(who, k));
  }

  async listMemories(options?: ListMemoriesOptions): Promise<Page<MemoryRecord>> {
    const d = this.#d;
    const checked = checkListMemories(options);
    return d.read("listing memories", () => memory.listMemories(checked));
  }

  // --- meta -------------------------------------------------------------------

  async getMeta(key: string): Promise<string | null> {
    const d = this.#d;
    checkId(key, "key");
    return d.read("reading meta", function* () {
      const stored = yield* value<string>("SELECT value FROM meta WHERE key = ?", [key]);
      return stored === undefined ? null : d.decodeText(stored);
    });
  }

  async setMeta(key: string, value: string): Promise<void> {
    const d = this.#d;
    checkId(key, "key");
    if (optionalText(value, "value") === null) throw new InvalidInputError("value must be a string.", { field: "value" });
    const stored = d.encodeText(value);
    await d.write("writing meta", () =>
      run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [key, stored]),
    );
  }

  async deleteMeta(key: string): Promise<boolean> {
    const d = this.#d;
    checkId(key, "key");
    return d.write("deleting meta", function* () {
      return (yield* run("DELETE FROM meta WHERE key = ?", [key])) > 0;
    });
  }

  async close(): Promise<void> {
    await this.#d.close();
  }
}

/** Whether the newest visible message of a session (under its row lock) has this id (`null`: it has none). */
function* lastMessageIs(d: StoreDialect<unknown>, sessionId: string, expected: number | null): Steps<boolean> {
  yield* requireRow(d, sessionId, true);
  const last = yield* value<number | bigint | string | null>("SELECT MAX(id) FROM messages WHERE session_id = ? AND rewound_at IS NULL", [sessionId]);
  const id = last === null || last === undefined ? null : Number(last);
  return id === expected;
}
