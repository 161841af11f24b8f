/**
 * The {@link SessionHistory} role (sessions and their transcripts, titles, lineage and listing)
 * and the records it reads and writes: sessions, messages, usage. Part of the storage contract
 * (see `./index.ts`).
 *
 * @module
 */
import type { FencedWriteOptions, LeaseFence } from "./leases.js";
import type { Page } from "./page.js";

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

/** What {@link SessionHistory.rewind} did. */
export interface RewindResult {
  /** How many messages were hidden. */
  rewound: number;
  /** How many user turns were undone (fewer than asked when the session has fewer). */
  turnsUndone: number;
  /** The text of the earliest undone user message (to put back in the input box), or `null`. */
  targetText: string | null;
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
