/**
 * Building the messages of a model request within a token budget: the newest whole turns
 * that fit, the session's compression summary pinned first, and at the very least the
 * newest user message. Replaces the fixed "last N messages" window.
 *
 * The rules:
 * - A turn starts at a user message and runs to the next one (the assistant's replies, its
 *   tool calls and their results). Turns are taken whole, newest first, while they fit, so
 *   a reply is never cut mid-turn and a tool call is never sent without its results.
 * - The summary a compression continuation starts from (its first message, a user message
 *   whose `platformMessageId` is `summary:<the session's parent id>`) is kept first whenever it
 *   fits beside the newest turn, however many messages in between are left out.
 * - When even the newest turn does not fit, its user message is sent alone; when that does
 *   not fit either, its text is cut in the middle with a visible marker
 *   ({@link TRUNCATION_MARKER}). A request is never empty while the session has a user message.
 * - `historyLimit` (the gateway's `gateway.historyLimit`) caps the number of messages on top
 *   of the budget; the newest turn and the summary are not counted against it.
 *
 * Every message of the session is read (the whole-session count is what compression compares
 * with its threshold); counting is what costs, and a {@link MessageTokenCache} remembers each
 * message's count so a long session is counted once, not at every turn.
 *
 * @module
 */
import {
  InvalidInputError,
  SUMMARY_MESSAGE_PREFIX,
  syntheticMessageKind,
  toConversationMessage,
  type ConversationMessage,
  type Message,
  type SessionHistory,
} from "../store/index.js";
import { REPLY_PRIMING_TOKENS, tokenCounterFor, type TokenCounter } from "./token-count.js";

/** Options of {@link buildContext}. */
export interface ContextBudgetOptions {
  /** Tokens the messages may take (window − reserved output − system/context prompt − tool schemas). */
  budget: number;
  /** Counter for the session's model (default: `tokenCounterFor` the session's recorded model). */
  counter?: TokenCounter;
  /** Extra cap on the number of messages (`gateway.historyLimit`); default none. */
  historyLimit?: number;
  /**
   * Remembers message counts between calls (default: none, every message is counted). One
   * cache belongs to one database: message ids are only unique within it.
   */
  cache?: MessageTokenCache;
}

/** What {@link buildContext} chose. */
export interface BuiltContext {
  /** The messages to send, oldest first: the summary (when any), then the newest whole turns that fit. */
  messages: ConversationMessage[];
  /** Tokens of `messages` (`countMessages`, with the reply priming). */
  tokens: number;
  /** Tokens of the whole visible conversation of the session (what compression compares with its threshold). */
  fullTokens: number;
  /** Visible messages of the session. */
  fullCount: number;
  /** Messages of the session left out of `messages`. */
  dropped: number;
  /** `true` when the newest user message was cut to fit (see {@link TRUNCATION_MARKER}). */
  truncated: boolean;
  /** `true` when the session's compression summary is the first of `messages`. */
  summaryPinned: boolean;
}

/** Put in place of the middle of a user message too long for the budget. */
export const TRUNCATION_MARKER = "\n\n[… part of this message was cut: it is longer than the model's context window allows …]\n\n";

/** A session's whole conversation as last counted: its newest message id, its visible messages and their tokens. */
export interface SessionTally {
  lastId: number;
  count: number;
  /** Tokens of the messages (without the reply priming). */
  tokens: number;
}

/** Sessions whose tally a {@link MessageTokenCache} keeps. */
const TALLIED_SESSIONS = 10_000;

/** Counts of not yet stored messages a {@link MessageTokenCache} keeps (see `countUnstored`). */
const RECENT_UNSTORED = 1_000;

/** Message counts remembered by a {@link MessageTokenCache} unless told otherwise. */
export const DEFAULT_TOKEN_CACHE_ENTRIES = 100_000;

/**
 * Per-message token counts, remembered across {@link buildContext} calls (least recently
 * used first out), and each session's whole-conversation tally. Keyed by counter and message
 * id (ids are unique within a database): one cache per database.
 */
export class MessageTokenCache {
  readonly #max: number;
  readonly #counts = new Map<string, number>();
  readonly #tallies = new Map<string, SessionTally>();
  /** Counts of plain messages counted before they were stored, by counter, role and text. */
  readonly #recent = new Map<string, number>();
  readonly #counterIds = new WeakMap<TokenCounter, number>();
  #nextCounterId = 1;

  /** `maxEntries`: how many message counts to remember (default {@link DEFAULT_TOKEN_CACHE_ENTRIES}). */
  constructor(maxEntries: number = DEFAULT_TOKEN_CACHE_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new InvalidInputError(`MessageTokenCache: maxEntries must be a whole number ≥ 1 (got ${JSON.stringify(maxEntries)}).`, { field: "maxEntries" });
    }
    this.#max = maxEntries;
  }

  /** Counts remembered now. */
  get size(): number {
    return this.#counts.size;
  }

  /** The whole-conversation tally of a session for a counter (see {@link buildContext}). */
  tally(counter: TokenCounter, sessionId: string): SessionTally | undefined {
    return this.#tallies.get(`${this.#counterId(counter)}\u0000${sessionId}`);
  }

  /** Records a session's whole-conversation tally. */
  setTally(counter: TokenCounter, sessionId: string, tally: SessionTally): void {
    const key = `${this.#counterId(counter)}\u0000${sessionId}`;
    this.#tallies.delete(key);
    this.#tallies.set(key, tally);
    if (this.#tallies.size > TALLIED_SESSIONS) this.#tallies.delete(this.#tallies.keys().next().value!);
  }

  /**
   * The tokens of a message about to be stored (a turn's reply): counted now, and remembered so
   * that its first {@link MessageTokenCache.count} once stored costs no second count. Only plain
   * text messages (no tool calls, no name, string content) are remembered.
   */
  countUnstored(counter: TokenCounter, shaped: ConversationMessage): number {
    const tokens = counter.countMessage(shaped);
    const key = this.#recentKey(counter, shaped);
    if (key !== null) {
      this.#recent.delete(key);
      this.#recent.set(key, tokens);
      if (this.#recent.size > RECENT_UNSTORED) this.#recent.delete(this.#recent.keys().next().value!);
    }
    return tokens;
  }

  /** The key of a plain text message in {@link MessageTokenCache.#recent}, or `null`. */
  #recentKey(counter: TokenCounter, shaped: ConversationMessage): string | null {
    if (typeof shaped.content !== "string" || shaped.tool_calls !== undefined || shaped.name !== undefined) return null;
    return `${this.#counterId(counter)}\u0000${shaped.role}\u0000${shaped.content}`;
  }

  #counterId(counter: TokenCounter): number {
    let counterId = this.#counterIds.get(counter);
    if (counterId === undefined) {
      counterId = this.#nextCounterId++;
      this.#counterIds.set(counter, counterId);
    }
    return counterId;
  }

  /** The tokens of a stored message, counted once per counter. */
  count(counter: TokenCounter, message: Message, shaped: ConversationMessage): number {
    const key = `${this.#counterId(counter)}\u0000${message.id}`;
    const known = this.#counts.get(key);
    if (known !== undefined) {
      this.#counts.delete(key);
      this.#counts.set(key, known);
      return known;
    }
    // Counted just before it was stored (see countUnstored): the same text, not counted again.
    const recentKey = this.#recentKey(counter, shaped);
    const recent = recentKey === null ? undefined : this.#recent.get(recentKey);
    if (recent !== undefined) this.#recent.delete(recentKey!);
    const tokens = recent ?? counter.countMessage(shaped);
    this.#counts.set(key, tokens);
    if (this.#counts.size > this.#max) this.#counts.delete(this.#counts.keys().next().value!);
    return tokens;
  }
}

/** A run of messages sent together or not at all: a user message and what answered it. */
interface Turn {
  start: number;
  end: number;
  tokens: number;
}

/** Messages of the first newest-first page read (each further page is four times larger). */
export const FIRST_PAGE_MESSAGES = 256;

/** What one attempt on a page of the transcript came to. */
type Attempt = { kind: "done"; result: BuiltContext } | { kind: "more" } | { kind: "all" };

/**
 * The messages of a session's next model request within `options.budget` tokens (see the
 * module description for the rules). Throws {@link InvalidInputError} for a budget that is
 * not a number ≥ 0.
 *
 * With a `cache`, the transcript is read newest first, a page at a time (256 messages, then
 * four times more while older turns still fit), and the whole conversation's count is kept
 * per session and brought up to date with the new messages only; it is counted afresh when
 * the transcript changed otherwise (an undo, a restore). Without one, every message is read
 * and counted.
 *
 * @example
 * const counter = await tokenCounterFor("gpt-4o-mini");
 * const built = await buildContext(db, sessionId, { budget: 100_000, counter });
 * await agent.runTurn({ messages: built.messages, contextPrompt, signal, sessionId });
 */
export async function buildContext(
  db: Pick<SessionHistory, "getMessages" | "getSession">,
  sessionId: string,
  options: ContextBudgetOptions,
): Promise<BuiltContext> {
  const { budget, historyLimit } = options;
  if (typeof budget !== "number" || Number.isNaN(budget) || budget < 0) {
    throw new InvalidInputError(`buildContext: budget must be a number of tokens ≥ 0 (got ${JSON.stringify(budget)}).`, { field: "budget" });
  }
  if (historyLimit !== undefined && (!Number.isInteger(historyLimit) || historyLimit < 1)) {
    throw new InvalidInputError(`buildContext: historyLimit must be a whole number of messages ≥ 1 (got ${JSON.stringify(historyLimit)}).`, {
      field: "historyLimit",
    });
  }
  const session = await db.getSession(sessionId);
  const counter = options.counter ?? (await tokenCounterFor(session?.model ?? null));
  const reader: PageReader = {
    db,
    sessionId,
    parentId: session?.parentSessionId ?? null,
    total: session?.messageCount ?? null,
    counter,
    cache: options.cache,
    budget,
    historyLimit,
  };
  let size = options.cache === undefined || session === null ? Infinity : FIRST_PAGE_MESSAGES;
  for (;;) {
    const all = !(size < (reader.total ?? Infinity));
    const page = all ? await db.getMessages(sessionId) : await db.getMessages(sessionId, { lastMessages: size });
    const attempt = await choose(reader, page, all || page.length < size);
    if (attempt.kind === "done") return attempt.result;
    size = attempt.kind === "all" ? Infinity : size * 4;
  }
}

/** What {@link choose} works with besides the page. */
interface PageReader {
  db: Pick<SessionHistory, "getMessages">;
  sessionId: string;
  /** The session's parent: only `summary:<parent>` is the session's summary. */
  parentId: string | null;
  /** The session's visible messages as its record counts them (`null`: unknown). */
  total: number | null;
  counter: TokenCounter;
  cache: MessageTokenCache | undefined;
  budget: number;
  historyLimit: number | undefined;
}

/** Whether a stored message is the summary of the session whose parent is `parentId`. */
function isSessionSummary(message: Message | undefined, parentId: string | null): boolean {
  // The summary is pinned only when it is the one its compression wrote (`summary:<parent id>`):
  // a first message that merely carries a `summary:` id (a platform message id a client chose) ages
  // out like any other, so nobody can keep their text in every later request by naming it so.
  return (
    message !== undefined &&
    parentId !== null &&
    syntheticMessageKind(message) === "summary" &&
    message.platformMessageId === `${SUMMARY_MESSAGE_PREFIX}${parentId}`
  );
}

/**
 * The context from the newest `page` of the transcript (`complete`: it is the whole of it), or
 * `more` when older messages could still fit (or the newest turn starts before the page), or
 * `all` when the whole conversation's count cannot be brought up to date from the page.
 */
async function choose(reader: PageReader, page: Message[], complete: boolean): Promise<Attempt> {
  const { counter, cache, budget, historyLimit } = reader;
  const shaped = page.map(toConversationMessage);
  const tokens = page.map((message, i) => (cache === undefined ? counter.countMessage(shaped[i]!) : cache.count(counter, message, shaped[i]!)));
  const pageTokens = tokens.reduce((sum, t) => sum + t, 0);

  // The whole conversation: counted from the page when it is all, else brought up to date from the tally.
  let fullCount: number;
  let messageTokens: number;
  if (complete) {
    fullCount = page.length;
    messageTokens = pageTokens;
  } else {
    const tally = cache?.tally(counter, reader.sessionId);
    if (tally === undefined || reader.total === null) return { kind: "all" };
    let added = 0;
    let addedTokens = 0;
    let seen = false;
    for (let i = 0; i < page.length; i++) {
      if (page[i]!.id === tally.lastId) seen = true;
      else if (page[i]!.id > tally.lastId) {
        added += 1;
        addedTokens += tokens[i]!;
      }
    }
    // Anything but appends since the tally (an undo, a restore, a replaced transcript): count afresh.
    if (!seen || tally.count + added !== reader.total) return { kind: "all" };
    fullCount = reader.total;
    messageTokens = tally.tokens + addedTokens;
  }
  if (page.length > 0) cache?.setTally(counter, reader.sessionId, { lastId: page.at(-1)!.id, count: fullCount, tokens: messageTokens });
  const fullTokens = messageTokens + REPLY_PRIMING_TOKENS;
  const result = (messages: ConversationMessage[], used: number, extra: { truncated?: boolean; summaryPinned?: boolean } = {}): Attempt => ({
    kind: "done",
    result: {
      messages,
      tokens: used,
      fullTokens,
      fullCount,
      dropped: fullCount - messages.length,
      truncated: extra.truncated ?? false,
      summaryPinned: extra.summaryPinned ?? false,
    },
  });
  if (page.length === 0) return result([], REPLY_PRIMING_TOKENS);

  // The session's summary: the page's first message when the page is everything, else read alone.
  let summary: { message: ConversationMessage; tokens: number } | null = null;
  let first = 0;
  if (complete) {
    if (isSessionSummary(page[0], reader.parentId)) {
      summary = { message: shaped[0]!, tokens: tokens[0]! };
      first = 1;
    }
  } else if (reader.parentId !== null) {
    const head = (await reader.db.getMessages(reader.sessionId, { limit: 1 }))[0];
    if (head !== undefined && isSessionSummary(head, reader.parentId)) {
      const message = toConversationMessage(head);
      summary = { message, tokens: cache === undefined ? counter.countMessage(message) : cache.count(counter, head, message) };
    }
  }
  const turns = turnsOf(page, tokens, first);
  // The page's first turn is cut off when it does not start at a user message and older messages exist.
  const partialFirst = !complete && page[first]?.role !== "user";
  let left = budget - REPLY_PRIMING_TOKENS;

  // The newest turn, whole if it fits; else its user message alone; else that message cut.
  const newest = turns.at(-1);
  if (newest === undefined) {
    // Only the summary is stored.
    return summary !== null && summary.tokens <= left
      ? result([summary.message], REPLY_PRIMING_TOKENS + summary.tokens, { summaryPinned: true })
      : result([], REPLY_PRIMING_TOKENS);
  }
  if (partialFirst && turns.length === 1) return { kind: "more" };
  let chosenStart = newest.start;
  let tail: ConversationMessage[];
  let truncated = false;
  if (newest.tokens <= left) {
    tail = shaped.slice(newest.start, newest.end);
    left -= newest.tokens;
  } else if (page[newest.start]!.role !== "user") {
    // No user message in the session to fall back on (a transcript of replies only).
    return result([], REPLY_PRIMING_TOKENS);
  } else if (tokens[newest.start]! <= left) {
    tail = [shaped[newest.start]!];
    left -= tokens[newest.start]!;
  } else {
    const cut = truncateToFit(shaped[newest.start]!, left, counter);
    tail = [cut.message];
    left -= cut.tokens;
    truncated = true;
  }
  if (truncated || tail.length < newest.end - newest.start) {
    // The newest turn alone overflows: nothing older is sent (the summary neither: it would not fit).
    return result(tail, budget - left, { truncated });
  }

  // The summary next: it stands for everything before the kept turns.
  const summaryPinned = summary !== null && summary.tokens <= left;
  if (summaryPinned) left -= summary!.tokens;

  // Older turns, newest first, while they fit (and while the message cap allows).
  let cap = historyLimit === undefined ? Infinity : historyLimit - (newest.end - newest.start);
  let stopped = false;
  for (let t = turns.length - 2; t >= 0; t--) {
    const turn = turns[t]!;
    const size = turn.end - turn.start;
    if (turn.tokens > left || size > cap) {
      stopped = true;
      break;
    }
    // A turn cut off by the page's start: its older part may not fit; read further back.
    if (t === 0 && partialFirst) return { kind: "more" };
    left -= turn.tokens;
    cap -= size;
    chosenStart = turn.start;
  }
  // Everything on the page fits and older messages exist: they may fit too.
  if (!stopped && !complete && chosenStart === first) return { kind: "more" };
  const messages = [...(summaryPinned ? [summary!.message] : []), ...shaped.slice(chosenStart, newest.start), ...tail];
  return result(messages, budget - left, { summaryPinned });
}

/**
 * Splits `stored[first..]` into turns: each user message starts one. Messages before the
 * first user message (replies whose question was removed) form a turn of their own.
 */
function turnsOf(stored: readonly Message[], tokens: readonly number[], first: number): Turn[] {
  const turns: Turn[] = [];
  let current: Turn | null = null;
  for (let i = first; i < stored.length; i++) {
    if (current === null || stored[i]!.role === "user") {
      if (current !== null) turns.push(current);
      current = { start: i, end: i, tokens: 0 };
    }
    current.end = i + 1;
    current.tokens += tokens[i]!;
  }
  if (current !== null) turns.push(current);
  return turns;
}

/** The text of a message's content (text parts joined; other parts left out). */
function textOf(content: ConversationMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => ((part as { text?: unknown }).text === undefined ? "" : String((part as { text?: unknown }).text))).join("");
}

/**
 * A user message cut to at most `left` tokens: its head and its tail kept, the middle
 * replaced with {@link TRUNCATION_MARKER} (images and other non-text parts are left out).
 * The longest cut that fits is found by bisection on the number of characters kept.
 */
function truncateToFit(message: ConversationMessage, left: number, counter: TokenCounter): { message: ConversationMessage; tokens: number } {
  const text = textOf(message.content);
  const make = (keep: number): ConversationMessage => {
    const head = Math.ceil(keep / 2);
    const content = `${text.slice(0, head)}${TRUNCATION_MARKER}${text.slice(text.length - (keep - head))}`;
    return { ...message, content };
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (counter.countMessage(make(mid)) <= left) lo = mid;
    else hi = mid - 1;
  }
  const cut = make(lo);
  return { message: cut, tokens: counter.countMessage(cut) };
}
