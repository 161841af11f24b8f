/**
 * The turns of a `GatewayRunner`: a turn stores the user message before the model is
 * called, loads the newest history that fits the model's context window, runs the agent,
 * commits the reply with every tool call and its result as one atomic turn, updates
 * totals and sends the reply. Also the turns that run again on a stored user message: a
 * turn resumed after a restart (or another replica's death) and a re-run of a failed turn.
 *
 * @module
 */
import type { Agent, TurnSpeaker } from "../agents/index.js";
import { ingestMedia, needsMediaIngest, type MediaIngestResult, type MediaNotice } from "../media/index.js";
import {
  syntheticMessageKind,
  InterruptedError,
  ThreadlineError,
  type ConversationMessage,
  type InboundClaim,
  type NewMessage,
  type UsageUpdate,
} from "../store/index.js";
import type { InboundMessage, OutboundMessage } from "./adapter.js";
import type { AgentCache } from "./agent-cache.js";
import { failureRef, modelFailureText } from "./chat-safe-errors.js";
import { isClaimedElsewhere } from "./inbound-claims.js";
import { fenceOf, sourceOfEntry, timed, type RunnerContext, type Running } from "./runner-context.js";
import { senderLabel, withSenderPrefixes } from "./sender-prefix.js";
import type { SessionCompressor } from "./session-compressor.js";
import { buildSessionContext, buildSessionContextPrompt, type SessionContextConfig } from "./session-context.js";
import type { SessionEntry } from "./session-entry.js";
import type { SessionSource } from "./session-source.js";
import type { SessionTitles } from "./session-titles.js";
import { composeTurnPrompt, SystemPromptRecords, type TurnPrompt } from "./system-prompt.js";
import type { AssembledContext, ContextMeasure, TurnContexts } from "./turn-context.js";
import { speakerOfSource } from "./turn-speaker.js";
import { closeOpenToolCalls, failedTurnRecord, isFailedTurnRecord, missingToolResults, replyTextOf, userMessagesOf } from "./turn-messages.js";

/** The platform message id of an inbound message, as `inReplyTo` lists it. */
function idsOf(message: InboundMessage): string[] {
  return message.messageId ? [message.messageId] : [];
}

/** Share of a turn's message budget past which its session is compressed even below the threshold. */
const WINDOW_FULL_SHARE = 0.8;
/** Sessions whose recorded model this process remembers (so the model is written once, not every turn). */
const RECORDED_MODELS = 10_000;
/** Messages a resumed turn reads to see whether its reply is missing and which tool results to repair. */
const RESUME_TAIL = 50;

/** What a turn tells its caller, and the inbound claims its user messages are stored with. */
export interface TurnHooks {
  /** The user message(s) are stored. */
  durable: () => void;
  /** Storing them failed (the turn does not run). */
  failed: (error: unknown) => void;
  /** Claims taken in the write that stores them (see `RouteWrite.claims`). */
  claims?: InboundClaim[] | undefined;
}

/** What a {@link TurnRunner} is made of. */
export interface TurnRunnerOptions {
  context: RunnerContext;
  /** Makes the agent of a session (cached per session key). */
  agentFactory: (entry: SessionEntry) => Agent | Promise<Agent>;
  agents: AgentCache<Agent>;
  /** Each turn's messages within the model's context window. */
  contexts: TurnContexts;
  contextConfig: SessionContextConfig;
  redactPii: boolean;
  memoryFor: ((speaker: TurnSpeaker) => Promise<string | null>) | null;
  compressor: SessionCompressor;
  titles: SessionTitles;
}

/** Runs the turns of the session workers of one gateway. */
export class TurnRunner {
  readonly #ctx: RunnerContext;
  readonly #factory: TurnRunnerOptions["agentFactory"];
  readonly #agents: AgentCache<Agent>;
  /** Each turn's messages within the model's context window (see {@link TurnContexts}). */
  readonly #contexts: TurnContexts;
  readonly #contextConfig: SessionContextConfig;
  readonly #redactPii: boolean;
  readonly #memoryFor: ((speaker: TurnSpeaker) => Promise<string | null>) | null;
  /** Automatic compression and `/compress` (see {@link SessionCompressor}). */
  readonly #compressor: SessionCompressor;
  readonly #titles: SessionTitles;
  /** Session id → the model this process last recorded on it. */
  readonly #recordedModels = new Map<string, string>();
  /** The system prompt last stored per session (written on a session's first turn and when it changes). */
  readonly #systemPrompts: SystemPromptRecords;
  #turnsCompleted = 0;

  constructor(options: TurnRunnerOptions) {
    this.#ctx = options.context;
    this.#factory = options.agentFactory;
    this.#agents = options.agents;
    this.#contexts = options.contexts;
    this.#contextConfig = options.contextConfig;
    this.#redactPii = options.redactPii;
    this.#memoryFor = options.memoryFor;
    this.#compressor = options.compressor;
    this.#titles = options.titles;
    this.#systemPrompts = new SystemPromptRecords(this.#ctx.db, { limit: RECORDED_MODELS });
  }

  /** Turns completed since start. */
  get turnsCompleted(): number {
    return this.#turnsCompleted;
  }

  /** One turn: store the user message(s), run the agent, commit, reply. */
  async turn(key: string, state: Running, messages: InboundMessage[], hooks: TurnHooks): Promise<void> {
    state.phase = "turn";
    try {
      await this.#turnSteps(key, state, messages, hooks);
    } finally {
      state.phase = "between";
    }
  }

  async #turnSteps(key: string, state: Running, inbound: InboundMessage[], hooks: TurnHooks): Promise<void> {
    const store = this.#ctx.store;
    const started = performance.now();
    const source = inbound[inbound.length - 1]!.source;
    const ids = inbound.map((m) => m.messageId ?? "").filter(Boolean);
    if (await this.#refusedWhileFrozen(key, source, ids, hooks)) return;
    let entry: SessionEntry;
    let messages = inbound;
    let media: MediaIngestResult | null = null;
    try {
      // Attachments are read, checked, stored (and audio transcribed) before the user messages that refer to them.
      if (inbound.some(needsMediaIngest)) {
        media = await this.#ingestMedia(key, state, inbound, source);
        messages = media.messages;
      }
      // A compression whose summary is written switches to its child first (one write).
      await this.#compressor.beforeTurn(key);
      // Routing decision, turn marker and the user message(s): one write.
      const fence = fenceOf(key, state);
      const claims = hooks.claims === undefined ? {} : { claims: hooks.claims };
      entry = await timed(this.#ctx, "startTurn", () => store.startTurn(source, userMessagesOf(messages, store.clock.now()), { key, ...fence, ...claims }));
    } catch (error) {
      hooks.failed(error);
      // Another replica stored this message first: admission answers `duplicate`, nothing to log.
      if (isClaimedElsewhere(error)) return;
      throw error;
    }
    hooks.durable();
    if (entry.resetNotice?.user) await this.#ctx.notify(source, entry.resetNotice.user, ids, "notice");
    if (media !== null && !media.answerable) {
      await this.#finishUnanswered(key, state, entry, media.notices);
      return;
    }
    for (const notice of media?.notices ?? []) await this.#ctx.notify(notice.message.source, notice.text, idsOf(notice.message), "notice");
    const notices = entry.resetNotice ? [entry.resetNotice.model] : [];
    const model = messages[messages.length - 1]!.model ?? undefined;
    // A message the gateway wrote itself (a handoff's note) has no sender to name.
    const senders = messages.map((m) => (syntheticMessageKind({ role: "user", platformMessageId: m.messageId ?? null }) === null ? m.source : null));
    // The entry is the one this turn's start wrote: the finish writes over it without reading it again.
    await this.#runAgent(key, state, entry, source, ids, notices, started, model, { senders, written: true });
  }

  /**
   * The media step of a turn (see `ingestMedia`): downloads through the platform's adapter,
   * stopped with the turn (`/stop`, shutdown). The agent transcribes audio; it is made (and its
   * session's entry, on a chat's very first message) only when an audio was stored.
   */
  async #ingestMedia(key: string, state: Running, messages: InboundMessage[], source: SessionSource): Promise<MediaIngestResult> {
    const controller = new AbortController();
    state.controller = controller;
    if (state.abortReason !== null) controller.abort();
    let agentTaken = false;
    try {
      return await ingestMedia(messages, {
        store: this.#ctx.db,
        fetcherFor: (platform) => {
          const adapter = this.#ctx.adapters.get(platform);
          return adapter?.fetchMedia === undefined ? null : (item, request) => adapter.fetchMedia!(item, request);
        },
        transcriber: async () => {
          const entry = (await this.#ctx.store.getEntry(key)) ?? (await this.#ctx.store.getOrCreateSession(source, { key }));
          const agent = await this.agentFor(key, entry);
          agentTaken = true;
          return agent;
        },
        settings: this.#ctx.mediaSettings,
        signal: controller.signal,
        log: this.#ctx.log,
      });
    } finally {
      if (agentTaken) this.#agents.endTurn(key);
      state.controller = null;
    }
  }

  /**
   * A turn whose messages left nothing for the model (no text; every attachment refused, or an
   * audio that could not be transcribed): the messages are stored, the chat is told why, and the
   * turn ends without a model call. The last notice goes as a refusal (kind `error`, `refused`),
   * so a request/response adapter answers with it and a chat's typing indicator stops.
   */
  async #finishUnanswered(key: string, state: Running, entry: SessionEntry, notices: MediaNotice[]): Promise<void> {
    await timed(this.#ctx, "finishTurn", () =>
      this.#ctx.store.finishTurn(key, { sessionId: entry.sessionId, messages: [], outcome: "ok", fence: fenceOf(key, state)?.fence, route: entry }),
    );
    for (const [i, notice] of notices.entries()) {
      const last = i === notices.length - 1;
      await this.#ctx.notify(notice.message.source, notice.text, idsOf(notice.message), last ? "error" : "notice", last ? { refused: true } : undefined);
    }
  }

  /** Auto-resume after a restart (or a replica's death): the user message is already stored; run the agent on the history. */
  async resumeTurn(key: string, state: Running, entry: SessionEntry): Promise<void> {
    state.phase = "turn";
    try {
      await this.#resumeSteps(key, state, entry);
    } finally {
      state.phase = "between";
    }
  }

  async #resumeSteps(key: string, state: Running, entry: SessionEntry): Promise<void> {
    const { store, db } = this.#ctx;
    const started = performance.now();
    const history = await timed(this.#ctx, "getConversation", () => db.getConversation(entry.sessionId, { lastMessages: RESUME_TAIL }));
    const last = history[history.length - 1];
    if (last === undefined || last.role === "assistant") {
      // Nothing left to answer: the interrupted turn had already stored its reply.
      await store.clearResumePending(key);
      await store.finishTurn(key, { outcome: "failed" });
      return;
    }
    await store.startTurn(key);
    const repair = missingToolResults(history);
    if (repair.length > 0) await db.appendTurn(entry.sessionId, repair, fenceOf(key, state));
    const notice =
      "[System note: the previous turn was interrupted by a gateway restart. Continue from the conversation as it stands; " +
      "do not re-run tool calls that already have results, and say so if a tool call was cut off.]";
    const source = sourceOfEntry(entry);
    // The reply answers the last stored user message (so a webhook receiver can link it).
    const lastUser = (await db.getMessages(entry.sessionId, { lastMessages: 50 })).filter((m) => m.role === "user").at(-1);
    const ids = lastUser?.platformMessageId ? [lastUser.platformMessageId] : [];
    // Who sent the interrupted message is not stored: in a chat, the resumed turn acts for nobody.
    await this.#runAgent(key, state, entry, source, ids, [notice], started, undefined, { speakerUnknown: true });
  }

  /** A retry of a failed turn: its user message is stored; run the agent again on the history. */
  async rerunTurn(key: string, state: Running, entry: SessionEntry, ids: string[], source: SessionSource, model?: string): Promise<void> {
    state.phase = "turn";
    try {
      await this.#ctx.store.startTurn(key);
      await this.#runAgent(key, state, entry, source, ids, [], performance.now(), model, { rerun: true });
    } finally {
      state.phase = "between";
    }
  }

  /**
   * The person a turn acts for: the sender of the message it answers (its tools search as
   * them, not as the session's creator), with their ids on the platform. `unknown`: the sender
   * is not known (a resumed turn); only a direct chat's source still names the person then.
   */
  async #speakerOf(source: SessionSource, unknown: boolean): Promise<TurnSpeaker> {
    return speakerOfSource(this.#ctx.store.aliases, this.#ctx.db, source, unknown);
  }

  /** The memory section for the turn's speaker (none for an unknown one); a failure is logged, not fatal. */
  async #memorySection(speaker: TurnSpeaker, sessionId: string): Promise<string[]> {
    if (this.#memoryFor === null || speaker.userId === null) return [];
    try {
      const section = await this.#memoryFor(speaker);
      return section === null || section.trim() === "" ? [] : [section];
    } catch (error) {
      this.#ctx.log.warn({ err: error, sessionId }, "reading the speaker's memory failed; the turn runs without it");
      return [];
    }
  }

  /** The messages of a turn's request within the model's window (see {@link TurnContexts}). */
  async #context(input: Parameters<TurnContexts["assemble"]>[0]): Promise<AssembledContext> {
    return timed(this.#ctx, "buildContext", () => this.#contexts.assemble(input));
  }

  /**
   * What the context of a session's last turn measured in this process (the window, what was
   * left out, and the whole conversation's tokens and messages after the turn was stored), or
   * `undefined` when no turn of it ran here since the start.
   */
  contextMeasure(sessionId: string): ContextMeasure | undefined {
    return this.#contexts.measure(sessionId);
  }

  async #runAgent(
    key: string,
    state: Running,
    entry: SessionEntry,
    source: SessionSource,
    ids: string[],
    notices: string[],
    started: number,
    model?: string,
    options: { rerun?: boolean; senders?: Array<SessionSource | null>; speakerUnknown?: boolean; written?: boolean } = {},
  ): Promise<void> {
    const { store, log, metrics } = this.#ctx;
    let history: ConversationMessage[];
    let given: ConversationMessage[];
    let prompt: TurnPrompt;
    let assembled: AssembledContext;
    let speaker: TurnSpeaker;
    let agent: Agent | undefined;
    try {
      // Marked mid-turn by agentFor in the step it is taken from the cache.
      agent = await this.agentFor(key, entry);
      const context = buildSessionContext(source, this.#contextConfig, entry);
      speaker = await this.#speakerOf(source, options.speakerUnknown === true);
      // The speaker's memory is part of this turn's prompt (before the notices), never of the stored one.
      const memory = await this.#memorySection(speaker, entry.sessionId);
      prompt = composeTurnPrompt(buildSessionContextPrompt(context, { redactPii: this.#redactPii }), agent.promptGuidance?.() ?? [], [...memory, ...notices]);
      const labels = context.sharedMultiUser
        ? (options.senders ?? [source]).map((sender) => (sender === null ? null : senderLabel(sender, { redactPii: this.#redactPii })))
        : null;
      assembled = await this.#context({
        sessionId: entry.sessionId,
        agent,
        contextPrompt: prompt.contextPrompt,
        ...(model === undefined ? {} : { model }),
        extraText: (labels ?? []).filter((label): label is string => label !== null).map((label) => `[${label}] `),
      });
      history = assembled.messages;
      // A re-run answers the last user message again: its failed attempts are not part of the question.
      if (options.rerun === true) while (history.length > 0 && isFailedTurnRecord(history[history.length - 1]!)) history = history.slice(0, -1);
      // Shared sessions: the model is told who said what; the stored messages stay as they were said.
      given = labels === null ? history : withSenderPrefixes(history, labels);
      await this.#systemPrompts.record(entry.sessionId, prompt.stored).catch((error: unknown) => {
        log.warn({ err: error, sessionId: entry.sessionId }, "storing the session's system prompt failed");
      });
    } catch (error) {
      if (agent !== undefined) this.#agents.endTurn(key);
      // The chat hears that its message will not be answered instead of waiting for a reply that never
      // comes (an HTTP request would hang); the worker logs the error with its details.
      await this.#ctx
        .notify(source, "Something went wrong before the model could answer; the gateway's log has the details.", ids, "error")
        .catch((notifyError: unknown) => log.warn({ err: notifyError, key }, "telling the chat that its turn failed failed"));
      throw error;
    }
    const controller = new AbortController();
    state.controller = controller;
    // A /stop or a shutdown that came while the turn was being prepared (no controller yet) stops it now.
    if (state.abortReason !== null) controller.abort();
    let produced: NewMessage[] = [];
    let usage: UsageUpdate | undefined;
    let promptTokens: number | undefined;
    let answeredBy: string | undefined;
    let outcome: "ok" | "error" | "interrupted" = "ok";
    let failure: unknown = null;
    let failureRefId = "";
    try {
      const input: Parameters<Agent["runTurn"]>[0] = {
        messages: given,
        contextPrompt: assembled.contextPrompt,
        signal: controller.signal,
        sessionId: entry.sessionId,
        speaker,
      };
      if (model !== undefined) input.model = model;
      const onDelta = this.#deltaSink(source, ids, entry.sessionId);
      if (onDelta !== undefined) input.onDelta = onDelta;
      const result = await agent.runTurn(input);
      produced = result.messages;
      usage = result.usage;
      promptTokens = result.promptTokens;
      this.#contexts.calibrate(entry.sessionId, assembled, result);
      answeredBy = result.model;
    } catch (error) {
      if (error instanceof InterruptedError || controller.signal.aborted) {
        outcome = "interrupted";
        // The Agent contract: an interrupted turn throws InterruptedError<NewMessage, UsageUpdate> (AgentInterruptedError).
        const interrupted = error instanceof InterruptedError ? (error as InterruptedError<NewMessage, UsageUpdate>) : null;
        produced = interrupted?.partial ?? [];
        usage = interrupted?.usage;
      } else {
        outcome = "error";
        failure = error;
        failureRefId = failureRef();
        log.warn({ err: error, ref: failureRefId, key, sessionId: entry.sessionId }, "agent turn failed");
      }
    } finally {
      this.#agents.endTurn(key);
      state.controller = null;
    }
    const turn = closeOpenToolCalls(produced);
    // A failed turn is recorded, so the next model call sees its user message once and that it went unanswered.
    if (outcome === "error") turn.push(failedTurnRecord((failure as Error)?.message ?? String(failure), store.clock.now()));
    // On shutdown the turn marker stays: the next start counts the interruption and resumes.
    const finish = outcome === "ok" ? "ok" : outcome === "error" || state.abortReason === "stop" ? "failed" : "interrupted";
    try {
      await timed(this.#ctx, "finishTurn", () =>
        store.finishTurn(key, {
          sessionId: entry.sessionId,
          messages: turn,
          usage,
          lastPromptTokens: promptTokens,
          outcome: finish,
          fence: fenceOf(key, state)?.fence,
          ...(options.written === true ? { route: entry } : {}),
        }),
      );
    } catch (error) {
      if (error instanceof ThreadlineError && error.code === "TL_ERR_LEASE_LOST") {
        log.warn({ key }, "a newer lease holder owns this session; this turn's result was not stored");
        return;
      }
      throw error;
    }
    // The measure tells the conversation's size after the turn (compression reads it).
    await this.#contexts.recordTurn(entry.sessionId, turn);
    if (outcome === "ok") this.#turnsCompleted += 1;
    metrics.turnFinished?.(outcome, (performance.now() - started) / 1000);
    const reply = replyTextOf(turn);
    if (outcome === "ok") {
      const out: OutboundMessage = { text: reply, kind: "reply", inReplyTo: ids, sessionId: entry.sessionId };
      if (usage) out.usage = { promptTokens: usage.inputTokens ?? 0, completionTokens: usage.outputTokens ?? 0 };
      if (answeredBy !== undefined) out.model = answeredBy;
      await this.#ctx.send(source, out);
      if (answeredBy !== undefined) await this.#recordModel(entry.sessionId, answeredBy);
      // Only a session's first exchange is titled: a window that left messages out is not one.
      if (assembled.built.dropped === 0) this.#titles.titleInBackground(entry, history, reply);
      // Due early too when the conversation nears what a request may hold (the window less the
      // reply's share, the prompt and the tools can be below the threshold): the summary runs
      // while there is still room, and nothing is left out unsummarised.
      const measure = this.contextMeasure(entry.sessionId);
      this.#afterTurn(
        key,
        entry,
        source,
        assembled.built.dropped > 0 || (measure !== undefined && measure.fullTokens > measure.budget * WINDOW_FULL_SHARE),
        measure === undefined ? undefined : { tokens: measure.fullTokens, count: measure.fullCount, model: measure.model },
      );
    } else if (outcome === "error") {
      // The chat gets a ref, the log above has the provider's detail under it (the terminal sees both).
      await this.#ctx.notify(source, modelFailureText(source.platform, failureRefId, failure), ids, "error");
    } else if (outcome === "interrupted" && state.abortReason === "stop") {
      await this.#ctx.notify(source, "Stopped.", ids, "notice");
    }
  }

  /**
   * The agent of `key`, marked mid-turn (the caller ends the turn). It is marked in the same
   * synchronous step that takes it from the cache or puts it in: across an await, another
   * session's `set()` could evict it from a full cache before its turn began.
   */
  async agentFor(key: string, entry: SessionEntry): Promise<Agent> {
    const cached = this.#agents.get(key);
    if (cached !== undefined) {
      this.#agents.beginTurn(key);
      return cached;
    }
    const agent = await this.#factory(entry);
    this.#agents.set(key, agent);
    this.#agents.beginTurn(key);
    return agent;
  }

  /** The agent's `onDelta` for a turn whose sender wants the reply streamed, else `undefined`. */
  #deltaSink(source: SessionSource, ids: string[], sessionId: string): ((text: string) => void) | undefined {
    const adapter = this.#ctx.adapters.get(source.platform);
    if (adapter?.sendDelta === undefined || adapter.wantsStream?.(ids) !== true) return undefined;
    return (text) => {
      try {
        adapter.sendDelta!(source, { text, inReplyTo: ids, sessionId });
      } catch (error) {
        this.#ctx.log.warn({ err: error, platform: source.platform }, "streaming a reply piece failed");
      }
    };
  }

  /** Records the model that answered on the session (`show`, `stats`, cost by model), once per change. */
  async #recordModel(sessionId: string, model: string): Promise<void> {
    if (this.#recordedModels.get(sessionId) === model) return;
    try {
      await this.#ctx.db.updateSession(sessionId, { model });
      this.#recordedModels.delete(sessionId);
      this.#recordedModels.set(sessionId, model);
      if (this.#recordedModels.size > RECORDED_MODELS) {
        const oldest = this.#recordedModels.keys().next().value;
        if (oldest !== undefined) this.#recordedModels.delete(oldest);
      }
    } catch (error) {
      this.#ctx.log.warn({ err: error, sessionId }, "recording the session's model failed");
    }
  }

  /** After a turn's reply was sent: a compression starts in the background when the session is due (never awaited). */
  #afterTurn(
    key: string,
    entry: SessionEntry,
    source: SessionSource,
    windowFull: boolean,
    measured: { tokens: number; count: number; model: string | null } | undefined,
  ): void {
    this.#compressor.afterTurn(key, entry, source, measured === undefined ? { windowFull } : { windowFull, measured });
  }

  /**
   * A session frozen after its summary failed (`compression.abortOnSummaryFailure`) takes no
   * turn until `/compress` or `/new`: the message is refused with a notice saying so.
   */
  async #refusedWhileFrozen(key: string, source: SessionSource, ids: string[], hooks: { durable: () => void }): Promise<boolean> {
    if (!this.#compressor.settings.abortOnSummaryFailure) return false;
    const route = await this.#ctx.db.getRoute(key);
    if (route === null || !(await this.#compressor.isFrozen(route.sessionId))) return false;
    hooks.durable();
    await this.#ctx.notify(
      source,
      "This conversation is paused because its summary failed: send /compress to try the summary again, or /new to start a fresh session. Your message was not sent to the model.",
      ids,
      "error",
      { refused: true },
    );
    return true;
  }
}
