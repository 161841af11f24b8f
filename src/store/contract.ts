/**
 * The storage contract every Threadline backend implements (`SessionDB`), the roles it is
 * cut into (`SessionHistory`, `SessionSearch`, `GatewayState` and its parts, `ExecutionStore`,
 * `MetaStore`, `StoreMaintenance`: a caller asks only for the roles it calls), and the
 * records it reads and writes. Nothing here knows about SQLite or PostgreSQL.
 *
 * Conventions: times are Unix epoch **seconds** (float); ids are strings; methods
 * that look something up return `null` when it is missing, methods that act on a
 * named session throw {@link NotFoundError} when it is missing.
 *
 * @module
 */
import type { ClaimedWrite, InboundClaimStore } from "./inbound-claim-contract.js";

export * from "./inbound-claim-contract.js";

/** One part of a structured (multi-part) message content, OpenAI style. */
export interface ContentPart {
  /** `"text"`, `"image_url"`, `"input_audio"`, …: kept as given. */
  type: string;
  /** The text of a `"text"` part. */
  text?: string;
  [key: string]: unknown;
}

/** Message content: plain text, structured parts, or `null` (an assistant message with only tool calls). */
export type MessageContent = string | ContentPart[] | null;

/** Roles a stored message may have. */
export const MESSAGE_ROLES = ["system", "developer", "user", "assistant", "tool"] as const;
/** A message role. */
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** An OpenAI-style tool call attached to an assistant message. */
export interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
  [key: string]: unknown;
}

/** What a caller supplies to append a message. */
export interface NewMessage {
  role: MessageRole;
  content?: MessageContent;
  toolCalls?: ToolCall[] | null;
  toolCallId?: string | null;
  toolName?: string | null;
  tokenCount?: number | null;
  finishReason?: string | null;
  /** Plain reasoning text the model exposed. */
  reasoning?: string | null;
  /** Provider-specific reasoning details (any JSON value). */
  reasoningDetails?: unknown;
  /** The platform's own id for this message (Telegram message id, Slack ts…). */
  platformMessageId?: string | null;
  /** When it was said (default: now). */
  timestamp?: number;
}

/** A stored message. */
export interface Message {
  /** Store-assigned id; increases in transcript order. */
  id: number;
  sessionId: string;
  role: MessageRole;
  content: MessageContent;
  toolCalls: ToolCall[] | null;
  toolCallId: string | null;
  toolName: string | null;
  tokenCount: number | null;
  finishReason: string | null;
  reasoning: string | null;
  reasoningDetails: unknown;
  platformMessageId: string | null;
  timestamp: number;
  /** When it was soft-deleted by a rewind, else `null`. Rewound messages are hidden unless asked for. */
  rewoundAt: number | null;
}

/** A message in OpenAI chat-completions shape, ready to send to a model. */
export interface ConversationMessage {
  role: MessageRole;
  content: string | ContentPart[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  reasoning?: string;
  reasoning_details?: unknown;
}

/** Options of {@link SessionHistory.getMessages}. */
export interface MessageWindowOptions {
  /** Include rewound (soft-deleted) messages (default false). */
  includeRewound?: boolean;
  /** Only the last N messages (a bounded window; default: all). Not together with `afterId`, `limit` or `offset`. */
  lastMessages?: number;
  /** Only messages whose id is greater than this (keyset paging: pass the last id of the previous page). */
  afterId?: number;
  /** At most this many messages, from the start of the transcript (after `afterId` and `offset`): 1 to 1,000. Default: all. */
  limit?: number;
  /** Messages to skip first (default 0). */
  offset?: number;
}

/** Options of {@link SessionHistory.getConversation}. */
export interface ConversationOptions {
  /** Put the session's system prompt first (default false). */
  includeSystemPrompt?: boolean;
  /**
   * Only the last N visible messages, cut so the window starts at a user message when it
   * holds one (never with a tool result whose call was cut off). Default: all.
   */
  lastMessages?: number;
}

/** Token and cost totals of a session. */
export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  apiCalls: number;
  estimatedCostUsd: number;
  actualCostUsd: number | null;
  billingProvider: string | null;
  billingMode: string | null;
  /** e.g. `"estimated"`, `"final"`, `"unknown"`: free text set by the caller. */
  costStatus: string | null;
}

/** Usage to record: numeric fields are added (`mode: "delta"`) or set (`mode: "absolute"`); text fields are set. */
export type UsageUpdate = Partial<SessionUsage>;

/** Fields to create a session with. */
export interface NewSession {
  /** The session id (default: generated `YYYYMMDD_HHMMSS_<8 hex>`, local time). */
  id?: string;
  /** Where it came from: `cli`, `telegram`, `api-server`, … */
  source: string;
  userId?: string | null;
  model?: string | null;
  /** Any JSON object (temperature, max tokens…). */
  modelConfig?: Record<string, unknown> | null;
  systemPrompt?: string | null;
  /** The session this one continues or branches from (must exist). */
  parentSessionId?: string | null;
  /** Start time (default: now). */
  startedAt?: number;
  title?: string | null;
  /** Gateway routing key this session belongs to. */
  sessionKey?: string | null;
  chatId?: string | null;
  chatType?: string | null;
  threadId?: string | null;
}

/** A stored session with its derived counters. */
export interface Session {
  id: string;
  source: string;
  userId: string | null;
  model: string | null;
  modelConfig: Record<string, unknown> | null;
  systemPrompt: string | null;
  parentSessionId: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  title: string | null;
  sessionKey: string | null;
  chatId: string | null;
  chatType: string | null;
  threadId: string | null;
  /** Visible (not rewound) messages. */
  messageCount: number;
  /** Tool calls in visible messages. */
  toolCallCount: number;
  /** Latest of the last visible message's time and `endedAt` (the start time when neither exists). */
  lastActiveAt: number;
  /** First visible user message, whitespace folded, at most 60 code points + `...`; `null` if none. */
  preview: string | null;
  usage: SessionUsage;
}

/** Fields of a session that may be changed after creation. */
export interface SessionUpdate {
  model?: string | null;
  modelConfig?: Record<string, unknown> | null;
  systemPrompt?: string | null;
}

/** One row of a session listing. */
export interface SessionSummary {
  id: string;
  source: string;
  title: string | null;
  preview: string | null;
  model: string | null;
  /** Start time; for a compression chain listed as its tip, the chain root's start time. */
  startedAt: number;
  lastActiveAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
  parentSessionId: string | null;
  /** Token and cost totals (as {@link Session.usage}), from the session row's kept counters. */
  usage: SessionUsage;
}

/**
 * One page of a listing: every paged result of the contract has this shape
 * ({@link SessionHistory.listSessions}, {@link RouteStore.listRoutes},
 * {@link ExecutionStore.listExecutions}).
 */
export interface Page<T> {
  items: T[];
  /**
   * Pass it as `cursor`, with the same filters, to get the next page; `null` when this page
   * is the last.
   */
  nextCursor: string | null;
  /**
   * How many items match the filters in all (every page, not only this one), when the
   * listing keeps that count: {@link ExecutionStore.listExecutions} always sets it; the
   * other listings leave it out.
   */
  total?: number;
}

/** Options of {@link SessionHistory.listSessions}. */
export interface ListSessionsOptions {
  /** Page size (default 20, 1 to 1,000). */
  limit?: number;
  /** `nextCursor` of the previous page, with the same filters and order. */
  cursor?: string | null;
  /** Only these sources. */
  sources?: string[];
  /** Never these sources. */
  excludeSources?: string[];
  /**
   * `false` (default): a compression chain is listed once, as its tip, with the root's
   * start time. `true`: every session is its own row.
   */
  includeChildren?: boolean;
  /** `"lastActive"` (default) or `"started"`, newest first. */
  orderBy?: "lastActive" | "started";
  /** Only sessions of this user (`Session.userId`), e.g. the tenant of a scoped API key. */
  userId?: string;
  /**
   * Only sessions whose `userId` is one of these (one person's identifiers, e.g. a platform
   * id and its aliases). An empty list matches no session. Combined with every other filter.
   */
  userIds?: string[];
  /**
   * Only sessions whose `source` and `userId` are one of these pairs (one person's identities
   * on several platforms, e.g. `[{ source: "telegram", userId: "123" }, { source: "cli", userId: "alice" }]`).
   * An empty list matches no session. Combined with every other filter.
   */
  identities?: SourceIdentity[];
  /** Only sessions of this chat (`Session.chatId`). */
  chatId?: string;
  /**
   * Only sessions that carry this gateway session key (`Session.sessionKey`), e.g. the
   * sessions of one chat, ended ones included. With `orderBy: "started"` and
   * `includeChildren: true` it reads the key's sessions newest start first, straight from
   * the key's index.
   */
  sessionKey?: string;
  /**
   * Only sessions whose ordering time is at or after this (epoch seconds): the last activity
   * with `orderBy: "lastActive"`, the start (the chain root's start when chains are listed as
   * tips) with `orderBy: "started"`. A range on the walked index, so it costs nothing extra.
   */
  since?: number;
  /** Only sessions whose ordering time (see `since`) is before this (epoch seconds, exclusive). */
  until?: number;
  /** Only sessions of these models (`Session.model`); checked on the rows the index walk yields. */
  models?: string[];
  /** `true`: only sessions with a title; `false`: only untitled ones; absent: both. */
  titled?: boolean;
}

/** One person's identity on one source: a session matches when both its `source` and its `userId` are these. */
export interface SourceIdentity {
  source: string;
  userId: string;
}

/** Options of {@link SessionSearch.searchMessages}. */
export interface SearchOptions {
  sources?: string[];
  excludeSources?: string[];
  /** Only messages with these roles. */
  roles?: MessageRole[];
  /** Default 20, 1 to 1,000. */
  limit?: number;
  /** Default 0. */
  offset?: number;
  /** `"relevance"` (default), `"newest"` or `"oldest"`. */
  sort?: "relevance" | "newest" | "oldest";
  /** Only messages of sessions of this user (`Session.userId`). */
  userId?: string;
  /** Only messages of sessions whose `userId` is one of these; an empty list matches nothing. */
  userIds?: string[];
  /** Only messages of sessions whose `source` and `userId` are one of these pairs; an empty list matches nothing. */
  identities?: SourceIdentity[];
  /** Only messages of sessions of this chat (`Session.chatId`). */
  chatId?: string;
}

/** A neighbouring message shown around a search hit. */
export interface ContextMessage {
  id: number;
  role: MessageRole;
  /** Text content cut to 200 characters. */
  content: string;
  timestamp: number;
}

/** One search result. */
export interface SearchHit {
  messageId: number;
  sessionId: string;
  role: MessageRole;
  /** An excerpt with every match wrapped in `>>>` and `<<<`. */
  snippet: string;
  timestamp: number;
  toolName: string | null;
  source: string;
  model: string | null;
  sessionStartedAt: number;
  /** The visible messages just before and after the hit in its session. */
  context: { before: ContextMessage | null; after: ContextMessage | null };
}

/** What {@link SessionHistory.rewind} did. */
export interface RewindResult {
  /** How many messages were hidden. */
  rewound: number;
  /** How many user turns were undone (fewer than asked when the session has fewer). */
  turnsUndone: number;
  /** The text of the earliest undone user message (to put back in the input box), or `null`. */
  targetText: string | null;
}

/** One exported session: its metadata and messages. One JSON line of an export. */
export interface SessionRecord {
  format: "threadline.session";
  version: 1;
  session: Omit<Session, "messageCount" | "toolCallCount" | "lastActiveAt" | "preview">;
  messages: Array<Omit<Message, "id" | "sessionId">>;
}

/** Options of {@link StoreMaintenance.exportSessions} and {@link StoreMaintenance.exportSessionLines}. */
export interface ExportOptions {
  /** Only this session. */
  sessionId?: string;
  /** Only these sources. */
  sources?: string[];
  /** Include rewound messages (default false). */
  includeRewound?: boolean;
  /** Only sessions of this user (`Session.userId`); with `sessionId`, another user's session is not found. */
  userId?: string;
}

/** One rejected import line. */
export interface ImportProblem {
  /** 1-based line number in the input. */
  line: number;
  message: string;
}

/** What {@link StoreMaintenance.importSessions} did. */
export interface ImportReport {
  imported: number;
  /** Sessions that already existed (nothing changed). */
  skipped: number;
  /** Lines that were rejected; nothing of them was written. */
  errors: ImportProblem[];
}

/** Options of {@link StoreMaintenance.pruneSessions}. */
export interface PruneOptions {
  /** Ended sessions whose last activity is strictly older than this many days go. */
  olderThanDays: number;
  /** Only these sources. */
  sources?: string[];
  /** "Now" for the age computation (default: the current time). */
  now?: number;
  /**
   * Give the freed space back to the file system afterwards (default true). `true`: SQLite
   * runs `PRAGMA incremental_vacuum` in bounded steps (other writers run between them) and
   * checkpoints the WAL, best effort, after a prune that deleted something; a file created
   * before Threadline set `auto_vacuum = INCREMENTAL` keeps its free pages for reuse.
   * `"full"`: a full `VACUUM` even when nothing was deleted (it rewrites the file, holding the
   * write lock throughout, and turns on incremental auto-vacuum for an older file).
   * PostgreSQL leaves reclaiming to autovacuum in every case.
   */
  vacuum?: boolean | "full";
}

/** Options of {@link StoreMaintenance.autoPrune}. */
export interface AutoPruneOptions extends PruneOptions {
  /** Run at most once per this many seconds across every process sharing the database (default 86,400). */
  intervalSeconds?: number;
}

/** Per-model totals in {@link StoreStats}. */
export interface ModelStats {
  model: string | null;
  sessions: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  estimatedCostUsd: number;
  actualCostUsd: number;
}

/** Totals of a database. */
export interface StoreStats {
  totalSessions: number;
  /** Visible messages. */
  totalMessages: number;
  sessionsBySource: Record<string, number>;
  byModel: ModelStats[];
  /** Bytes on disk (SQLite: main file + WAL). */
  databaseBytes: number;
  /** Bytes used by the full-text index, when the backend can tell. */
  searchIndexBytes: number | null;
}

/** Options of {@link StoreMaintenance.getInsights}: which sessions count (by start time and source). */
export interface InsightsOptions {
  /** Sessions started at or after this time (epoch seconds). Default: 30 days before now. */
  since?: number;
  /** Sessions started before this time (epoch seconds, exclusive). Default: no upper bound. */
  until?: number;
  /** Only sessions from these sources. */
  sources?: string[];
  /** Entries in each ranked session list (`longest`, `costliest`): 1–100, default 5. */
  top?: number;
  /** Only sessions of this user (`Session.userId`), e.g. the tenant of a scoped API key. */
  userId?: string;
}

/** Sessions started on one local calendar day from one source, in {@link Insights.byDay}. */
export interface InsightsDay {
  /** The local calendar day, `YYYY-MM-DD` (in `activity.timeZone`). */
  day: string;
  source: string;
  /** Sessions started that day. */
  sessions: number;
  /** Visible messages of those sessions (counted on the day the session started). */
  messages: number;
}

/** Totals over a set of sessions in {@link Insights}. */
export interface InsightsTotals {
  sessions: number;
  /** Visible messages. */
  messages: number;
  /** Tool calls made by visible assistant messages. */
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  apiCalls: number;
  estimatedCostUsd: number;
  /** Sum of the actual costs that are known (sessions without one add 0). */
  actualCostUsd: number;
}

/** Tool calls of one tool in {@link Insights}. */
export interface ToolUsage {
  /** The called function's name. */
  tool: string;
  calls: number;
  /** Sessions that called it at least once. */
  sessions: number;
}

/** A session in a ranked list of {@link Insights}. */
export interface InsightsSession {
  id: string;
  title: string | null;
  source: string;
  model: string | null;
  startedAt: number;
  endedAt: number | null;
  lastActiveAt: number;
  /** `lastActiveAt − startedAt`, in seconds. */
  durationSeconds: number;
  messageCount: number;
  toolCallCount: number;
  inputTokens: number;
  outputTokens: number;
  estimatedCostUsd: number;
  actualCostUsd: number | null;
}

/**
 * Usage over a period ({@link StoreMaintenance.getInsights}), computed from per-session columns
 * and a per-session tool tally that are kept on write (no message is read).
 */
export interface Insights {
  /** The period: sessions started in [since, until). */
  since: number;
  until: number | null;
  sources: string[] | null;
  totals: InsightsTotals;
  /** Per model, most estimated cost first (then most sessions, then by name). */
  byModel: Array<InsightsTotals & { model: string | null }>;
  /** Per source, most sessions first (then by name). */
  bySource: Array<InsightsTotals & { source: string }>;
  /** Per tool, most calls first (then by name). */
  tools: ToolUsage[];
  /**
   * Sessions started, by weekday and hour of their start in the local time zone of the
   * process that asked (`timeZone`, as Intl reports it).
   */
  activity: {
    timeZone: string;
    /** Monday first: `{ weekday: "Mon", sessions }` … `"Sun"`. */
    byWeekday: Array<{ weekday: string; sessions: number }>;
    /** Hours 0–23. */
    byHour: Array<{ hour: number; sessions: number }>;
    /** Local calendar days with at least one session started. */
    activeDays: number;
  };
  /** Per local day and source, oldest day first (then by source); days without sessions are left out. */
  byDay: InsightsDay[];
  /** Longest first (`durationSeconds`), at most `top`. */
  longest: InsightsSession[];
  /** Most estimated cost first, at most `top` (sessions that cost nothing are left out). */
  costliest: InsightsSession[];
}

// --- gateway routing state ----------------------------------------------------

/** The flags and counters of a routing entry (see {@link Route}). */
export interface RouteState {
  /** The current session replaced the previous one by an automatic reset. */
  wasAutoReset: boolean;
  /** `idle`, `daily`, `suspended`, `resume_pending_expired`, … (with `wasAutoReset`). */
  autoResetReason: string | null;
  /** The session replaced by the automatic reset had messages or tokens. */
  resetHadActivity: boolean;
  /** The current session came from an explicit reset (`/new`, `/reset`) and has had no turn yet. */
  isFreshReset: boolean;
  /** The expiry watcher has finalised the current session. */
  expiryFinalized: boolean;
  /** The next message starts a new session (`/stop`, the stuck-loop guard). */
  suspended: boolean;
  /** The current session was interrupted and should be resumed. */
  resumePending: boolean;
  /** Why (`restart_interrupted`, `restart_timeout`, `shutdown_timeout`, …). */
  resumeReason: string | null;
  /** When `resumePending` was last set. */
  lastResumeMarkedAt: number | null;
  /** Prompt tokens of the last model call. */
  lastPromptTokens: number;
  /** When the turn in progress started; `null` when no turn runs. */
  turnStartedAt: number | null;
  /** Consecutive restarts that caught this key mid-turn (cleared by a successful turn). */
  interruptedRestarts: number;
  /** Failed finalisation attempts of the expiry watcher for the current session. */
  finalizeFailures: number;
}

/** Every field of a routing entry except its key and version. */
export interface RouteFields extends RouteState {
  /** The session this key routes to now. */
  sessionId: string;
  /** When this key started routing to `sessionId`. */
  createdAt: number;
  /** Last activity on this key. */
  updatedAt: number;
  /** The message origin (a gateway `SessionSource` as JSON). */
  origin: Record<string, unknown> | null;
  displayName: string | null;
  platform: string | null;
  chatType: string | null;
}

/** A gateway routing entry: a session key and the session it routes to now. */
export interface Route extends RouteFields {
  key: string;
  /** Grows by one on every write; the `expectedVersion` of the next conditional write. */
  version: number;
}

/**
 * A conditional write of a routing entry together with the session rows it implies,
 * committed in one transaction.
 */
export interface RouteWrite extends ClaimedWrite {
  key: string;
  /** The version last read, or `null` when the key must have no entry yet. */
  expectedVersion: number | null;
  route: RouteFields;
  /**
   * End this session in the same transaction (nothing happens if it already ended). With
   * `ifLastMessageId`, only while the newest visible message of that session is still the one
   * with this id (`null`: it has none); otherwise nothing is written and the call returns
   * `null`, as on a version conflict (a compression's guard against losing a message
   * appended meanwhile).
   */
  endSession?: { id: string; reason: string; endedAt?: number; ifLastMessageId?: number | null };
  /** Create this session in the same transaction; its `id` must equal `route.sessionId`. */
  createSession?: NewSession;
  /** Reopen this session (if ended) in the same transaction. */
  reopenSession?: string;
  /**
   * Append these messages to `route.sessionId` in the same transaction, in order, after the
   * session changes above, exactly as {@link SessionHistory.appendTurn} would: the session must
   * exist ({@link NotFoundError}) and be live ({@link ConflictError}); an invalid message is an
   * {@link InvalidInputError} naming it (`appendMessages[i]`). An empty array does nothing.
   */
  appendMessages?: NewMessage[];
  /**
   * Add this usage to `route.sessionId`'s totals in the same transaction, exactly as
   * {@link SessionHistory.recordUsage} in delta mode would. A total that would go below zero
   * makes the whole write reject with {@link InvalidInputError}, with nothing written.
   */
  recordUsage?: UsageUpdate;
  /**
   * Write only while this lease token is current (see {@link LeaseFence}); otherwise the
   * call throws {@link LeaseLostError} and writes nothing (checked before `expectedVersion`).
   */
  fence?: LeaseFence;
}

/**
 * A continuation written in one transaction by {@link SessionHistory.continueSession}: the
 * parent ends, the child (whose parent it is) starts with these messages.
 */
export interface ContinuationWrite {
  /** The session that ends; it must be live ({@link ConflictError} otherwise). */
  parentId: string;
  /** Its end reason (a compression: `compression`). */
  reason: string;
  /**
   * Write only while the parent's newest visible message is still the one with this id
   * (`null`: it has none); otherwise nothing is written and the call returns `null`.
   */
  ifLastMessageId: number | null;
  /** The continuation; its `parentSessionId` must be `parentId` (it is set when left out). */
  createSession: NewSession;
  /** Its first messages, in order. */
  messages: NewMessage[];
  /** When the parent ends and the child starts (default: now). */
  at?: number;
  /** Write only while this lease token is current ({@link LeaseLostError} otherwise, nothing written). */
  fence?: LeaseFence;
}

/** Options of {@link RouteStore.listRoutes}. Entries come in key order. */
export interface ListRoutesOptions {
  /** Default 100, 1 to 1,000. */
  limit?: number;
  cursor?: string | null;
  /** Only entries with `updatedAt >= updatedSince`. */
  updatedSince?: number;
  /** Only entries with `updatedAt < updatedBefore`. */
  updatedBefore?: number;
  suspended?: boolean;
  expiryFinalized?: boolean;
  resumePending?: boolean;
  /** Only entries with (`true`) or without (`false`) a turn in progress. */
  turnInProgress?: boolean;
}

/** One inbound event to queue for a busy session. */
export interface NewQueuedEvent extends ClaimedWrite {
  /** The platform's message id: an id already queued for the key makes the call a `duplicate`. */
  messageId?: string | null;
  /** The event (any JSON value). */
  payload: unknown;
  /**
   * Events with the same non-null merge key that arrive one after the other merge into one
   * queued item (a media album). `null`: never merges.
   */
  mergeKey?: string | null;
  /** With a merge key: merge only when the previous event came at most this many seconds earlier (`null`: any gap). */
  mergeWithinSeconds?: number | null;
  /** Arrival time (default: now). */
  at?: number;
}

/** A queued item: one event, or several merged ones. */
export interface QueuedItem {
  id: number;
  key: string;
  payloads: unknown[];
  messageIds: string[];
  mergeKey: string | null;
  enqueuedAt: number;
  /** Arrival of its latest event. */
  lastEventAt: number;
  /** When a turn took it (it stays queued until completed, so a crash replays it); `null` while waiting. */
  claimedAt: number | null;
}

/** What {@link QueueStore.enqueue} did. `depth` counts the waiting (unclaimed) items afterwards. */
export type EnqueueResult =
  | { status: "queued" | "merged"; item: QueuedItem; depth: number }
  | { status: "duplicate"; depth: number }
  | { status: "full"; depth: number };

/**
 * A lease on a session key: while a gateway replica holds it, no other replica runs a turn
 * of that key. Leases expire unless renewed, so a crashed holder cannot block a key forever.
 */
export interface Lease {
  /** The session key (a routing key). */
  key: string;
  /** Who holds it: an id unique to one running holder (e.g. replica id + process start), never reused after a restart. */
  holder: string;
  /**
   * Fencing token: grows (by one) every time the lease changes hands, including after a
   * release or an expiry; a renewal (or a re-acquisition by the same holder) keeps it.
   * Pass it as {@link LeaseFence} on every write of the turn.
   */
  token: number;
  /** When it lapses (epoch seconds); from then on another holder may take it. */
  expiresAt: number;
}

/** Options of {@link LeaseStore.acquireLease} and {@link LeaseStore.renewLease}. */
export interface LeaseOptions {
  /** How long the lease lasts from `now`, in seconds (more than 0, at most 86,400). */
  ttlSeconds: number;
  /** "Now" (default: the current time of this process). Replicas must keep their clocks in sync. */
  now?: number;
}

/**
 * A fence on a write: the write happens only if, inside its transaction, the lease on `key`
 * is held (not released) with exactly `token`. Expiry is not checked: an expired lease that
 * nobody else has taken still fences; a newer holder's acquisition bumps the token, which is
 * what makes a stale holder's late write fail with {@link LeaseLostError}.
 */
export interface LeaseFence {
  /** The leased session key. */
  key: string;
  /** {@link Lease.token} as acquired. */
  token: number;
}

/** Options of a transcript write that may be fenced by a lease. */
export interface FencedWriteOptions {
  /** Refuse the write (with {@link LeaseLostError}, nothing written) unless this lease token is current. */
  fence?: LeaseFence;
}

// --- cross-platform handoffs ---------------------------------------------------

/** The states of a {@link Handoff}: `pending` → `running` → `completed` | `failed` (a pending one may also fail). */
export const HANDOFF_STATUSES = ["pending", "running", "completed", "failed"] as const;
/** A handoff state. */
export type HandoffStatus = (typeof HANDOFF_STATUSES)[number];

/**
 * A request to move a live session to a platform's home channel (`/handoff <platform>`),
 * recorded so that a gateway process can claim and carry it out.
 */
export interface Handoff {
  /** Store-assigned id. */
  id: string;
  /** The session being handed off. */
  sessionId: string;
  /** The target platform (`telegram`, `webhook`, …). */
  platform: string;
  status: HandoffStatus;
  /** Why it failed (`timeout`, or what the gateway reported); `null` otherwise. */
  reason: string | null;
  createdAt: number;
  /** Last status change. */
  updatedAt: number;
  /** The holder (a gateway) that claimed it; `null` while pending (and when it failed unclaimed). */
  claimedBy: string | null;
  /** The chat the session now continues in (set on completion). */
  chatId: string | null;
  /** The thread inside that chat, when one was created. */
  threadId: string | null;
  /** The session key of that chat, now routing to `sessionId`. */
  sessionKey: string | null;
}

/** What {@link HandoffStore.createHandoff} needs. */
export interface NewHandoff {
  /** The session to hand off (must exist). */
  sessionId: string;
  /** The target platform. */
  platform: string;
  /** Creation time (default: now). */
  now?: number;
}

/** Options of {@link HandoffStore.claimHandoff}. */
export interface ClaimHandoffOptions {
  /** Only handoffs to these platforms (an empty list claims nothing). */
  platforms: string[];
  /** Who claims (recorded as `claimedBy`). */
  holder: string;
  /** Only handoffs created at or before this time (default: any age). */
  createdBefore?: number;
  /** The claim time, recorded as `updatedAt` (default: now). */
  now?: number;
}

/** How a handoff ended, for {@link HandoffStore.finishHandoff}. */
export interface HandoffResult {
  status: "completed" | "failed";
  /** Why it failed (kept for `failed`; ignored for `completed`). */
  reason?: string | null;
  /** The target chat (required for `completed`). */
  chatId?: string | null;
  /** The thread in the target chat, if any. */
  threadId?: string | null;
  /** The target chat's session key (required for `completed`). */
  sessionKey?: string | null;
  /** When it ended (default: now). */
  now?: number;
}

// --- pairing --------------------------------------------------------------------

/**
 * A pending pairing code: an unknown sender asked to talk to the agent and was given
 * {@link code}; an operator approves it with `threadline pairing approve <platform> <code>`
 * (or an admin from chat). Codes are short-lived secrets: never log them.
 */
export interface PairingRequest {
  /** The platform the sender wrote on (`telegram`, `slack`, …). */
  platform: string;
  /** The code, 8 characters of `ABCDEFGHJKLMNPQRSTUVWXYZ23456789`. */
  code: string;
  /** The sender's canonical user id on that platform. */
  userId: string;
  /** The sender's display name as the platform gave it (untrusted text), or `null`. */
  userName: string | null;
  /** The chat the request came from, or `null`. */
  chatId: string | null;
  /** When the code was made (epoch milliseconds). */
  createdAt: number;
  /** When it stops being accepted (epoch milliseconds): one hour after {@link createdAt}. */
  expiresAt: number;
}

/** A person approved to talk to the agent on a platform (until revoked). */
export interface PairingApproval {
  platform: string;
  /** The person's canonical user id on that platform. */
  userId: string;
  /** Their display name when they asked (untrusted text), or `null`. */
  userName: string | null;
  /** When they were approved (epoch milliseconds). */
  approvedAt: number;
  /** Who approved them: `"cli"`, or `"<platform>:<adminUserId>"` when approved from chat; `null` when not said. */
  approvedBy: string | null;
}

/** What {@link PairingStore.requestPairingCode} did. */
export type PairingCodeOutcome =
  /** A new code: send it to the sender (exactly once). */
  | { kind: "code"; code: string; expiresAt: number }
  /** The sender is approved: let the message through. */
  | { kind: "already-approved" }
  /** The sender asked within the last 10 minutes: send nothing. */
  | { kind: "rate-limited" }
  /** 3 codes are pending on this platform: no code was made. */
  | { kind: "too-many-pending" };

/** What {@link PairingStore.approvePairingCode} did. */
export type PairingApproveOutcome =
  /** The code was pending: its sender is approved, and their pending codes are gone. */
  | { kind: "approved"; approval: PairingApproval; request: PairingRequest }
  /** No such pending, unexpired code on this platform (counted as a failed approval). */
  | { kind: "unknown-code" }
  /** 5 failed approvals on this platform: every approval there is refused until `until` (epoch milliseconds). */
  | { kind: "locked-out"; until: number };

/** Options of {@link PairingStore.requestPairingCode}. */
export interface PairingCodeRequestOptions {
  /** The sender's display name (stored for the operator to see; untrusted). */
  userName?: string | null;
  /** The chat the request came from. */
  chatId?: string | null;
  /** "Now" in epoch milliseconds (default: the current time). */
  now?: number;
}

/** Options of {@link PairingStore.approvePairingCode}. */
export interface PairingApproveOptions {
  /** Who approves: `"cli"`, or `"<platform>:<adminUserId>"`. */
  by?: string | null;
  /** "Now" in epoch milliseconds (default: the current time). */
  now?: number;
}

/** Options of {@link PairingStore.listPairing}. */
export interface ListPairingOptions {
  /** Only this platform. */
  platform?: string;
  /** "Now" in epoch milliseconds (default: the current time): codes expired by then are left out. */
  now?: number;
}

/** What {@link PairingStore.listPairing} returns. */
export interface PairingList {
  /** Unexpired pending codes, oldest first. */
  pending: PairingRequest[];
  /** Approved people, by platform then approval time. */
  approved: PairingApproval[];
}

// --- execution sessions -------------------------------------------------------

/** What an execution session records: one agent run, or a workflow run whose steps are agent runs. */
export type ExecutionKind = "agent" | "workflow";

/** An execution session without its result (listing, resolution). See `threadline/executions`. */
export interface ExecutionSummary {
  id: string;
  kind: ExecutionKind;
  /** The agent or workflow name. */
  name: string;
  /** Groups a workflow with its steps (and any run started from the same user-given id). */
  baseId: string;
  /** For a workflow step: the workflow it is a step of; otherwise `null`. */
  parentId: string | null;
  /** The owner (a user or tenant id), or `null`. */
  userId: string | null;
  /** When it was first stored; never changes. */
  createdAt: number;
  updatedAt: number;
  /** For a record without a parent: the newest `updatedAt` of it and its steps (its retention age); for a step, its own `updatedAt`. */
  unitUpdatedAt: number;
  messageCount: number;
  /** Step session id → agent name; `null` when there are none. */
  agentsInvolved: Record<string, string> | null;
  /** Starts at 1 and grows by one on every write of the record (for {@link ExecutionWrite.expectedVersion}). */
  version: number;
}

/** A stored execution session with its full result. */
export interface ExecutionRecord extends ExecutionSummary {
  /** The result as stored (any JSON value). */
  result: unknown;
}

/** An execution session to insert or replace (see {@link ExecutionStore.writeExecutions}). */
export interface ExecutionWrite {
  /** An id-like string (1–256 characters, no control characters). */
  id: string;
  kind: ExecutionKind;
  /** An id-like string. */
  name: string;
  /** An id-like string. */
  baseId: string;
  /** The workflow this record is a step of: it must exist (or be put earlier in the same change), be a workflow and have no parent itself; a step is an `agent`. */
  parentId?: string | null;
  userId?: string | null;
  /** Used only when the record is new (default: `updatedAt`); an existing record keeps its creation time. */
  createdAt?: number;
  updatedAt: number;
  /** Any JSON value (at most 64 MiB as JSON). */
  result: unknown;
  /** A whole number ≥ 0. */
  messageCount: number;
  agentsInvolved: Record<string, string> | null;
  /**
   * Optimistic concurrency: `null` means the record must not exist yet, a number that it must
   * be at this version. When any expectation of a change fails nothing is written.
   * Omitted: written whatever is stored.
   */
  expectedVersion?: number | null;
}

/** One atomic change of execution sessions: puts (in order), then deletions. */
export interface ExecutionChange {
  /** Records to insert or replace (each id at most once). */
  put?: ExecutionWrite[];
  /** Ids to delete, each with its steps (records whose `parentId` is it). Unknown ids are ignored. */
  delete?: string[];
}

/** What {@link ExecutionStore.writeExecutions} did. */
export interface ExecutionChangeResult {
  /** The stored records of the puts, in order. */
  stored: ExecutionSummary[];
  /** Every deleted id: each deleted record, followed by its steps in id order. */
  deleted: string[];
}

/** Options of {@link ExecutionStore.findExecutions}: exactly one of `idPrefix`, `baseId`, `parentId`. */
export interface FindExecutionsOptions {
  /** Records whose id starts with this (the id itself included). */
  idPrefix?: string;
  /** Records with this base id. */
  baseId?: string;
  /** The steps of this workflow. */
  parentId?: string;
  /** Leave out every match whose parent is itself a match (the steps of a matching workflow). Default false. */
  withoutStepsOfMatches?: boolean;
  /** Only records of this owner. */
  userId?: string;
  /** Default 100, 1 to 1,000. */
  limit?: number;
}

/** Options of {@link ExecutionStore.listExecutions}. Newest `updatedAt` first. */
export interface ListExecutionsOptions {
  /** With `name`: only records of this kind and name. The two go together. */
  kind?: ExecutionKind;
  name?: string;
  /** Leave out workflow steps (records with a parent). Default false. */
  directOnly?: boolean;
  /** Only records of this owner. */
  userId?: string;
  /** Default 50, 1 to 100. */
  limit?: number;
  /**
   * `nextCursor` of the previous page, with the same filters (keyset paging: a record
   * written meanwhile is neither repeated nor skipped because of the others' moves).
   */
  cursor?: string | null;
  /** Rows to skip first (default 0), after `cursor` when both are given. */
  offset?: number;
}

/**
 * Options of {@link ExecutionStore.listExecutionUnits}: records without a parent (each a unit with
 * its steps), newest `unitUpdatedAt` first.
 */
export interface ListExecutionUnitsOptions {
  /** Only units whose `unitUpdatedAt` is strictly before this time. */
  updatedBefore?: number;
  /** Units to skip, newest first (default 0). */
  offset?: number;
  /** Only units of this owner. */
  userId?: string;
  /** Default 100, 1 to 1,000. */
  limit?: number;
}

/** What a backend can do, for callers that must branch (never on the class). */
export interface StoreCapabilities {
  /** `"sqlite"`, `"postgres"`, … */
  backend: string;
  /** Several processes may write at once. */
  multiProcess: boolean;
  /**
   * Processes on several machines may share the database (a server, not a local file): gateway
   * replicas then coordinate through session leases (`gateway.leases: auto` turns them on).
   */
  multiHost: boolean;
}

// --- the roles ------------------------------------------------------------------
//
// The contract is cut into the roles its callers play: a layer asks for the roles it calls
// (the executions layer an `ExecutionStore`, the agent tools `SessionHistory & SessionSearch
// & AliasStore`, …), and one object, a `SessionDB`, implements them all.

/**
 * Sessions and their transcripts: creating, reading, ending and deleting sessions, their
 * messages, titles and lineage, and listing them. What every layer that reads or writes a
 * conversation needs.
 */
export interface SessionHistory {
  // --- sessions -------------------------------------------------------------

  /** Creates a session. Throws {@link ConflictError} if the id exists, {@link NotFoundError} for an unknown parent. */
  createSession(input: NewSession): Promise<Session>;
  /** The session, or `null`. */
  getSession(id: string): Promise<Session | null>;
  /** Ends a session. The first reason wins: returns `false` (and changes nothing) if it had already ended. */
  endSession(id: string, reason: string, options?: { endedAt?: number }): Promise<boolean>;
  /** Clears the end of a session so it accepts messages again. Returns `false` if it was not ended. */
  reopenSession(id: string): Promise<boolean>;
  /** The full id for an exact id or a unique id prefix; `null` when none or several match. */
  resolveSessionId(idOrPrefix: string): Promise<string | null>;
  /** Changes model, model config or system prompt. Returns the updated session. */
  updateSession(id: string, update: SessionUpdate): Promise<Session>;
  /**
   * Records token and cost usage, added (default) or set. Returns the new totals. With
   * `fence`, throws {@link LeaseLostError} (nothing recorded) unless the lease token is current.
   */
  recordUsage(id: string, usage: UsageUpdate, options?: { mode?: "delta" | "absolute" } & FencedWriteOptions): Promise<SessionUsage>;
  /** Deletes a session and its messages; its children are detached. Returns `false` if it did not exist. */
  deleteSession(id: string): Promise<boolean>;

  // --- messages -------------------------------------------------------------

  /**
   * Appends one message; returns its id. Throws {@link ConflictError} on an ended session,
   * {@link LeaseLostError} (nothing written) when `options.fence` is no longer current.
   */
  appendMessage(sessionId: string, message: NewMessage, options?: FencedWriteOptions): Promise<number>;
  /**
   * Appends several messages in one transaction (all or none, contiguous); returns their ids
   * in order. Fenced like {@link SessionHistory.appendMessage}.
   */
  appendTurn(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]>;
  /** Every visible message in transcript order (rewound ones too with `includeRewound`). */
  getMessages(sessionId: string, options?: MessageWindowOptions): Promise<Message[]>;
  /** The visible transcript in OpenAI chat shape (the system prompt first with `includeSystemPrompt`). */
  getConversation(sessionId: string, options?: ConversationOptions): Promise<ConversationMessage[]>;
  /**
   * Replaces the whole transcript in one transaction (retry, undo, compress); returns the new
   * ids. Fenced like {@link SessionHistory.appendMessage}.
   */
  replaceMessages(sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]>;
  /**
   * Soft-deletes the last `turns` user turns (default 1; below 1 acts as 1; pass `undefined`
   * to fence the default). Fenced like {@link SessionHistory.appendMessage}.
   */
  rewind(sessionId: string, turns?: number, options?: FencedWriteOptions): Promise<RewindResult>;
  /**
   * Soft-deletes the last `count` visible messages, whatever their roles (default 1; below 1
   * acts as 1), as one rewind batch, and returns them in transcript order with `rewoundAt`
   * set (`[]` when the session has no visible message). {@link SessionHistory.restoreRewound}
   * brings them back. Fenced like {@link SessionHistory.appendMessage}.
   */
  rewindMessages(sessionId: string, count?: number, options?: FencedWriteOptions): Promise<Message[]>;
  /** Brings back the rows of the latest rewind (every rewound row with `all`); returns how many. */
  restoreRewound(sessionId: string, options?: { all?: boolean }): Promise<number>;
  /** Deletes every message of a session; returns how many. */
  clearMessages(sessionId: string): Promise<number>;

  // --- titles ---------------------------------------------------------------

  /**
   * Sets (or with `null`/empty, clears) a session's title after sanitising it; returns
   * the stored title. Throws {@link InvalidInputError} over 100 code points and
   * {@link ConflictError} (naming the holder) when another session holds it.
   */
  setTitle(id: string, title: string | null): Promise<string | null>;
  /** The session's title, or `null`. */
  getTitle(id: string): Promise<string | null>;
  /**
   * The id of the session holding exactly `title` (after sanitising; titles are unique and
   * case-sensitive), or `null`. Never another member of its lineage: `"my project"` is the
   * session titled "my project", even when "my project #3" exists. To continue the newest
   * session of a lineage, follow real parent links ({@link SessionHistory.getCompressionTip}).
   */
  resolveByTitle(title: string): Promise<string | null>;
  /**
   * Other sessions whose titles look like `title`'s: its lineage variants (`t`, `t #N`) and its
   * collision forms (`t (N)`), newest first, at most `limit` (default 20, 1–100), the holder of
   * `title` itself left out. For telling a person which one a bare title was taken to mean;
   * never for choosing one.
   */
  similarTitles(title: string, limit?: number): Promise<Array<{ id: string; title: string }>>;
  /**
   * The next free title in `t`'s lineage: `t` if unused, else `t #(max N + 1)`. For compression
   * continuations (and other children that continue a titled parent) only.
   */
  nextTitleInLineage(title: string): Promise<string>;
  /**
   * A free title for a session unrelated to the holder of `title`: `title` itself if no session
   * holds it, else the first free collision form `title (2)`, `title (3)`… (a trailing ` (N)` of
   * `title` is replaced, and the base cut to stay within 100 code points). Never a `#N` lineage
   * title, so unrelated chats that start alike never look like one conversation.
   */
  freeTitle(title: string): Promise<string>;

  // --- lineage --------------------------------------------------------------

  /** Parent, grandparent, … up to the root (cycle-safe). */
  getAncestors(id: string): Promise<Session[]>;
  /** Every descendant, breadth first (cycle-safe). */
  getDescendants(id: string): Promise<Session[]>;
  /** Follows the continuations of sessions that ended with reason `compression`; returns the live end of the chain. */
  getCompressionTip(id: string): Promise<string>;
  /**
   * Ends a session and creates its continuation with its first messages, in one transaction
   * (all or nothing: a crash never leaves a half-made child). Returns the new session, or
   * `null` (nothing written) when the parent's newest visible message is no longer
   * `write.ifLastMessageId` — a message arrived meanwhile; read again and retry. Throws
   * {@link NotFoundError} for an unknown parent, {@link ConflictError} when it has ended or the
   * child's id is taken, {@link InvalidInputError} for a bad session or message.
   */
  continueSession(write: ContinuationWrite): Promise<Session | null>;

  // --- listing --------------------------------------------------------------

  /**
   * Sessions newest first, bounded, filtered (by source, user, chat, session key, time,
   * model, title), with a keyset cursor.
   */
  listSessions(options?: ListSessionsOptions): Promise<Page<SessionSummary>>;
}

/** Full-text search over the visible messages of every session. */
export interface SessionSearch {
  /** Full-text search; never throws on user input. See docs "Search syntax". */
  searchMessages(query: string, options?: SearchOptions): Promise<SearchHit[]>;
}

/** The gateway's routing entries: which session each session key routes to now. */
export interface RouteStore {
  /** The routing entry of a key, or `null`. */
  getRoute(key: string): Promise<Route | null>;
  /** The entry routing to this session (the most recently updated one when several do), or `null`. */
  findRouteBySession(sessionId: string): Promise<Route | null>;
  /** Entries in key order, filtered, with a cursor. */
  listRoutes(options?: ListRoutesOptions): Promise<Page<Route>>;
  /**
   * Writes an entry if its version is still `expectedVersion`, with the session changes,
   * appended messages and usage it implies, atomically. Returns the stored entry, or `null`
   * (nothing written, appended or recorded) when another writer got there first. With `write.fence`, throws {@link LeaseLostError} (nothing
   * written) unless the lease token is current.
   */
  writeRoute(write: RouteWrite): Promise<Route | null>;
  /** Deletes an entry (only at `expectedVersion` when given). */
  deleteRoute(key: string, options?: { expectedVersion?: number }): Promise<boolean>;
  /**
   * The newest session that is still live (not ended) and carries this session key, or
   * `null` (to rebuild a lost entry). To list a key's sessions, use
   * {@link SessionHistory.listSessions} with `sessionKey`.
   */
  findLiveSessionByKey(key: string): Promise<Session | null>;
}

/** Identity aliases: several platform ids that name one person, per namespace (platform). */
export interface AliasStore {
  /** Records that `a` and `b` name one identity in `namespace`; returns the canonical id (shortest, then lexicographically first). */
  recordAlias(namespace: string, a: string, b: string): Promise<string>;
  /** The canonical id of `id` in `namespace` (`id` itself when it has no alias). */
  resolveAlias(namespace: string, id: string): Promise<string>;
  /** Every id of `id`'s identity in `namespace`: the canonical id first, then its aliases sorted (`[id]` when it has none). */
  listAliases(namespace: string, id: string): Promise<string[]>;
}

/** The durable inbound queue of each session key (messages that arrive while a turn runs). */
export interface QueueStore {
  /** Queues an event for a key, durably, unless it is a duplicate or the queue holds `maxDepth` waiting items (default 32). */
  enqueue(key: string, event: NewQueuedEvent, options?: { maxDepth?: number }): Promise<EnqueueResult>;
  /** Every item of a key's queue, oldest first (a claimed item first). */
  listQueue(key: string): Promise<QueuedItem[]>;
  /** Claims the oldest item (returns an already claimed one again: replay after a crash), or `null` when empty. */
  claimQueued(key: string, options?: { at?: number }): Promise<QueuedItem | null>;
  /** Removes an item once its turn has stored it. */
  completeQueued(key: string, itemId: number): Promise<boolean>;
  /** Removes every waiting item of a key (a claimed one stays); returns how many. */
  clearQueue(key: string): Promise<number>;
  /** Keys that have queued items. */
  listQueuedKeys(): Promise<string[]>;
}

/** Leases on session keys, so that of several gateway replicas only one runs a key's turn. */
export interface LeaseStore {
  /**
   * Takes the lease on a session key for `holder`, atomically across processes (of two
   * concurrent acquirers exactly one wins). Granted when the key is free (never leased or
   * released), expired (`expiresAt <= now`), or already held by `holder` (a renewal: new
   * expiry, same token, even if it had expired meanwhile). A grant to a new holder gets the
   * previous token + 1 (1 for a key never leased). Returns the lease, or `null` when
   * another holder has it.
   */
  acquireLease(key: string, holder: string, options: LeaseOptions): Promise<Lease | null>;
  /**
   * Extends a lease to `now + ttlSeconds` if `holder` still holds it with `token`, even when
   * it has just expired, as long as nobody else took it (the token still fences then).
   * Returns the renewed lease, or `null` when it was released or taken over.
   */
  renewLease(key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null>;
  /**
   * Gives a lease up (if `holder` still holds it with `token`, expired or not), so the next
   * acquirer need not wait for the expiry; its token then no longer fences. Returns whether
   * it was released.
   */
  releaseLease(key: string, holder: string, token: number): Promise<boolean>;
  /**
   * The current lease of a key, or `null` when it was never leased or is released. An expired
   * lease is still returned until someone takes it: compare `expiresAt` with now.
   */
  getLease(key: string): Promise<Lease | null>;
}

/** Cross-platform handoffs: requests to move a session to another platform, claimed by a gateway. */
export interface HandoffStore {
  /**
   * Records a `pending` handoff of a session to a platform. Throws {@link NotFoundError}
   * when the session does not exist. A handoff row goes when its session is deleted.
   */
  createHandoff(input: NewHandoff): Promise<Handoff>;
  /** The handoff, or `null`. */
  getHandoff(id: string): Promise<Handoff | null>;
  /**
   * Atomically moves the oldest `pending` handoff (creation time, then creation order) to one
   * of `platforms` to `running`, claimed by `holder`, and returns it; `null` when there is
   * none. Race-safe across processes: of several concurrent claimers, exactly one gets
   * each handoff.
   */
  claimHandoff(options: ClaimHandoffOptions): Promise<Handoff | null>;
  /**
   * Ends a handoff: `completed` (from `running` only; needs `chatId` and `sessionKey`) or
   * `failed` (from `pending` or `running`). Returns the stored handoff. Throws
   * {@link NotFoundError} for an unknown id and {@link ConflictError} (nothing changed) when
   * it is not in a state it can end from, e.g. it has already ended.
   */
  finishHandoff(id: string, result: HandoffResult): Promise<Handoff>;
}

/**
 * Who may talk to the agent on a platform: DM pairing (hermes-agent's rules). An unknown
 * sender asks for a one-time code; an operator approves it; approvals stay until revoked.
 * Every decision is atomic across processes (replicas sharing a database).
 *
 * The rules: codes are 8 characters of `ABCDEFGHJKLMNPQRSTUVWXYZ23456789`, cryptographically
 * random, valid for 1 hour; at most 3 unexpired codes pending per platform; one code request
 * per person per 10 minutes; 5 failed approvals on a platform lock approvals there for 1 hour
 * (the count resets when the lockout ends or an approval succeeds).
 */
export interface PairingStore {
  /**
   * An unknown sender's request for a code. `already-approved` when they are approved;
   * `rate-limited` when they asked within the last 10 minutes (whether or not that code is
   * still pending); `too-many-pending` when 3 unexpired codes wait on the platform (nothing
   * is recorded then); else a new code, which replaces nothing (an earlier code of theirs stays
   * valid until it expires or one of them is approved).
   */
  requestPairingCode(platform: string, userId: string, options?: PairingCodeRequestOptions): Promise<PairingCodeOutcome>;
  /**
   * Approves a pending code (matched case-insensitively, ignoring spaces and dashes). On
   * success the sender is approved and every pending code of theirs on the platform is removed.
   * An unknown, expired or malformed code is a failed approval; the 5th failure locks the
   * platform's approvals for an hour (that call still answers `unknown-code`; later ones
   * `locked-out`, even with a right code). Of concurrent approvals of one code, exactly one wins.
   */
  approvePairingCode(platform: string, code: string, options?: PairingApproveOptions): Promise<PairingApproveOutcome>;
  /** Whether the person is approved on the platform. */
  isPairingApproved(platform: string, userId: string): Promise<boolean>;
  /** Pending (unexpired) codes and approved people, of one platform or all. */
  listPairing(options?: ListPairingOptions): Promise<PairingList>;
  /** Removes an approval; `true` when there was one. Their next message is treated as a stranger's. */
  revokePairing(platform: string, userId: string): Promise<boolean>;
}

/**
 * Everything a chat gateway keeps beside the transcripts: routing entries, identity
 * aliases, inbound queues, leases, handoffs, pairing and inbound claims.
 */
export interface GatewayState extends RouteStore, AliasStore, QueueStore, LeaseStore, HandoffStore, PairingStore, InboundClaimStore {}

/** Execution sessions: the stored results of agent and workflow runs (see `threadline/executions`). */
export interface ExecutionStore {
  /**
   * Applies puts and deletions of execution sessions in one transaction and returns what it
   * stored and deleted, or `null` (nothing written) when an `expectedVersion` did not hold.
   * A put keeps an existing record's `createdAt`; a deletion takes the record's steps with it.
   * Keeps `unitUpdatedAt` and the listing totals up to date.
   */
  writeExecutions(change: ExecutionChange): Promise<ExecutionChangeResult | null>;
  /** The execution session with its result, or `null`. */
  getExecution(id: string): Promise<ExecutionRecord | null>;
  /** Records by id prefix, base id or parent, in id order, at most `limit` (index-backed). */
  findExecutions(options: FindExecutionsOptions): Promise<ExecutionSummary[]>;
  /**
   * A page of records, newest `updatedAt` first, with a keyset cursor and the `total` after
   * filtering (index-backed; the total is kept on write, so it costs one row read).
   */
  listExecutions(options?: ListExecutionsOptions): Promise<Page<ExecutionSummary> & { total: number }>;
  /** Records without a parent (retention units), newest `unitUpdatedAt` first. */
  listExecutionUnits(options?: ListExecutionUnitsOptions): Promise<ExecutionSummary[]>;
}

/**
 * Which of a person's two memories (hermes-agent's files): `memory` is the agent's own notes
 * (hermes' `MEMORY.md`), `user` is what it knows about the person (hermes' `USER.md`).
 */
export type MemoryKind = "memory" | "user";

/**
 * Whose memory: a person. The gateway owner (`gateway.owner`) is
 * `{ platform: "owner", userId: "owner" }`; anyone else is their platform and canonical
 * (alias-resolved) user id. Both are non-empty ids of at most 256 characters without
 * control characters.
 */
export interface MemoryOwner {
  platform: string;
  userId: string;
}

/** A person's memory of one kind, as stored. */
export interface MemoryRecord {
  owner: MemoryOwner;
  kind: MemoryKind;
  /** The entries in order (hermes' `§`-separated entries); each non-empty. */
  entries: string[];
  /** Characters (Unicode code points) of the entries joined by `"\n§\n"`: what the limit counts. */
  chars: number;
  /** When it was last written, in epoch milliseconds (like pairing times). */
  updatedAt: number;
  /** Starts at 1 and grows by one with every write (optimistic concurrency: pass it as `expectedVersion`). */
  version: number;
}

/** What {@link MemoryStore.writeMemory} writes. */
export interface MemoryWrite {
  owner: MemoryOwner;
  kind: MemoryKind;
  /** The new entries (replacing all of them; `[]` keeps an empty record). */
  entries: string[];
  /** The version the caller read; `null` means the record must not exist yet. */
  expectedVersion: number | null;
  /** The write time in epoch milliseconds (default: now). */
  now?: number;
}

/** Options of {@link MemoryStore.listMemories}. */
export interface ListMemoriesOptions {
  /** Only this user id's records (a tenant sees only its own). */
  userId?: string;
  /** Only this platform's records (`"owner"` for the gateway owner). */
  platform?: string;
  /** Page size, 1 to 200 (default 50). */
  limit?: number;
  /** The `nextCursor` of the previous page, with the same filters. */
  cursor?: string | null;
}

/**
 * Per-person memory (hermes-agent's `MEMORY.md` and `USER.md`, kept in the database): two
 * small bounded lists of entries per person, written by the `memory` tool and shown in that
 * person's context prompt only. Limits are in characters over the entries joined by
 * `"\n§\n"`: {@link MEMORY_CHAR_LIMIT} for `memory`, {@link USER_CHAR_LIMIT} for `user`.
 */
export interface MemoryStore {
  /** The person's memory of `kind`, or `null` when none was written. */
  getMemory(owner: MemoryOwner, kind: MemoryKind): Promise<MemoryRecord | null>;
  /**
   * Replaces the entries when the stored version is `expectedVersion` (`null`: when there is
   * no record yet) and returns the new record; returns `null`, writing nothing, on a version
   * conflict. Throws {@link InvalidInputError} naming the limit when the entries are too long,
   * and for an empty entry or an entry holding a line that is only `§` (the separator).
   */
  writeMemory(write: MemoryWrite): Promise<MemoryRecord | null>;
  /** Deletes one kind or (without `kind`) both; returns how many records were removed. */
  clearMemory(owner: MemoryOwner, kind?: MemoryKind): Promise<number>;
  /**
   * Records, newest `updatedAt` first, with a keyset cursor; `userId` and `platform` filter
   * (a tenant key sees only its own userId's records).
   */
  listMemories(options?: ListMemoriesOptions): Promise<Page<MemoryRecord>>;
}

/** hermes' `MEMORY.md` limit: characters of the `memory` entries joined by `"\n§\n"`. */
export const MEMORY_CHAR_LIMIT = 2200;
/** hermes' `USER.md` limit: characters of the `user` entries joined by `"\n§\n"`. */
export const USER_CHAR_LIMIT = 1375;

/** Small named values kept in the database (settings and markers, e.g. the gateway's home channels). */
export interface MetaStore {
  /** The value stored under `key`, or `null`. */
  getMeta(key: string): Promise<string | null>;
  /** Stores `value` under `key` (replacing any value). */
  setMeta(key: string, value: string): Promise<void>;
  /** Removes `key`; returns whether it existed. */
  deleteMeta(key: string): Promise<boolean>;
}

/**
 * The database as a whole: what it is and where it lives, export and import, retention,
 * totals and insights, and closing it. What the CLI's maintenance commands, the HTTP
 * server's export and stats routes and the process that owns the database call.
 */
export interface StoreMaintenance {
  readonly capabilities: StoreCapabilities;
  /** Where the data lives (a file path, or a URL without its password). */
  readonly location: string;

  // --- export / import ------------------------------------------------------

  /** Streams sessions as records, in constant memory. */
  exportSessions(options?: ExportOptions): AsyncIterable<SessionRecord>;
  /**
   * The same export as JSON Lines, ready to write: each item is one record's line as UTF-8 bytes,
   * ending in `\n`, byte for byte `JSON.stringify(record) + "\n"` of what {@link exportSessions}
   * yields. Faster where the database writes the lines itself (SQLite), in constant memory (one
   * line at a time). Write them with `writeLines`.
   */
  exportSessionLines(options?: ExportOptions): AsyncIterable<Uint8Array>;
  /** Imports JSONL lines (as exported). Bad lines are reported and skipped; existing sessions are skipped. */
  importSessions(lines: AsyncIterable<string> | Iterable<string>): Promise<ImportReport>;

  // --- retention ------------------------------------------------------------

  /**
   * Deletes ended sessions whose last activity is older than N days, in batches of short
   * transactions (other writers run between them); returns how many.
   */
  pruneSessions(options: PruneOptions): Promise<number>;
  /** Prunes at most once per interval across all processes; `ran` says whether this call did. */
  autoPrune(options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }>;

  // --- totals ---------------------------------------------------------------

  /**
   * Database totals. `{ searchIndexBytes: false }` skips measuring the search index (on SQLite a walk of
   * every index page, about a second on a 1 GB file) and reports it as `null`.
   */
  getStats(options?: { searchIndexBytes?: boolean }): Promise<StoreStats>;
  /**
   * Token usage, cost, tool calls and activity of the sessions started in a period (default:
   * the last 30 days), by model, source and tool, with the longest and costliest sessions.
   * Answered from kept aggregates (session columns and a per-session tool tally), never by
   * reading messages. Invalid options throw {@link InvalidInputError}.
   */
  getInsights(options?: InsightsOptions): Promise<Insights>;

  /** Finishes pending writes and closes the database. Further calls throw {@link StoreClosedError}. */
  close(): Promise<void>;
}

/**
 * The session storage contract: every role in one object, as `openSessionDB` returns it and
 * every backend implements it. Every method is async; every write is durable when its
 * promise resolves. One instance may be shared by any number of concurrent callers in a
 * process; several processes may share one database. Code that uses only part of it asks
 * for that role ({@link SessionHistory}, {@link SessionSearch}, {@link GatewayState} and its
 * parts, {@link ExecutionStore}, {@link MemoryStore}, {@link MetaStore}, {@link StoreMaintenance}).
 */
export interface SessionDB extends SessionHistory, SessionSearch, GatewayState, ExecutionStore, MemoryStore, MetaStore, StoreMaintenance {}
