/**
 * The store core: every {@link SessionDB} method, written once. A backend hands it a
 * {@link StoreDialect} (its connection, transactions and the few statements that differ)
 * and gets the whole contract: validation, paging, title rules, lineage, export/import
 * streaming, prune orchestration, the routing write and error translation are the same on
 * every database by construction.
 *
 * The class is the one public face: each method hands its dialect to a function in the module
 * of its area (`session-methods.ts`, `title-methods.ts`, `lineage-methods.ts`,
 * `transfer-methods.ts`, `retention-methods.ts`, `gateway-state-methods.ts`,
 * `execution-methods.ts`, `memory-methods.ts`, `meta-methods.ts`), where the validation and the
 * steps are. A new method is a function in its area's module (a new role: a new module) and a
 * one-line method here.
 *
 * @module
 */
import type {
  AliasEntry,
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
  ImportOptions,
  ImportReport,
  InboundClaim,
  Insights,
  InsightsOptions,
  Lease,
  LeaseOptions,
  ListAliasEntriesOptions,
  ListExecutionUnitsOptions,
  ListExecutionsOptions,
  ListMemoriesOptions,
  ListMetaOptions,
  ListPairingOptions,
  ListRoutesOptions,
  ListSessionsOptions,
  MemoryKind,
  MemoryOwner,
  MemoryRecord,
  MemoryWrite,
  MediaCheck,
  MediaInput,
  PutMediaOptions,
  SessionAttachment,
  StoredMedia,
  SweepMediaOptions,
  Message,
  MessageWindowOptions,
  MetaEntry,
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
import { checkInsightsOptions } from "../insights.js";
import { assertOpen } from "./assert-open.js";
import { now } from "./clock.js";
import * as executions from "./execution-methods.js";
import * as gateway from "./gateway-state-methods.js";
import * as lineage from "./lineage-methods.js";
import * as media from "./media-methods.js";
import * as memory from "./memory-methods.js";
import * as meta from "./meta-methods.js";
import * as retention from "./retention-methods.js";
import * as sessions from "./session-methods.js";
import { startReading } from "./started-iterable.js";
import type { StoreDialect } from "./store-dialect.js";
import * as titles from "./title-methods.js";

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

  // --- sessions ---------------------------------------------------------------

  createSession(input: NewSession): Promise<Session> {
    return sessions.createSession(this.#d, input);
  }

  getSession(id: string): Promise<Session | null> {
    return sessions.getSession(this.#d, id);
  }

  endSession(id: string, reason: string, options: { endedAt?: number } = {}): Promise<boolean> {
    return sessions.endSession(this.#d, id, reason, options);
  }

  reopenSession(id: string): Promise<boolean> {
    return sessions.reopenSession(this.#d, id);
  }

  resolveSessionId(idOrPrefix: string): Promise<string | null> {
    return sessions.resolveSessionId(this.#d, idOrPrefix);
  }

  updateSession(id: string, update: SessionUpdate): Promise<Session> {
    return sessions.updateSession(this.#d, id, update);
  }

  recordUsage(id: string, usage: UsageUpdate, options: { mode?: "delta" | "absolute" } & FencedWriteOptions = {}): Promise<SessionUsage> {
    return sessions.recordUsage(this.#d, id, usage, options);
  }

  // --- messages ---------------------------------------------------------------

  appendMessage(sessionId: string, message: NewMessage, options?: FencedWriteOptions): Promise<number> {
    return sessions.appendMessage(this.#d, sessionId, message, options);
  }

  appendTurn(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
    return sessions.appendTurn(this.#d, sessionId, messages, options);
  }

  getMessages(sessionId: string, options: MessageWindowOptions = {}): Promise<Message[]> {
    return sessions.getMessages(this.#d, sessionId, options);
  }

  async getConversation(sessionId: string, options: ConversationOptions = {}): Promise<ConversationMessage[]> {
    return conversationOf(this, sessionId, options);
  }

  replaceMessages(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
    return sessions.replaceMessages(this.#d, sessionId, messages, options);
  }

  rewind(sessionId: string, turns = 1, options?: FencedWriteOptions): Promise<RewindResult> {
    return sessions.rewind(this.#d, sessionId, turns, options);
  }

  rewindMessages(sessionId: string, count = 1, options?: FencedWriteOptions): Promise<Message[]> {
    return sessions.rewindMessages(this.#d, sessionId, count, options);
  }

  restoreRewound(sessionId: string, options: { all?: boolean } = {}): Promise<number> {
    return sessions.restoreRewound(this.#d, sessionId, options);
  }

  clearMessages(sessionId: string): Promise<number> {
    return sessions.clearMessages(this.#d, sessionId);
  }

  // --- titles -----------------------------------------------------------------

  setTitle(id: string, title: string | null): Promise<string | null> {
    return titles.setTitle(this.#d, id, title);
  }

  getTitle(id: string): Promise<string | null> {
    return titles.getTitle(this.#d, id);
  }

  resolveByTitle(title: string): Promise<string | null> {
    return titles.resolveByTitle(this.#d, title);
  }

  similarTitles(title: string, limit = 20): Promise<Array<{ id: string; title: string }>> {
    return titles.similarTitles(this.#d, title, limit);
  }

  freeTitle(title: string): Promise<string> {
    return titles.freeTitle(this.#d, title);
  }

  nextTitleInLineage(title: string): Promise<string> {
    return titles.nextTitleInLineage(this.#d, title);
  }

  // --- lineage ----------------------------------------------------------------

  getAncestors(id: string): Promise<Session[]> {
    return lineage.getAncestors(this.#d, id);
  }

  getDescendants(id: string): Promise<Session[]> {
    return lineage.getDescendants(this.#d, id);
  }

  getCompressionTip(id: string): Promise<string> {
    return lineage.getCompressionTip(this.#d, id);
  }

  continueSession(write: ContinuationWrite): Promise<Session | null> {
    return lineage.continueSession(this.#d, write);
  }

  // --- listing and search -----------------------------------------------------

  listSessions(options: ListSessionsOptions = {}): Promise<Page<SessionSummary>> {
    return sessions.listSessions(this.#d, options);
  }

  searchMessages(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    return sessions.searchMessages(this.#d, query, options);
  }

  // --- export / import --------------------------------------------------------

  // Loaded with import() when first called: the import path loads zod (session-record.ts),
  // which opening, listing and reading sessions (the CLI's `sessions list`) do not need.

  async *exportSessions(options: ExportOptions = {}): AsyncIterable<SessionRecord> {
    const transfer = await import("./transfer-methods.js");
    yield* transfer.exportSessions(this.#d, options);
  }

  async *exportSessionLines(options: ExportOptions = {}): AsyncIterable<Uint8Array> {
    const transfer = await import("./transfer-methods.js");
    yield* transfer.exportSessionLines(this.#d, options);
  }

  async importSessions(lines: AsyncIterable<string> | Iterable<string>, options: ImportOptions = {}): Promise<ImportReport> {
    // Reading starts now, before the pause of import() (see started-iterable.ts).
    const started = startReading(lines);
    try {
      const transfer = await import("./transfer-methods.js");
      return await transfer.importSessions(this.#d, started.lines, options);
    } finally {
      await started.close();
    }
  }

  // --- deletion and retention -------------------------------------------------

  deleteSession(id: string): Promise<boolean> {
    return retention.deleteSession(this.#d, id);
  }

  pruneSessions(options: PruneOptions): Promise<number> {
    return retention.pruneSessions(this.#d, options);
  }

  autoPrune(options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }> {
    return retention.autoPrune(this.#d, options);
  }

  // --- execution sessions -----------------------------------------------------

  writeExecutions(change: ExecutionChange): Promise<ExecutionChangeResult | null> {
    return executions.writeExecutions(this.#d, change);
  }

  getExecution(id: string): Promise<ExecutionRecord | null> {
    return executions.getExecution(this.#d, id);
  }

  findExecutions(options: FindExecutionsOptions): Promise<ExecutionSummary[]> {
    return executions.findExecutions(this.#d, options);
  }

  listExecutions(options: ListExecutionsOptions = {}): Promise<Page<ExecutionSummary> & { total: number }> {
    return executions.listExecutions(this.#d, options);
  }

  listExecutionUnits(options: ListExecutionUnitsOptions = {}): Promise<ExecutionSummary[]> {
    return executions.listExecutionUnits(this.#d, options);
  }

  // --- stats ------------------------------------------------------------------

  async getStats(options: { searchIndexBytes?: boolean } = {}): Promise<StoreStats> {
    assertOpen(this.#d);
    return this.#d.stats(options);
  }

  async getInsights(options: InsightsOptions = {}): Promise<Insights> {
    const checked = checkInsightsOptions(options, now());
    assertOpen(this.#d);
    return this.#d.insights(checked);
  }

  // --- gateway routing state --------------------------------------------------

  getRoute(key: string): Promise<Route | null> {
    return gateway.getRoute(this.#d, key);
  }

  findRouteBySession(sessionId: string): Promise<Route | null> {
    return gateway.findRouteBySession(this.#d, sessionId);
  }

  listRoutes(options: ListRoutesOptions = {}): Promise<Page<Route>> {
    return gateway.listRoutes(this.#d, options);
  }

  /**
   * One transaction: the fence (if any) is checked first; then the entry is claimed at the
   * expected version (a concurrent writer of the key in any process waits, then sees the new
   * version); the session changes follow under it.
   */
  writeRoute(write: RouteWrite): Promise<Route | null> {
    return gateway.writeRoute(this.#d, write);
  }

  deleteRoute(key: string, options: { expectedVersion?: number } = {}): Promise<boolean> {
    return gateway.deleteRoute(this.#d, key, options);
  }

  findLiveSessionByKey(key: string): Promise<Session | null> {
    return gateway.findLiveSessionByKey(this.#d, key);
  }

  recordAlias(namespace: string, a: string, b: string): Promise<string> {
    return gateway.recordAlias(this.#d, namespace, a, b);
  }

  resolveAlias(namespace: string, id: string): Promise<string> {
    return gateway.resolveAlias(this.#d, namespace, id);
  }

  listAliases(namespace: string, id: string): Promise<string[]> {
    return gateway.listAliases(this.#d, namespace, id);
  }

  listAliasEntries(options: ListAliasEntriesOptions = {}): Promise<Page<AliasEntry>> {
    return gateway.listAliasEntries(this.#d, options);
  }

  enqueue(key: string, event: NewQueuedEvent, options: { maxDepth?: number } = {}): Promise<EnqueueResult> {
    return gateway.enqueue(this.#d, key, event, options);
  }

  listQueue(key: string): Promise<QueuedItem[]> {
    return gateway.listQueue(this.#d, key);
  }

  claimQueued(key: string, options: { at?: number } = {}): Promise<QueuedItem | null> {
    return gateway.claimQueued(this.#d, key, options);
  }

  completeQueued(key: string, itemId: number): Promise<boolean> {
    return gateway.completeQueued(this.#d, key, itemId);
  }

  clearQueue(key: string): Promise<number> {
    return gateway.clearQueue(this.#d, key);
  }

  listQueuedKeys(): Promise<string[]> {
    return gateway.listQueuedKeys(this.#d);
  }

  acquireLease(key: string, holder: string, options: LeaseOptions): Promise<Lease | null> {
    return gateway.acquireLease(this.#d, key, holder, options);
  }

  renewLease(key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null> {
    return gateway.renewLease(this.#d, key, holder, token, options);
  }

  releaseLease(key: string, holder: string, token: number): Promise<boolean> {
    return gateway.releaseLease(this.#d, key, holder, token);
  }

  getLease(key: string): Promise<Lease | null> {
    return gateway.getLease(this.#d, key);
  }

  claimInbound(claim: InboundClaim, options: ClaimInboundOptions = {}): Promise<boolean> {
    return gateway.claimInbound(this.#d, claim, options);
  }

  pruneInboundClaims(options: PruneInboundClaimsOptions): Promise<number> {
    return gateway.pruneInboundClaims(this.#d, options);
  }

  // --- cross-platform handoffs --------------------------------------------------

  createHandoff(input: NewHandoff): Promise<Handoff> {
    return gateway.createHandoff(this.#d, input);
  }

  getHandoff(id: string): Promise<Handoff | null> {
    return gateway.getHandoff(this.#d, id);
  }

  claimHandoff(options: ClaimHandoffOptions): Promise<Handoff | null> {
    return gateway.claimHandoff(this.#d, options);
  }

  finishHandoff(id: string, result: HandoffResult): Promise<Handoff> {
    return gateway.finishHandoff(this.#d, id, result);
  }

  // --- pairing ----------------------------------------------------------------

  requestPairingCode(platform: string, userId: string, options?: PairingCodeRequestOptions): Promise<PairingCodeOutcome> {
    return gateway.requestPairingCode(this.#d, platform, userId, options);
  }

  approvePairingCode(platform: string, code: string, options?: PairingApproveOptions): Promise<PairingApproveOutcome> {
    return gateway.approvePairingCode(this.#d, platform, code, options);
  }

  isPairingApproved(platform: string, userId: string): Promise<boolean> {
    return gateway.isPairingApproved(this.#d, platform, userId);
  }

  listPairing(options?: ListPairingOptions): Promise<PairingList> {
    return gateway.listPairing(this.#d, options);
  }

  revokePairing(platform: string, userId: string): Promise<boolean> {
    return gateway.revokePairing(this.#d, platform, userId);
  }

  // --- memory -----------------------------------------------------------------

  getMemory(owner: MemoryOwner, kind: MemoryKind): Promise<MemoryRecord | null> {
    return memory.getMemory(this.#d, owner, kind);
  }

  writeMemory(write: MemoryWrite): Promise<MemoryRecord | null> {
    return memory.writeMemory(this.#d, write);
  }

  clearMemory(owner: MemoryOwner, kind?: MemoryKind): Promise<number> {
    return memory.clearMemory(this.#d, owner, kind);
  }

  listMemories(options?: ListMemoriesOptions): Promise<Page<MemoryRecord>> {
    return memory.listMemories(this.#d, options);
  }

  // --- media ------------------------------------------------------------------

  putMedia(input: MediaInput, options: PutMediaOptions): Promise<StoredMedia> {
    return media.putMedia(this.#d, input, options);
  }

  getMedia(sha256: string): Promise<StoredMedia | null> {
    return media.getMedia(this.#d, sha256);
  }

  readMedia(sha256: string): Promise<Uint8Array | null> {
    return media.readMedia(this.#d, sha256);
  }

  streamMedia(sha256: string): Promise<AsyncIterable<Uint8Array> | null> {
    return media.streamMedia(this.#d, sha256);
  }

  listAttachments(sessionId: string): Promise<SessionAttachment[]> {
    return media.listAttachments(this.#d, sessionId);
  }

  findAttachment(sessionId: string, sha256: string): Promise<SessionAttachment | null> {
    return media.findAttachment(this.#d, sessionId, sha256);
  }

  sweepMedia(options: SweepMediaOptions = {}): Promise<number> {
    return media.sweepMedia(this.#d, options);
  }

  checkMedia(options: { verify?: boolean } = {}): Promise<MediaCheck> {
    return media.checkMedia(this.#d, options);
  }

  // --- meta -------------------------------------------------------------------

  getMeta(key: string): Promise<string | null> {
    return meta.getMeta(this.#d, key);
  }

  setMeta(key: string, value: string): Promise<void> {
    return meta.setMeta(this.#d, key, value);
  }

  deleteMeta(key: string): Promise<boolean> {
    return meta.deleteMeta(this.#d, key);
  }

  listMeta(options: ListMetaOptions = {}): Promise<Page<MetaEntry>> {
    return meta.listMeta(this.#d, options);
  }

  async close(): Promise<void> {
    await this.#d.close();
  }
}
