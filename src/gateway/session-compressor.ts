/**
 * Automatic compression in the gateway, and `/compress [focus]` on the same code.
 *
 * After a turn's reply has been sent, the session is checked: when its whole conversation
 * passes the threshold of the model's window (or the hard message limit), a compression
 * starts in the background. It never delays a reply and never blocks the next message:
 * the summary is written detached (one per session at a time, across replicas: a lease on
 * `compress:<key>`), and the switch to the child happens between turns — a routing write
 * made only while no turn is marked on the entry, guarded by the parent's newest message, so
 * a turn that ran meanwhile is copied into the child and nothing is lost. A restart
 * mid-compression leaves nothing half-made (the child and the switch are one write); the
 * next turn simply starts it again.
 *
 * @module
 */
import type { Agent, TurnSpeaker } from "../agents/index.js";
import { ConflictError, ThreadlineError, type ConversationMessage, type Lease, type Session } from "../store/index.js";
import {
  buildContinuation,
  cleanFocus,
  contextWindowFor,
  DEFAULT_COMPRESSION_SETTINGS,
  draftCompression,
  droppedSummaryText,
  reservedOutputTokens,
  summaryPromptMessages,
  thresholdTokens,
  tokenCounterFor,
  type CompressionDraft,
  type CompressionSettings,
  type TokenCounter,
} from "../context/index.js";
import type { GatewayLogger } from "./gateway-logger.js";
import type { OutboundMessage } from "./adapter.js";
import type { SessionEntry } from "./session-entry.js";
import type { SessionSource } from "./session-source.js";
import type { SessionRouter } from "./session-router.js";
import { replyTextOf } from "./turn-messages.js";

/** What the compressor needs from its runner. */
export interface CompressorHost {
  readonly store: SessionRouter;
  /** The agent of a key, marked mid-turn (release it with `endAgentTurn`). */
  agentFor(key: string, entry: SessionEntry): Promise<Agent>;
  endAgentTurn(key: string): void;
  notify(source: SessionSource, text: string, inReplyTo: string[], kind?: OutboundMessage["kind"]): Promise<void>;
  readonly log: GatewayLogger;
  /**
   * Whom the before-compression turn saves for (the session's person; nobody in a shared
   * group) and that person's memory section, given to the turn as its context.
   */
  resetContext?(entry: SessionEntry): Promise<{ speaker?: TurnSpeaker; contextPrompt?: string }>;
}

/** Options of a {@link SessionCompressor}. */
export interface SessionCompressorOptions {
  settings?: CompressionSettings;
  /** The model's context window in tokens (default: {@link contextWindowFor}, the table of well-known models, else 8,192). */
  contextWindow?: (model: string | null) => number;
  /**
   * Names this gateway among holders of compression leases (default: a random one). A name
   * that stays the same across restarts (`serve` uses `<gateway.replicaId>:compress`) lets a
   * restarted gateway take over at once the lease its previous run held when it died.
   */
  holder?: string;
  /** Milliseconds before each retry of a failed summary (default 1,000 and 4,000: three attempts). */
  retryDelaysMs?: readonly number[];
  /** Seconds a summary may take (default 120). */
  summaryTimeoutSeconds?: number;
  /** Seconds the agent's before-compression turn may take (0: none; default 60). */
  beforeResetTimeoutSeconds?: number;
}

/** The meta key that marks a session frozen after its summary failed. */
function frozenMetaKey(sessionId: string): string {
  return `compression.frozen:${sessionId}`;
}

/** The lease key that makes one summary per session key run at a time. */
export function compressionLeaseKey(key: string): string {
  return `compress:${key}`;
}

const LEASE_TTL_SECONDS = 60;
/**
 * A conversation the turn measured below this share of the threshold is not checked after the
 * turn (the turn's count and the compressor's may differ slightly: the margin covers that).
 */
const SURE_NOT_DUE_SHARE = 0.9;
/** Messages read per page when the whole conversation is counted (a short page is the last). */
const COUNT_PAGE = 1000;
/** How long a finished summary waits for the session to be between turns before it is given up. */
const SWITCH_PATIENCE_MS = 10 * 60_000;

/** What a compression did (for `/compress`). */
export type CompressOutcome =
  | { status: "compressed"; entry: SessionEntry; title: string | null; summarized: number; kept: number; placeholder: boolean }
  | { status: "nothing" }
  | { status: "busy" };

/** A summary's failures, all attempts. */
class SummaryFailed extends ThreadlineError {
  constructor(readonly last: unknown) {
    super("TL_ERR_AGENT", "The summary failed after its retries.", { cause: last });
  }
}

/**
 * Compresses the gateway's sessions (see the module description). One per runner.
 */
export class SessionCompressor {
  readonly settings: CompressionSettings;
  readonly #host: CompressorHost;
  readonly #window: (model: string | null) => number;
  readonly #holder: string;
  readonly #retryDelays: readonly number[];
  readonly #summaryTimeoutMs: number;
  readonly #flushTimeoutMs: number;
  /** Compressions whose summary is written, switching to their child (see {@link SessionCompressor.beforeTurn}). */
  readonly #switching = new Map<string, Promise<void>>();
  /** Background compressions by key. */
  readonly #jobs = new Map<string, Promise<void>>();
  /**
   * Sessions frozen after a failed summary (`abortOnSummaryFailure`), until `/compress` or
   * `/new`. Kept in the database too (meta `compression.frozen:<session id>`), so a restart
   * keeps them frozen; `#checked` holds sessions this process has looked up and found live.
   */
  readonly #frozen = new Set<string>();
  readonly #checked = new Set<string>();
  /** Token totals counted so far per session (counted incrementally). */
  readonly #counted = new Map<string, { lastId: number; count: number; tokens: number; counter: TokenCounter }>();
  readonly #abort = new AbortController();

  constructor(host: CompressorHost, options: SessionCompressorOptions = {}) {
    this.#host = host;
    this.settings = options.settings ?? { ...DEFAULT_COMPRESSION_SETTINGS };
    this.#window = options.contextWindow ?? ((model) => contextWindowFor(model).tokens);
    this.#holder = options.holder ?? `compressor-${process.pid}-${Math.random().toString(16).slice(2, 10)}`;
    this.#retryDelays = options.retryDelaysMs ?? [1000, 4000];
    this.#summaryTimeoutMs = (options.summaryTimeoutSeconds ?? 120) * 1000;
    this.#flushTimeoutMs = (options.beforeResetTimeoutSeconds ?? 60) * 1000;
  }

  /**
   * Whether a session is frozen (a failed summary with `abortOnSummaryFailure`). The first
   * question about a session in this process reads the database; later ones are answered
   * from memory.
   */
  async isFrozen(sessionId: string): Promise<boolean> {
    if (this.#frozen.has(sessionId)) return true;
    if (this.#checked.has(sessionId)) return false;
    const stored = await this.#host.store.db.getMeta(frozenMetaKey(sessionId));
    if (stored !== null) this.#frozen.add(sessionId);
    else {
      if (this.#checked.size >= 10_000) this.#checked.clear();
      this.#checked.add(sessionId);
    }
    return stored !== null;
  }

  /** Keys with a compression running in the background. */
  get running(): number {
    return this.#jobs.size;
  }

  /** Resolves when the key's background compression (if any) is over. */
  async whenDone(key: string): Promise<void> {
    await this.#jobs.get(key);
  }

  /**
   * After a turn's reply was sent: starts a background compression when the session is due
   * (never awaited by the turn). `source` is where the notice goes.
   */
  afterTurn(
    key: string,
    entry: SessionEntry,
    source: SessionSource,
    turn: {
      windowFull?: boolean;
      /** The whole conversation as the turn measured it once its messages were stored: tokens and messages, the model counted for (see `ContextMeasure`). */
      measured?: { tokens: number; count: number; model: string | null };
    } = {},
  ): void {
    if (!this.settings.enabled || this.#abort.signal.aborted || this.#jobs.has(key)) return;
    // The turn measured the whole conversation: far below the threshold nothing is due, and the
    // check (reading the session and its new messages, counting them again) is skipped.
    const measured = turn.measured;
    if (
      turn.windowFull !== true &&
      measured !== undefined &&
      measured.count <= this.settings.hardMessageLimit &&
      measured.tokens < thresholdTokens(this.settings, this.#window(measured.model)) * SURE_NOT_DUE_SHARE
    ) {
      return;
    }
    const job = this.#background(key, entry, source, turn.windowFull === true)
      .catch((error: unknown) => this.#host.log.warn({ err: error, key }, "automatic compression failed"))
      .finally(() => {
        if (this.#jobs.get(key) === job) this.#jobs.delete(key);
      });
    this.#jobs.set(key, job);
  }

  /** Stops background compressions (they write nothing once stopped) and waits for them. */
  async stop(): Promise<void> {
    this.#abort.abort();
    await Promise.all([...this.#jobs.values()]);
  }

  /**
   * Tokens of the session's whole conversation, counted incrementally. The one place that
   * measures the session (the context builder's `fullTokens` can replace it).
   */
  async contextTokens(sessionId: string, model: string | null, read?: Session | null): Promise<{ tokens: number; count: number }> {
    const db = this.#host.store.db;
    const session = read !== undefined && read?.id === sessionId ? read : await db.getSession(sessionId);
    if (session === null) return { tokens: 0, count: 0 };
    let cached = this.#counted.get(sessionId);
    if (cached === undefined || cached.count > session.messageCount) {
      cached = { lastId: 0, count: 0, tokens: 0, counter: await tokenCounterFor(model ?? session.model) };
    }
    for (;;) {
      const page = await db.getMessages(sessionId, { afterId: cached.lastId, limit: COUNT_PAGE });
      if (page.length === 0) break;
      for (const m of page) {
        cached.tokens += cached.counter.countMessage({
          role: m.role,
          content: m.content,
          ...(m.toolCalls ? { tool_calls: m.toolCalls } : {}),
        } as ConversationMessage);
        cached.count += 1;
        cached.lastId = m.id;
      }
      // A short page is the end: no further read to find nothing.
      if (page.length < COUNT_PAGE) break;
    }
    this.#counted.delete(sessionId);
    this.#counted.set(sessionId, cached);
    if (this.#counted.size > 1000) this.#counted.delete(this.#counted.keys().next().value!);
    return { tokens: cached.tokens, count: session.messageCount };
  }

  /** Why a session is due (`tokens`: past the threshold of its window; `count`: past the hard message limit), or `null`. */
  async isDue(sessionId: string, model: string | null, read?: Session | null): Promise<"tokens" | "count" | null> {
    const { tokens, count } = await this.contextTokens(sessionId, model, read);
    if (tokens >= thresholdTokens(this.settings, this.#window(model))) return "tokens";
    if (count > this.settings.hardMessageLimit) return "count";
    return null;
  }

  async #background(key: string, entry: SessionEntry, source: SessionSource, windowFull: boolean): Promise<void> {
    const db = this.#host.store.db;
    const session = await db.getSession(entry.sessionId);
    if (session === null || session.endedAt !== null || this.#frozen.has(session.id)) return;
    // A turn whose request already left messages out (the window less the reply's share, the
    // prompt and the tools is below the threshold) is due too: nothing is lost unsummarised.
    const due = (await this.isDue(session.id, session.model, session)) ?? (windowFull ? "tokens" : null);
    if (due === null) return;
    const outcome = await this.#compress(key, entry, source, { focus: null, manual: false, byCount: due === "count" });
    if (outcome.status === "compressed" && this.settings.notify) {
      const where = outcome.title === null ? `a new session (${outcome.entry.sessionId})` : `"${outcome.title}"`;
      await this.#host.notify(source, `Context compressed: continuing in ${where}.`, [], "notice");
    }
  }

  /** `/compress [focus]`: the same steps, now; the whole conversation is summarised when the head and tail hold all of it. */
  async compressNow(key: string, entry: SessionEntry, source: SessionSource, focus: string | null): Promise<CompressOutcome> {
    // A background check (or compression) of the key finishes first; then the entry is read again.
    for (let job = this.#jobs.get(key); job !== undefined; job = this.#jobs.get(key)) await job;
    const current = (await this.#host.store.getEntry(key)) ?? entry;
    let release: () => void = () => {};
    const job = new Promise<void>((resolve) => (release = resolve));
    this.#jobs.set(key, job);
    try {
      return await this.#compress(key, current, source, { focus: cleanFocus(focus), manual: true, byCount: false });
    } finally {
      release();
      if (this.#jobs.get(key) === job) this.#jobs.delete(key);
    }
  }

  async #compress(
    key: string,
    entry: SessionEntry,
    source: SessionSource,
    how: { focus: string | null; manual: boolean; byCount: boolean },
  ): Promise<CompressOutcome> {
    const db = this.#host.store.db;
    const leaseKey = compressionLeaseKey(key);
    const lease = await db.acquireLease(leaseKey, this.#holder, { ttlSeconds: LEASE_TTL_SECONDS });
    if (lease === null) return { status: "busy" };
    let current: Lease = lease;
    const renew = setInterval(
      () => {
        void db
          .renewLease(leaseKey, this.#holder, current.token, { ttlSeconds: LEASE_TTL_SECONDS })
          .then((renewed) => {
            if (renewed !== null) current = renewed;
          })
          .catch((error: unknown) => this.#host.log.warn({ err: error, key }, "renewing the compression lease failed"));
      },
      (LEASE_TTL_SECONDS * 1000) / 3,
    );
    renew.unref();
    try {
      const session = await db.getSession(entry.sessionId);
      if (session === null || session.endedAt !== null) return { status: "nothing" };
      const settings = this.settings;
      const draftOptions = {
        protectFirstN: settings.protectFirstN,
        protectLastN: settings.protectLastN,
        targetRatio: settings.targetRatio,
        threshold: settings.threshold,
        contextWindow: this.#window(session.model),
        whenAllKept: how.manual ? ("all" as const) : ("skip" as const),
        tailByCount: how.byCount,
      };
      let draft = await draftCompression(db, session.id, draftOptions);
      if (draft === null) return { status: "nothing" };
      await this.#flush(key, entry, draft);
      draft = (await draftCompression(db, session.id, draftOptions)) ?? draft;
      let summary: string;
      let placeholder = false;
      try {
        summary = await this.#summaryWithRetries(key, entry, draft, how);
      } catch (error) {
        if (how.manual || this.#abort.signal.aborted) throw error instanceof SummaryFailed ? error.last : error;
        const reason = error instanceof SummaryFailed ? error.last : error;
        this.#host.log.warn({ err: reason, key, sessionId: session.id }, "the compression summary failed after its retries");
        if (settings.abortOnSummaryFailure) {
          this.#frozen.add(session.id);
          await this.#host.store.db.setMeta(frozenMetaKey(session.id), String(this.#host.store.clock.now()));
          await this.#host.notify(
            source,
            "This conversation has grown too long and its summary failed, so it is paused: send /compress to try the summary again, or /new to start a fresh session.",
            [],
            "error",
          );
          return { status: "nothing" };
        }
        summary = droppedSummaryText(draft.plan.middleCount, draft.previousSummary);
        placeholder = true;
        await this.#host.notify(
          source,
          `The summary of this long conversation failed, so its ${draft.plan.middleCount} older messages were dropped from the model's context (they stay in the session history).`,
          [],
          "error",
        );
      }
      if (this.#abort.signal.aborted) return { status: "nothing" };
      const switched = await this.#switch(key, entry, draft, summary, current, how.manual);
      if (switched === null) return { status: "nothing" };
      if (this.#frozen.delete(session.id) || how.manual) await this.#host.store.db.deleteMeta(frozenMetaKey(session.id)).catch(() => false);
      this.#counted.delete(session.id);
      return { status: "compressed", entry: switched.entry, title: switched.entry.title, summarized: switched.summarized, kept: switched.kept, placeholder };
    } finally {
      clearInterval(renew);
      await db.releaseLease(leaseKey, this.#holder, current.token).catch(() => false);
    }
  }

  /** The agent's turn to save memories before the middle is summarised (only agents with a state-saving tool take it). */
  async #flush(key: string, entry: SessionEntry, draft: CompressionDraft): Promise<void> {
    if (this.#flushTimeoutMs <= 0) return;
    let agent: Agent;
    try {
      agent = await this.#host.agentFor(key, entry);
    } catch (error) {
      this.#host.log.warn({ err: error, key }, "no agent for the before-compression turn");
      return;
    }
    try {
      if (agent.beforeReset === undefined) return;
      const transcript = await this.#flushTranscript(draft);
      const signal = AbortSignal.any([AbortSignal.timeout(this.#flushTimeoutMs), this.#abort.signal]);
      const context = (await this.#host.resetContext?.(entry)) ?? {};
      const result = await agent.beforeReset({ sessionId: draft.session.id, transcript, reason: "compression", signal, ...context });
      // What it saved lives in its tools' store; the exchange itself is not part of the conversation.
      if (result?.usage) await this.#host.store.db.recordUsage(draft.session.id, result.usage);
    } catch (error) {
      this.#host.log.warn({ err: error, key }, "the before-compression turn failed; compressing anyway");
    } finally {
      this.#host.endAgentTurn(key);
    }
  }

  /**
   * The newest messages of the draft (at most 40) that fit the model's window beside the turn's
   * prompt, the person's memory and the tool schemas ({@link FLUSH_PROMPT_ALLOWANCE} tokens).
   */
  async #flushTranscript(draft: CompressionDraft): Promise<ConversationMessage[]> {
    const window = this.#window(draft.session.model);
    const counter = await tokenCounterFor(draft.session.model);
    const budget = window - reservedOutputTokens(window) - FLUSH_PROMPT_ALLOWANCE;
    const transcript: ConversationMessage[] = [];
    let tokens = 0;
    for (const m of draft.messages.slice(-40).reverse()) {
      // Text only: a tool result without its call (or a call without its result) is not a valid request.
      if ((m.role !== "user" && m.role !== "assistant") || typeof m.content !== "string" || m.content === "") continue;
      const message = { role: m.role, content: m.content } as ConversationMessage;
      const size = counter.countMessage(message);
      if (tokens + size > budget) break;
      transcript.unshift(message);
      tokens += size;
    }
    return transcript;
  }

  async #summaryWithRetries(key: string, entry: SessionEntry, draft: CompressionDraft, how: { focus: string | null; manual: boolean }): Promise<string> {
    const attempts = how.manual ? 1 : this.#retryDelays.length + 1;
    let last: unknown = null;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) {
        const wait = this.#retryDelays[attempt - 1] ?? 0;
        this.#host.log.info({ key, attempt, waitMs: wait }, "retrying the compression summary");
        if (!(await sleep(wait, this.#abort.signal))) break;
      }
      try {
        return await this.#summary(key, entry, draft, how.focus);
      } catch (error) {
        last = error;
        this.#host.log.warn({ err: error, key, attempt: attempt + 1 }, "a compression summary attempt failed");
        if (this.#abort.signal.aborted) break;
      }
    }
    throw new SummaryFailed(last);
  }

  /**
   * The summary of the draft's middle, each request within the summarising model's window (the
   * window less the reply's share). A middle too long for one request is summarised in parts,
   * oldest first, each part folding in the summary of the parts before it, so early facts are
   * kept; at most {@link MAX_SUMMARY_PARTS} parts (older messages beyond them are named as left out).
   */
  async #summary(key: string, entry: SessionEntry, draft: CompressionDraft, focus: string | null): Promise<string> {
    const model = this.settings.model ?? draft.session.model;
    const window = this.#window(model);
    const reserved = reservedOutputTokens(window);
    const budget = window - reserved;
    const counter = await tokenCounterFor(model);
    let previous = draft.previousSummary;
    for (const part of this.#summaryParts(
      draft.toSummarize,
      counter,
      budget - reserved - counter.countMessages(summaryPromptMessages([], { focus, previousSummary: null })),
    )) {
      previous = await this.#summaryCall(key, entry, draft, fitted(part, { focus, previousSummary: previous }, counter, budget));
    }
    return previous ?? "";
  }

  /** The middle cut into parts of at most `budget` tokens each (one part when it fits, or when the budget is too small to cut by). */
  #summaryParts(middle: ConversationMessage[], counter: TokenCounter, budget: number): ConversationMessage[][] {
    const total = middle.reduce((sum, m) => sum + counter.countMessage(m), 0);
    if (total <= budget || budget < 200) return [middle];
    const parts: ConversationMessage[][] = [];
    let part: ConversationMessage[] = [];
    let tokens = 0;
    for (const message of middle) {
      const size = counter.countMessage(message);
      if (part.length > 0 && tokens + size > budget) {
        parts.push(part);
        part = [];
        tokens = 0;
      }
      part.push(message);
      tokens += size;
    }
    if (part.length > 0) parts.push(part);
    // Past the bound, the oldest parts go (the request names them as left out).
    return parts.length <= MAX_SUMMARY_PARTS ? parts : [[...parts.slice(0, -MAX_SUMMARY_PARTS + 1).flat()], ...parts.slice(-MAX_SUMMARY_PARTS + 1)];
  }

  async #summaryCall(key: string, entry: SessionEntry, draft: CompressionDraft, messages: ConversationMessage[]): Promise<string> {
    const agent = await this.#host.agentFor(key, entry);
    try {
      const input: Parameters<Agent["runTurn"]>[0] = {
        messages,
        contextPrompt: "",
        signal: AbortSignal.any([AbortSignal.timeout(this.#summaryTimeoutMs), this.#abort.signal]),
        sessionId: draft.session.id,
        // A summary is text: a tool call in the middle of it would cut it short.
        noTools: true,
      };
      if (this.settings.model !== null) input.model = this.settings.model;
      const result = await agent.runTurn(input);
      if (result.usage) await this.#host.store.db.recordUsage(draft.session.id, result.usage).catch(() => undefined);
      const text = replyTextOf(result.messages).trim();
      if (text === "") throw new ConflictError("The model returned an empty summary.");
      return text;
    } finally {
      this.#host.endAgentTurn(key);
    }
  }

  /**
   * Switches the key to the child between turns: a routing write made only while no turn is
   * marked on the entry (a turn that started meanwhile is waited for, then copied into the
   * child), guarded by the parent's newest message and fenced by the compression lease.
   * `null` when the session moved on (`/new`, another compression) or the wait ran out.
   */
  async #switch(
    key: string,
    entry: SessionEntry,
    draft: CompressionDraft,
    summary: string,
    lease: Lease,
    manual: boolean,
  ): Promise<{ entry: SessionEntry; summarized: number; kept: number } | null> {
    let done: () => void = () => {};
    const switching = new Promise<void>((resolve) => (done = resolve));
    this.#switching.set(key, switching);
    try {
      return await this.#switchSteps(key, entry, draft, summary, lease, manual);
    } finally {
      if (this.#switching.get(key) === switching) this.#switching.delete(key);
      done();
    }
  }

  /**
   * Resolves once the key's compression has switched to its child, when one is ready to (its
   * summary written): a turn about to start waits for that one transaction (at most
   * {@link SWITCH_GATE_MS}) instead of appending to the parent, so a conversation that never
   * pauses still gets its compression. Resolves at once otherwise.
   */
  async beforeTurn(key: string): Promise<void> {
    const switching = this.#switching.get(key);
    if (switching === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([switching, new Promise<void>((resolve) => (timer = setTimeout(resolve, SWITCH_GATE_MS)))]);
    clearTimeout(timer);
  }

  async #switchSteps(
    key: string,
    entry: SessionEntry,
    draft: CompressionDraft,
    summary: string,
    lease: Lease,
    manual: boolean,
  ): Promise<{ entry: SessionEntry; summarized: number; kept: number } | null> {
    const { store } = this.#host;
    const started = Date.now();
    let wait = 20;
    for (;;) {
      if (this.#abort.signal.aborted) return null;
      const route = await store.db.getRoute(key);
      if (route === null || route.sessionId !== draft.session.id) return null;
      // A turn in progress appends to the parent: switch once it is over (a manual /compress runs between turns).
      if (route.turnStartedAt === null || manual) {
        const continuation = await buildContinuation(store.db, draft, summary, { at: store.clock.now() });
        const switched = await store.compressInto(
          key,
          { ...entry, sessionId: draft.session.id },
          {
            title: continuation.session.title ?? null,
            messages: continuation.messages,
            ifLastMessageId: continuation.ifLastMessageId,
            fence: { key: compressionLeaseKey(key), token: lease.token },
            fields: continuation.session,
          },
        );
        if (switched !== null) return { entry: switched, summarized: continuation.summarized, kept: continuation.kept };
        if (manual) throw new ConflictError("The session changed while it was being compressed; try /compress again.");
        wait = 50;
      }
      if (Date.now() - started > SWITCH_PATIENCE_MS) {
        this.#host.log.warn({ key }, "the session never paused between turns; the compression was given up (the next turn starts it again)");
        return null;
      }
      if (!(await sleep(wait, this.#abort.signal))) return null;
      // Turns wait for the switch (beforeTurn): the running one is the only one to outwait.
      wait = Math.min(wait * 2, 200);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    timer.unref();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** How long a turn waits at most for its key's compression to switch to the child (ms). */
const SWITCH_GATE_MS = 5000;

/** Tokens kept for the before-compression turn's prompt, memory and tool schemas beside its transcript. */
const FLUSH_PROMPT_ALLOWANCE = 1500;

/** Parts a middle is summarised in at most (a longer middle loses its oldest messages). */
const MAX_SUMMARY_PARTS = 8;

/** A summary request for `middle` that fits `budget` tokens: its oldest transcript is left out (and named) until it does. */
function fitted(
  middle: ConversationMessage[],
  request: { focus: string | null; previousSummary: string | null },
  counter: TokenCounter,
  budget: number,
): ConversationMessage[] {
  let messages = summaryPromptMessages(middle, request);
  let maxTranscriptChars: number | undefined;
  for (let attempt = 0; attempt < 6; attempt++) {
    const tokens = counter.countMessages(messages);
    if (tokens <= budget) break;
    const chars = messages.reduce((sum, m) => sum + (typeof m.content === "string" ? m.content.length : 0), 0);
    maxTranscriptChars = Math.floor(Math.min(maxTranscriptChars ?? chars, chars) * (budget / tokens) * 0.9);
    messages = summaryPromptMessages(middle, { ...request, maxTranscriptChars });
  }
  return messages;
}
