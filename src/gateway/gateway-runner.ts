/**
 * `GatewayRunner`: wires adapters, the {@link SessionStore}, the durable queue and an
 * {@link Agent}. For every inbound message: session key → entry → run a turn now, or
 * queue it when the session is busy. A turn stores the user message before the model
 * is called, loads the newest history that fits the model's context window, runs the agent, commits the reply with every
 * tool call and its result as one atomic turn, updates totals, sends the reply and
 * promotes the queue head. One turn at a time per session; sessions run concurrently.
 *
 * @module
 */
import type { Agent, Titler, TurnSpeaker } from "../agents/index.js";
import {
  setTitleAvoidingCollision,
  syntheticMessageKind,
  InternalError,
  InterruptedError,
  InvalidInputError,
  ThreadlineError,
  type ConversationMessage,
  type InboundClaim,
  type Lease,
  type NewMessage,
  type UsageUpdate,
} from "../store/index.js";
import type { Adapter, AdapterEvents, DeliveryFailure, InboundAck, InboundMessage, OutboundMessage } from "./adapter.js";
import { AccessGate, type PairingGateStore } from "./access-gate.js";
import type { PlatformAccess } from "./access-policy.js";
import { AgentCache } from "./agent-cache.js";
import { noopLogger, type GatewayLogger } from "./gateway-logger.js";
import { redactingLogger } from "./log-redaction.js";
import { failureRef, modelFailureText } from "./chat-safe-errors.js";
import type { HomeChannels } from "./handoff.js";
import { effectiveHomeChannels } from "./home-channels.js";
import { HandoffWorker, type ProcessHandoffsOptions } from "./handoff-worker.js";
import { claimCommand, inboundClaimOf, isClaimedElsewhere } from "./inbound-claims.js";
import { storeReceiverLeases } from "./receiver-lease.js";
import type { InboundBuffer } from "./inbound-buffer.js";
import type { SessionEntry } from "./session-entry.js";
import { SessionQueue, type InboundEvent } from "./session-queue.js";
import { senderLabel, withSenderPrefixes } from "./sender-prefix.js";
import { buildSessionContext, buildSessionContextPrompt, type SessionContextConfig } from "./session-context.js";
import type { SessionSource } from "./session-source.js";
import type { GatewayDB, SessionStore } from "./session-store.js";
import { isGatewayCommand, parseSlashCommand, runSlashCommand, type CommandHost } from "./slash-commands.js";
import { composeTurnPrompt, SystemPromptRecords, type TurnPrompt } from "./system-prompt.js";
import { TurnContexts, type AssembledContext, type ContextMeasure, type ContextWindowResolver } from "./turn-context.js";
import { SessionCompressor, type CompressOutcome, type SessionCompressorOptions } from "./session-compressor.js";
import { speakerOfExpiringSession, speakerOfSource } from "./turn-speaker.js";
import { closeOpenToolCalls, failedTurnRecord, isFailedTurnRecord, missingToolResults, replyTextOf, textOf, userMessagesOf } from "./turn-messages.js";

/** Hooks for metrics (the `serve` command feeds Prometheus from them). */
export interface GatewayMetrics {
  turnFinished?(outcome: "ok" | "error" | "interrupted", seconds: number): void;
  storeCall?(operation: string, seconds: number): void;
  queueDepthChanged?(key: string, depth: number): void;
  /** A message to a platform failed for good (after the adapter's own retries). */
  sendFailed?(platform: string, kind: OutboundMessage["kind"]): void;
  /** A platform reported a message it had accepted as not delivered (e.g. a WhatsApp `failed` status). */
  deliveryFailed?(platform: string, reason: string): void;
}

/** Options of a {@link GatewayRunner}. */
export interface GatewayRunnerOptions {
  store: SessionStore;
  /** Makes the agent of a session (cached per session key). */
  agentFactory: (entry: SessionEntry) => Agent | Promise<Agent>;
  adapters?: Adapter[];
  /** The durable queue (default: one on the store's database, depth 32). */
  queue?: SessionQueue;
  /** Proposes titles after the first exchange of an untitled session (`null`: no titles). */
  titler?: Titler | null;
  /**
   * The context window of a turn's model (default: 8,192 tokens for every model). Each turn
   * sends the newest whole turns that fit it (see `buildContext`).
   */
  contextWindow?: ContextWindowResolver;
  /** An extra cap on the messages sent per turn, on top of the token budget (`gateway.historyLimit`; default none). */
  historyLimit?: number;
  /** Connected platforms and home channels for the context prompt. */
  contextConfig?: SessionContextConfig;
  /** Hash user and chat ids in the context prompt (default false). */
  redactPii?: boolean;
  /** The live agents (default: LRU of 128, idle TTL 3600 s). */
  agentCache?: AgentCache<Agent>;
  logger?: GatewayLogger;
  metrics?: GatewayMetrics;
  /**
   * Several replicas on one database: hold a per-session lease while running turns and
   * fence every transcript write with its token. `holder` names this replica.
   */
  leases?: { holder: string; ttlSeconds?: number } | null;
  /**
   * Who may talk to the agent on each chat platform (`adapters.<platform>.access`, `allowedUsers`,
   * `allowedChats`, `admins`). Platforms not listed (and every platform without this option)
   * are let through, and their callers count as admins. Needs `pairingStore` when a platform
   * uses `pairing`.
   */
  access?: Readonly<Record<string, PlatformAccess>>;
  /** Where pairing codes and approvals live (a `SessionDB`). */
  pairingStore?: PairingGateStore;
  /**
   * Compression of long sessions into continuation sessions (`compression.*`; default: on,
   * hermes-agent's defaults) and the model's context window it is measured against.
   */
  compression?: SessionCompressorOptions;
  /**
   * The memory section of the context prompt for the person speaking (`serve` renders their
   * `memory` and `user` records with `memoryPromptFor`), or `null` for none. Called once per
   * turn with that turn's speaker; the section goes into the turn's prompt after the tool
   * guidance, and is not stored as the session's system prompt (another speaker of a shared
   * chat gets their own). A failure is logged and the turn runs without memory.
   */
  memoryFor?: (speaker: TurnSpeaker) => Promise<string | null>;
}

/** What a turn tells its caller, and the inbound claims its user messages are stored with. */
interface TurnHooks {
  durable: () => void;
  failed: (error: unknown) => void;
  claims?: InboundClaim[] | undefined;
}

/** What a running session is doing. */
interface Running {
  /** `turn` while a turn is being run; `between` while the worker looks for the next queued message. */
  phase: "turn" | "between";
  /** A message was queued for the key since the worker last looked at the queue. */
  more: boolean;
  controller: AbortController | null;
  /** Why the running turn was aborted. */
  abortReason: "stop" | "shutdown" | null;
  lease: Lease | null;
  renewTimer: NodeJS.Timeout | null;
  done: Promise<void>;
  source: SessionSource;
}

const RECENT_IDS = 10_000;
/** Sessions whose recorded model this process remembers (so the model is written once, not every turn). */
/** Share of a turn's message budget past which its session is compressed even below the threshold. */
const WINDOW_FULL_SHARE = 0.8;
const RECORDED_MODELS = 10_000;
/** How often a replica looks for the reply another replica stored for a waiting request. */
const RELAY_POLL_MS = 100;
/** Messages a resumed turn reads to see whether its reply is missing and which tool results to repair. */
const RESUME_TAIL = 50;
/** How far back (messages of the current session) an idempotent message id is looked for. */
const IDEMPOTENCY_WINDOW = 100;

/** The pairing store of a runner whose platforms use no pairing (never called). */
const noPairing: PairingGateStore = {
  requestPairingCode: () => Promise.reject(new InternalError("A pairing code was asked for on a runner without a pairing store")),
  approvePairingCode: () => Promise.reject(new InternalError("A pairing approval was asked for on a runner without a pairing store")),
  isPairingApproved: () => Promise.resolve(false),
};

/** What drain() reports. */
export interface DrainResult {
  /** Every turn finished within the timeout. */
  drained: boolean;
  /** Keys still mid-turn when the timeout fired (their turns were aborted). */
  stillRunning: string[];
}

/**
 * The gateway pipeline.
 *
 * @example
 * const runner = new GatewayRunner({ store, agentFactory: () => new EchoAgent(), adapters: [local] });
 * await runner.start();
 * await local.receive("hello");
 */
export class GatewayRunner implements CommandHost {
  readonly store: SessionStore;
  readonly db: GatewayDB;
  readonly queue: SessionQueue;
  readonly agents: AgentCache<Agent>;
  readonly #factory: GatewayRunnerOptions["agentFactory"];
  readonly #adapters = new Map<string, Adapter>();
  readonly #titler: Titler | null;
  /** Each turn's messages within the model's context window (see {@link TurnContexts}). */
  readonly #contexts: TurnContexts;
  readonly #contextConfig: SessionContextConfig;
  readonly #redactPii: boolean;
  readonly #memoryFor: ((speaker: TurnSpeaker) => Promise<string | null>) | null;
  readonly #log: GatewayLogger;
  readonly #metrics: GatewayMetrics;
  readonly #leases: { holder: string; ttlSeconds: number } | null;
  readonly #running = new Map<string, Running>();
  /** Automatic compression and `/compress` (see {@link SessionCompressor}). */
  readonly compressor: SessionCompressor;
  /** The tail of each key's lease acquires and releases in this process (see #leaseOp). */
  readonly #leaseOps = new Map<string, Promise<void>>();
  readonly #recentIds = new Set<string>();
  /** Keys whose recent platform message ids were loaded from the transcript (after a start). */
  readonly #seededKeys = new Set<string>();
  readonly #lanes = new Map<string, Promise<unknown>>();
  /** Auto-titles running in the background (they never hold up a turn). */
  readonly #titles = new Set<Promise<void>>();
  readonly #titleAbort = new AbortController();
  /** Session id → the model this process last recorded on it. */
  readonly #recordedModels = new Map<string, string>();
  /** The system prompt last stored per session (written on a session's first turn and when it changes). */
  readonly #systemPrompts: SystemPromptRecords;
  #accepting = false;
  #turnsCompleted = 0;
  #buffer: InboundBuffer<InboundMessage> | null = null;
  #handoffs: HandoffWorker | null = null;
  readonly #gate: AccessGate | null;
  readonly #pairing: PairingGateStore | null;

  constructor(options: GatewayRunnerOptions) {
    this.store = options.store;
    this.db = options.store.db;
    this.queue = options.queue ?? new SessionQueue(this.db, { clock: this.store.clock });
    this.agents = options.agentCache ?? new AgentCache<Agent>({ clock: this.store.clock });
    this.#factory = options.agentFactory;
    for (const adapter of options.adapters ?? []) this.#adapters.set(adapter.platform, adapter);
    this.#titler = options.titler ?? null;
    this.#contexts = new TurnContexts(this.db, {
      ...(options.contextWindow === undefined ? {} : { windowFor: options.contextWindow }),
      ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
    });
    this.#contextConfig = {
      keySettings: options.store.keySettings,
      ...options.contextConfig,
      connectedPlatforms: options.contextConfig?.connectedPlatforms ?? [...this.#adapters.keys()],
    };
    this.#redactPii = options.redactPii ?? false;
    this.#memoryFor = options.memoryFor ?? null;
    // Session keys with phone numbers (WhatsApp, Signal) are logged as hashes.
    this.#log = redactingLogger(options.logger ?? noopLogger);
    this.#metrics = options.metrics ?? {};
    this.#leases = options.leases ? { holder: options.leases.holder, ttlSeconds: options.leases.ttlSeconds ?? 30 } : null;
    // Several replicas: a connection-style adapter receives in one of them at a time (see ReceiverLease).
    if (this.#leases !== null)
      this.#adapterEvents.receiverLease = storeReceiverLeases(this.db, { ...this.#leases, clock: this.store.clock, logger: this.#log });
    this.#systemPrompts = new SystemPromptRecords(this.db, { limit: RECORDED_MODELS });
    // Compression measures against the same window the turns are built within.
    const windowFor = options.contextWindow;
    this.compressor = this.#newCompressor({
      ...(windowFor === undefined ? {} : { contextWindow: (model: string | null) => windowFor(model ?? undefined).tokens }),
      ...options.compression,
    });
    this.#pairing = options.pairingStore ?? null;
    const access = options.access ?? {};
    if (Object.values(access).some((a) => a.mode === "pairing") && this.#pairing === null) {
      throw new InvalidInputError(
        "GatewayRunner: a platform uses access: pairing, so pass pairingStore (the SessionDB) in the runner options, or set that platform's access to allowlist or open.",
        { field: "pairingStore" },
      );
    }
    this.#gate =
      Object.keys(access).length === 0
        ? null
        : new AccessGate({
            access,
            store: this.#pairing ?? noPairing,
            aliases: this.store.aliases,
            reply: (source, text, inReplyTo) => this.#send(source, { text, kind: "notice", inReplyTo }),
            logger: this.#log,
          });
  }

  /**
   * Connects every adapter and starts accepting messages. With a `buffer` (from
   * `GatewayRecovery.startup`), messages are held until it is released.
   */
  async start(options: { buffer?: InboundBuffer<InboundMessage> } = {}): Promise<void> {
    this.#accepting = true;
    this.#buffer = options.buffer ?? null;
    for (const adapter of this.#adapters.values()) await adapter.connect((message) => this.#inbound(message), this.#adapterEvents);
  }

  /** What adapters report about messages already sent. */
  readonly #adapterEvents: AdapterEvents = {
    deliveryFailed: (failure) => this.#deliveryFailed(failure),
  };

  /** A delivery failure reported by an adapter: counted, and logged with the session key when the source is known. */
  #deliveryFailed(failure: DeliveryFailure): void {
    this.#metrics.deliveryFailed?.(failure.platform, failure.reason);
    void (async () => {
      const key = failure.source === null ? null : await this.store.sessionKeyFor(failure.source).catch(() => null);
      this.#log.error(
        { platform: failure.platform, key, messageId: failure.messageId, reason: failure.reason },
        `${failure.platform}: a message was not delivered: ${failure.description}`,
      );
    })().catch(() => {});
  }

  #inbound(message: InboundMessage): Promise<InboundAck> {
    return this.#buffer === null ? this.handle(message) : this.#buffer.push(message, (m) => this.handle(m));
  }

  /** Adds an adapter (before or after start). */
  async addAdapter(adapter: Adapter): Promise<void> {
    this.#adapters.set(adapter.platform, adapter);
    if (this.#accepting) await adapter.connect((message) => this.#inbound(message), this.#adapterEvents);
  }

  /** Sessions with a turn running in this process. */
  get activeTurns(): number {
    return this.#running.size;
  }

  /** Keys of the sessions with a turn running (or a worker between queued turns) here, and what each is doing. */
  get runningSessions(): Array<{ key: string; platform: string; phase: "turn" | "between" }> {
    return [...this.#running].map(([key, r]) => ({ key, platform: r.source.platform, phase: r.phase }));
  }

  /** Platforms of the adapters this runner serves (connected while {@link accepting}). */
  get platforms(): string[] {
    return [...this.#adapters.keys()];
  }

  /** Turns completed since start. */
  get turnsCompleted(): number {
    return this.#turnsCompleted;
  }

  /** Whether the gateway accepts messages. */
  get accepting(): boolean {
    return this.#accepting;
  }

  // --- inbound ---------------------------------------------------------------------

  /**
   * Handles one inbound message; resolves once it is durable (stored or queued), a command
   * ran, or it was refused. Messages of one chat are admitted in the order `handle` was
   * called, so a session's turns follow arrival order.
   */
  handle(message: InboundMessage): Promise<InboundAck> {
    const s = message.source;
    const lane = [s.platform, s.chatId ?? "", s.threadId ?? "", s.chatId ? "" : (s.userIdAlt ?? s.userId ?? "")].join("\u0000");
    const previous = this.#lanes.get(lane) ?? Promise.resolve();
    const next = previous.then(
      () => this.#admit(message),
      () => this.#admit(message),
    );
    const tail = next.catch(() => {});
    this.#lanes.set(lane, tail);
    void tail.then(() => {
      if (this.#lanes.get(lane) === tail) this.#lanes.delete(lane);
    });
    return next;
  }

  async #admit(message: InboundMessage): Promise<InboundAck> {
    // Who may talk to the agent is decided before anything about the message is stored.
    if (this.#gate !== null && this.#accepting) {
      const outcome = await this.#gate.check(message);
      if (!outcome.pass) return { status: "refused", sessionKey: await this.store.sessionKeyFor(message.source) };
    }
    await this.store.aliases.learn(message.source);
    const key = await this.store.sessionKeyFor(message.source);
    if (!this.#accepting) return { status: "rejected", sessionKey: key, reason: "The gateway is shutting down; send the message again in a moment." };
    const command = parseSlashCommand(message.text);
    if (command !== null && isGatewayCommand(command)) {
      // Claimed before it runs: a command delivered to several replicas runs once.
      if (!(await claimCommand(this.db, message))) return { status: "duplicate", sessionKey: key };
      await runSlashCommand(this, key, message, command);
      return { status: "command", sessionKey: key };
    }
    if (message.idempotent === true && message.messageId) {
      const again = await this.#repeatAttempt(key, message, message.messageId);
      if (again !== null) return again;
    } else if (message.messageId) {
      const id = `${key}\u0000${message.messageId}`;
      if (!this.#seededKeys.has(key)) await this.#seedRecentIds(key);
      if (this.#recentIds.has(id)) return { status: "duplicate", sessionKey: key };
      this.#remember(id);
    }
    // Claimed with what it becomes (the stored user message, or the queued event): another replica's claim makes it a duplicate.
    const claim = inboundClaimOf(message);
    const claims = claim === null ? undefined : [claim];
    try {
      if (await this.#startNow(key, message, claims)) return { status: "accepted", sessionKey: key };
    } catch (error) {
      if (isClaimedElsewhere(error)) return { status: "duplicate", sessionKey: key };
      throw error;
    }
    return this.enqueue(key, message, claims);
  }

  /**
   * An idempotent message whose id is already stored in the key's current session (a
   * client's retry): sends the stored reply again, waits for a reply still running, or
   * runs a failed turn once more — never stores the user message a second time.
   * `null` when the id is new.
   */
  async #repeatAttempt(key: string, message: InboundMessage, messageId: string, waited = false): Promise<InboundAck | null> {
    const route = await this.db.getRoute(key);
    if (route === null) return null;
    const messages = await this.db.getMessages(route.sessionId, { lastMessages: IDEMPOTENCY_WINDOW });
    let at = -1;
    for (let i = messages.length - 1; i >= 0 && at < 0; i--) {
      if (messages[i]!.role === "user" && messages[i]!.platformMessageId === messageId) at = i;
    }
    if (at < 0) return null;
    const source = message.source;
    let end = at + 1;
    while (end < messages.length && messages[end]!.role !== "user") end++;
    const after = messages.slice(at + 1, end);
    const reply = after.findLast(
      (m) => m.role === "assistant" && !isFailedTurnRecord(m) && !(m.toolCalls && m.toolCalls.length > 0) && textOf(m.content).trim() !== "",
    );
    if (reply !== undefined) {
      this.#log.info({ sessionId: route.sessionId }, "a repeated request got the stored reply");
      await this.#send(source, { text: textOf(reply.content), kind: "reply", inReplyTo: [messageId], sessionId: route.sessionId });
      return { status: "duplicate", sessionKey: key };
    }
    const failures = after.filter(isFailedTurnRecord).length;
    if (end === messages.length && (route.turnStartedAt !== null || this.isBusy(key))) {
      // An attempt is still running (here or on another replica): hand its reply over when stored.
      this.#relayReply(key, source, messageId, failures);
      return { status: "duplicate", sessionKey: key };
    }
    if (end < messages.length) {
      // Later messages were answered since: re-running this one would answer out of order.
      const failure = after.findLast(isFailedTurnRecord);
      await this.notify(
        source,
        failure === undefined ? "This message got no reply, and the conversation has moved on since; send it again as a new message." : textOf(failure.content),
        [messageId],
        "error",
      );
      return { status: "duplicate", sessionKey: key };
    }
    // A worker that just finished the failed turn may still be looking at the queue: let it end.
    const worker = this.#running.get(key);
    if (worker !== undefined && worker.phase === "between" && !waited) {
      await worker.done;
      return this.#repeatAttempt(key, message, messageId, true);
    }
    if (this.#running.has(key)) {
      return { status: "rejected", sessionKey: key, reason: "The session is busy with another message; retry this one when it is answered." };
    }
    const lease = await this.#acquire(key);
    if (lease === false || this.#running.has(key)) {
      if (lease !== null && lease !== false) await this.#dropUnused(key, lease);
      return { status: "rejected", sessionKey: key, reason: "The session is busy with another message; retry this one when it is answered." };
    }
    const entry = await this.store.getEntry(key);
    if (entry === null) {
      if (lease !== null) await this.#dropUnused(key, lease);
      return null;
    }
    this.#log.info({ sessionId: entry.sessionId }, "a repeated request re-runs the failed turn");
    this.#startWorker(key, source, lease, { rerun: entry, ids: [messageId], model: message.model ?? undefined });
    return { status: "accepted", sessionKey: key };
  }

  /**
   * Runs a message at once when the session is idle here (and its lease, if any, is
   * free): resolves `true` once the user message is stored, `false` when it must queue.
   */
  async #startNow(key: string, message: InboundMessage, claims?: InboundClaim[]): Promise<boolean> {
    if (this.#running.has(key)) return false;
    const lease = await this.#acquire(key);
    if (lease === false) return false;
    if (this.#running.has(key)) {
      if (lease !== null) await this.#dropUnused(key, lease);
      return false;
    }
    let durable!: () => void;
    let failed!: (error: unknown) => void;
    const stored = new Promise<void>((resolve, reject) => {
      durable = resolve;
      failed = reject;
    });
    this.#startWorker(key, message.source, lease, { messages: [message], durable, failed, claims });
    await stored;
    return true;
  }

  /** Queues a message for a key (durably) and makes sure some worker will run it. */
  async enqueue(key: string, message: InboundMessage, claims?: InboundClaim[]): Promise<InboundAck> {
    const event: InboundEvent = {
      ...(claims === undefined ? {} : { claims }),
      messageId: message.messageId ?? null,
      senderId: message.source.userId ?? null,
      kind: (message.media?.length ?? 0) > 0 ? "media" : "text",
      albumId: message.albumId ?? null,
      payload: message,
    };
    const outcome = await this.queue.enqueue(key, event);
    if (outcome.status === "rejected") {
      await this.notify(message.source, outcome.reason, [message.messageId ?? ""].filter(Boolean), "error");
      return { status: "rejected", sessionKey: key, reason: outcome.reason };
    }
    if (outcome.status === "duplicate") {
      // A retry of a message still waiting in the queue: its reply answers the retry too.
      if (message.idempotent === true && message.messageId && !this.#running.has(key)) this.#relayReply(key, message.source, message.messageId);
      return { status: "duplicate", sessionKey: key };
    }
    this.#metrics.queueDepthChanged?.(key, outcome.depth);
    const worker = this.#running.get(key);
    if (worker !== undefined) worker.more = true;
    else await this.#kick(key, message.source);
    if (!this.#running.has(key) && message.messageId) this.#relayReply(key, message.source, message.messageId);
    return { status: "queued", sessionKey: key, depth: outcome.depth };
  }

  /** Starts a worker for a key with queued messages when none runs here and the lease (if any) is free. */
  async #kick(key: string, source: SessionSource): Promise<void> {
    if (this.#running.has(key) || !this.#accepting) return;
    const lease = await this.#acquire(key);
    if (lease === false) return;
    if (this.#running.has(key)) {
      if (lease !== null) await this.#dropUnused(key, lease);
      return;
    }
    this.#startWorker(key, source, lease, null);
  }

  /**
   * Runs queued messages of every key (after a restart, or a sweep for keys whose lease
   * holder died). Keys of platforms without an adapter here (a terminal session's queue)
   * are left queued: their replies could not be delivered.
   */
  async replayQueues(): Promise<number> {
    let started = 0;
    for (const key of await this.queue.pendingKeys()) {
      const items = await this.db.listQueue(key);
      const first = items[0]?.payloads[0] as InboundMessage | undefined;
      if (first?.source === undefined) continue;
      if (!this.#serves(first.source.platform)) continue;
      if (!this.#running.has(key)) started += 1;
      await this.#kick(key, first.source);
    }
    return started;
  }

  /**
   * With leases: resumes turns another replica left unfinished (it died mid-turn; its
   * lease expired), then runs queued messages whose lease is free. `serve` calls this every
   * lease TTL. Returns how many sessions it started.
   */
  async sweep(): Promise<number> {
    let started = 0;
    if (this.#leases !== null && this.#accepting) {
      for await (const route of this.store.routes({ turnInProgress: true, suspended: false })) {
        if (this.#running.has(route.key)) continue;
        const lease = await this.#acquire(route.key);
        if (lease === false) continue;
        if (this.#running.has(route.key)) {
          if (lease !== null) await this.#dropUnused(route.key, lease);
          continue;
        }
        const entry = await this.store.getEntry(route.key);
        if (entry === null || entry.turnStartedAt === null) {
          if (lease !== null) await this.#dropUnused(route.key, lease);
          continue;
        }
        const source = (entry.origin as SessionSource | null) ?? { platform: entry.platform ?? "unknown", chatType: "dm" };
        if (!this.#serves(source.platform)) {
          if (lease !== null) await this.#dropUnused(route.key, lease);
          continue;
        }
        this.#log.info({ key: route.key }, "resuming a turn another replica left unfinished");
        this.#startWorker(route.key, source, lease, { resume: entry });
        started += 1;
      }
    }
    return started + (await this.replayQueues());
  }

  /**
   * Another replica will run a message that came in through a request/response adapter
   * here: watch the transcript for its reply and hand it to the waiting request.
   */
  #relayReply(key: string, source: SessionSource, messageId: string, knownFailures = 0): void {
    const adapter = this.#adapters.get(source.platform);
    if (adapter?.awaitsReply === undefined) return;
    const waiting = (): boolean => adapter.awaitsReply!(messageId);
    void (async () => {
      while (waiting()) {
        await new Promise((resolve) => setTimeout(resolve, RELAY_POLL_MS));
        if (!waiting()) return;
        const route = await this.db.getRoute(key);
        if (route === null) continue;
        const messages = await this.db.getMessages(route.sessionId, { lastMessages: 200 });
        const at = messages.findIndex((m) => m.role === "user" && m.platformMessageId === messageId);
        if (at < 0) continue;
        let failures = 0;
        for (let i = at + 1; i < messages.length && messages[i]!.role !== "user"; i++) {
          const m = messages[i]!;
          // A failed attempt answers (as an error) unless it was already there when the wait began.
          if (isFailedTurnRecord(m) && ++failures > knownFailures) {
            await this.#send(source, { text: textOf(m.content), kind: "error", inReplyTo: [messageId] });
            return;
          }
          if (isFailedTurnRecord(m)) continue;
          if (m.role === "assistant" && textOf(m.content).trim() !== "" && !(m.toolCalls && m.toolCalls.length > 0)) {
            await this.#send(source, { text: textOf(m.content), kind: "reply", inReplyTo: [messageId], sessionId: route.sessionId });
            return;
          }
        }
      }
    })().catch((error: unknown) => this.#log.warn({ err: error, key }, "relaying a reply from another replica failed"));
  }

  // --- workers -----------------------------------------------------------------------

  #startWorker(
    key: string,
    source: SessionSource,
    lease: Lease | null,
    first:
      | { messages: InboundMessage[]; durable: () => void; failed: (e: unknown) => void; claims?: InboundClaim[] | undefined }
      | { resume: SessionEntry }
      | { rerun: SessionEntry; ids: string[]; model?: string | undefined }
      | null,
  ): void {
    const state: Running = { phase: "between", more: false, controller: null, abortReason: null, lease, renewTimer: null, done: Promise.resolve(), source };
    this.#running.set(key, state);
    if (lease !== null && this.#leases !== null) {
      const every = Math.max(1, (this.#leases.ttlSeconds * 1000) / 3);
      state.renewTimer = setInterval(() => void this.#renew(key, state), every);
      state.renewTimer.unref();
    }
    state.done = (async () => {
      try {
        // A freshly acquired lease on a key whose turn is still marked as running: the replica
        // that held it died mid-turn. That turn is resumed first, so a message that reached this
        // replica before the sweep did never overtakes it.
        if (lease !== null && (first === null || "messages" in first)) await this.#resumeOrphanedTurn(key, state);
        if (first !== null && "messages" in first) {
          await this.#turn(key, state, first.messages, { durable: first.durable, failed: first.failed, claims: first.claims });
        } else if (first !== null && "resume" in first) {
          await this.#resumeTurn(key, state, first.resume);
        } else if (first !== null && "rerun" in first) {
          await this.#rerunTurn(key, state, first.rerun, first.ids, source, first.model);
        }
        // An interrupted worker stops (`/stop`, `/new`, `/resume` decide what happens to the queue).
        while (this.#accepting && state.abortReason === null) {
          state.more = false;
          const item = await this.queue.promote(key);
          if (item === null) {
            // A message queued while the claim ran sets `more`: look again. Deciding to stop
            // and leaving #running happen in one synchronous step, so no queued message is
            // left without a worker (and no later message overtakes it).
            if (state.more) continue;
            break;
          }
          // Interrupted while claiming (`/new`, `/stop` between two turns): the claimed message's
          // turn never started. A stop drops it with the rest of the queue; a shutdown leaves it
          // claimed, to be replayed after the restart.
          if (state.abortReason !== null) {
            if (state.abortReason === "stop") await this.queue.complete(key, item.id);
            break;
          }
          if (this.#metrics.queueDepthChanged !== undefined) this.#metrics.queueDepthChanged(key, await this.queue.depth(key));
          const messages = item.payloads as InboundMessage[];
          let completed = false;
          const complete = async (): Promise<void> => {
            if (!completed) {
              completed = true;
              await this.queue.complete(key, item.id);
            }
          };
          await this.#turn(key, state, messages, { durable: () => void complete(), failed: () => {} });
          await complete();
        }
      } catch (error) {
        this.#log.error({ err: error, key }, "session worker failed");
      } finally {
        if (state.renewTimer !== null) clearInterval(state.renewTimer);
        if (state.lease === null) this.#running.delete(key);
        else {
          // The worker leaves #running only once its release is through. This process holds
          // the key under one holder name, so acquiring it again meanwhile would get this very
          // lease (same token), which the release then drops: the next turn's fenced writes
          // would fail. A message that arrives meanwhile is queued, and run below.
          await this.#release(key, state.lease);
          this.#running.delete(key);
          try {
            // A message another replica queued while this one held the lease must not wait.
            if (this.#accepting && (await this.db.listQueue(key)).length > 0) await this.#kick(key, source);
          } catch (error) {
            this.#log.warn({ err: error, key }, "checking the queue after releasing the lease failed");
          }
        }
      }
    })();
  }

  async #acquire(key: string): Promise<Lease | null | false> {
    const leases = this.#leases;
    if (leases === null) return null;
    const lease = await this.#leaseOp(key, () => this.db.acquireLease(key, leases.holder, { ttlSeconds: leases.ttlSeconds, now: this.store.clock.now() }));
    return lease ?? false;
  }

  /**
   * Runs this process's acquires and releases of one key one after the other. Every worker
   * here holds a key under the same holder name, so an acquire that overtook a release (or
   * a release that overtook an acquire) would hand out the token the other then drops.
   */
  #leaseOp<T>(key: string, op: () => Promise<T>): Promise<T> {
    const result = (this.#leaseOps.get(key) ?? Promise.resolve()).then(op);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.#leaseOps.set(key, tail);
    void tail.then(() => {
      if (this.#leaseOps.get(key) === tail) this.#leaseOps.delete(key);
    });
    return result;
  }

  /**
   * Gives back a lease acquired for a worker that did not start (one already runs here).
   * That worker holds the same lease (same holder, same token): it is not released then.
   */
  async #dropUnused(key: string, lease: Lease): Promise<void> {
    if (this.#running.get(key)?.lease?.token === lease.token) return;
    await this.#release(key, lease);
  }

  async #renew(key: string, state: Running): Promise<void> {
    if (state.lease === null || this.#leases === null) return;
    try {
      const renewed = await this.db.renewLease(key, this.#leases.holder, state.lease.token, {
        ttlSeconds: this.#leases.ttlSeconds,
        now: this.store.clock.now(),
      });
      if (renewed === null) {
        this.#log.warn({ key }, "lost the session lease; stopping the turn");
        state.abortReason ??= "shutdown";
        state.controller?.abort();
      } else {
        state.lease = renewed;
      }
    } catch (error) {
      this.#log.warn({ err: error, key }, "lease renewal failed");
    }
  }

  async #release(key: string, lease: Lease): Promise<void> {
    const leases = this.#leases;
    if (leases === null) return;
    await this.#leaseOp(key, () => this.db.releaseLease(key, leases.holder, lease.token)).catch((error: unknown) => {
      this.#log.warn({ err: error, key }, "lease release failed");
    });
  }

  #fence(key: string, state: Running): { fence: { key: string; token: number } } | undefined {
    return state.lease === null ? undefined : { fence: { key, token: state.lease.token } };
  }

  async #timed<T>(operation: string, run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await run();
    } finally {
      this.#metrics.storeCall?.(operation, (performance.now() - started) / 1000);
    }
  }

  /** One turn: store the user message(s), run the agent, commit, reply. */
  async #turn(key: string, state: Running, messages: InboundMessage[], hooks: TurnHooks): Promise<void> {
    state.phase = "turn";
    try {
      await this.#turnSteps(key, state, messages, hooks);
    } finally {
      state.phase = "between";
    }
  }

  async #turnSteps(key: string, state: Running, messages: InboundMessage[], hooks: TurnHooks): Promise<void> {
    const started = performance.now();
    const source = messages[messages.length - 1]!.source;
    const ids = messages.map((m) => m.messageId ?? "").filter(Boolean);
    if (await this.#refusedWhileFrozen(key, source, ids, hooks)) return;
    let entry: SessionEntry;
    try {
      // A compression whose summary is written switches to its child first (one write).
      await this.compressor.beforeTurn(key);
      // Routing decision, turn marker and the user message(s): one write.
      const fence = this.#fence(key, state);
      const claims = hooks.claims === undefined ? {} : { claims: hooks.claims };
      entry = await this.#timed("startTurn", () =>
        this.store.startTurn(source, userMessagesOf(messages, this.store.clock.now()), { key, ...fence, ...claims }),
      );
    } catch (error) {
      hooks.failed(error);
      // Another replica stored this message first: admission answers `duplicate`, nothing to log.
      if (isClaimedElsewhere(error)) return;
      throw error;
    }
    hooks.durable();
    if (entry.resetNotice?.user) await this.notify(source, entry.resetNotice.user, ids, "notice");
    const notices = entry.resetNotice ? [entry.resetNotice.model] : [];
    const model = messages[messages.length - 1]!.model ?? undefined;
    // A message the gateway wrote itself (a handoff's note) has no sender to name.
    const senders = messages.map((m) => (syntheticMessageKind({ role: "user", platformMessageId: m.messageId ?? null }) === null ? m.source : null));
    await this.#runAgent(key, state, entry, source, ids, notices, started, model, { senders });
  }

  /** Auto-resume after a restart: the user message is already stored; run the agent on the history. */
  /** Resumes the turn another holder of this key's lease left unfinished, if there is one (see {@link GatewayRunner.sweep}). */
  async #resumeOrphanedTurn(key: string, state: Running): Promise<void> {
    // The route alone tells whether a turn is marked (one read; the entry adds the session's).
    const route = await this.db.getRoute(key);
    if (route === null || route.turnStartedAt === null || route.suspended) return;
    const entry = await this.store.getEntry(key);
    if (entry === null || entry.turnStartedAt === null || entry.suspended) return;
    const source = (entry.origin as SessionSource | null) ?? { platform: entry.platform ?? "unknown", chatType: "dm" };
    if (!this.#serves(source.platform)) return;
    this.#log.info({ key }, "resuming a turn another replica left unfinished");
    try {
      await this.#resumeTurn(key, state, entry);
    } catch (error) {
      // The turn stays marked; the next sweep tries again. The new message still runs.
      this.#log.error({ err: error, key }, "resuming a turn another replica left unfinished failed");
    }
  }

  async #resumeTurn(key: string, state: Running, entry: SessionEntry): Promise<void> {
    state.phase = "turn";
    try {
      await this.#resumeSteps(key, state, entry);
    } finally {
      state.phase = "between";
    }
  }

  async #resumeSteps(key: string, state: Running, entry: SessionEntry): Promise<void> {
    const started = performance.now();
    const history = await this.#timed("getConversation", () => this.db.getConversation(entry.sessionId, { lastMessages: RESUME_TAIL }));
    const last = history[history.length - 1];
    if (last === undefined || last.role === "assistant") {
      // Nothing left to answer: the interrupted turn had already stored its reply.
      await this.store.clearResumePending(key);
      await this.store.failTurn(key);
      return;
    }
    await this.store.beginTurn(key);
    const repair = missingToolResults(history);
    if (repair.length > 0) await this.db.appendTurn(entry.sessionId, repair, this.#fence(key, state));
    const notice =
      "[System note: the previous turn was interrupted by a gateway restart. Continue from the conversation as it stands; " +
      "do not re-run tool calls that already have results, and say so if a tool call was cut off.]";
    const source = (entry.origin as SessionSource | null) ?? { platform: entry.platform ?? "unknown", chatType: "dm" };
    // The reply answers the last stored user message (so a webhook receiver can link it).
    const lastUser = (await this.db.getMessages(entry.sessionId, { lastMessages: 50 })).filter((m) => m.role === "user").at(-1);
    const ids = lastUser?.platformMessageId ? [lastUser.platformMessageId] : [];
    // Who sent the interrupted message is not stored: in a chat, the resumed turn acts for nobody.
    await this.#runAgent(key, state, entry, source, ids, [notice], started, undefined, { speakerUnknown: true });
  }

  /** A retry of a failed turn: its user message is stored; run the agent again on the history. */
  async #rerunTurn(key: string, state: Running, entry: SessionEntry, ids: string[], source: SessionSource, model?: string): Promise<void> {
    state.phase = "turn";
    try {
      await this.store.beginTurn(key);
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
    return speakerOfSource(this.store.aliases, this.db, source, unknown);
  }

  /** The memory section for the turn's speaker (none for an unknown one); a failure is logged, not fatal. */
  async #memorySection(speaker: TurnSpeaker, sessionId: string): Promise<string[]> {
    if (this.#memoryFor === null || speaker.userId === null) return [];
    try {
      const section = await this.#memoryFor(speaker);
      return section === null || section.trim() === "" ? [] : [section];
    } catch (error) {
      this.#log.warn({ err: error, sessionId }, "reading the speaker's memory failed; the turn runs without it");
      return [];
    }
  }

  /** The messages of a turn's request within the model's window (see {@link TurnContexts}). */
  async #context(input: Parameters<TurnContexts["assemble"]>[0]): Promise<AssembledContext> {
    return this.#timed("buildContext", () => this.#contexts.assemble(input));
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
    options: { rerun?: boolean; senders?: Array<SessionSource | null>; speakerUnknown?: boolean } = {},
  ): Promise<void> {
    let history: ConversationMessage[];
    let given: ConversationMessage[];
    let prompt: TurnPrompt;
    let assembled: AssembledContext;
    let speaker: TurnSpeaker;
    let agent: Agent | undefined;
    try {
      // Marked mid-turn by #agentFor in the step it is taken from the cache.
      agent = await this.#agentFor(key, entry);
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
        this.#log.warn({ err: error, sessionId: entry.sessionId }, "storing the session's system prompt failed");
      });
    } catch (error) {
      if (agent !== undefined) this.agents.endTurn(key);
      // The chat hears that its message will not be answered instead of waiting for a reply that never
      // comes (an HTTP request would hang); the worker logs the error with its details.
      await this.notify(source, "Something went wrong before the model could answer; the gateway's log has the details.", ids, "error").catch(
        (notifyError: unknown) => this.#log.warn({ err: notifyError, key }, "telling the chat that its turn failed failed"),
      );
      throw error;
    }
    const controller = new AbortController();
    state.controller = controller;
    // A /stop or a shutdown that came while the turn was being prepared (no controller yet) stops it now.
    if (state.abortReason !== null) controller.abort();
    let produced: NewMessage[] = [];
    let usage: import("../store/index.js").UsageUpdate | undefined;
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
        this.#log.warn({ err: error, ref: failureRefId, key, sessionId: entry.sessionId }, "agent turn failed");
      }
    } finally {
      this.agents.endTurn(key);
      state.controller = null;
    }
    const turn = closeOpenToolCalls(produced);
    // A failed turn is recorded, so the next model call sees its user message once and that it went unanswered.
    if (outcome === "error") turn.push(failedTurnRecord((failure as Error)?.message ?? String(failure), this.store.clock.now()));
    // On shutdown the turn marker stays: the next start counts the interruption and resumes.
    const finish = outcome === "ok" ? "ok" : outcome === "error" || state.abortReason === "stop" ? "failed" : "interrupted";
    try {
      await this.#timed("finishTurn", () =>
        this.store.finishTurn(key, {
          sessionId: entry.sessionId,
          messages: turn,
          usage,
          lastPromptTokens: promptTokens,
          outcome: finish,
          fence: this.#fence(key, state)?.fence,
        }),
      );
    } catch (error) {
      if (error instanceof ThreadlineError && error.code === "TL_ERR_LEASE_LOST") {
        this.#log.warn({ key }, "a newer lease holder owns this session; this turn's result was not stored");
        return;
      }
      throw error;
    }
    // The measure tells the conversation's size after the turn (compression reads it).
    await this.#contexts.recordTurn(entry.sessionId, turn);
    if (outcome === "ok") this.#turnsCompleted += 1;
    this.#metrics.turnFinished?.(outcome, (performance.now() - started) / 1000);
    const reply = replyTextOf(turn);
    if (outcome === "ok") {
      const out: OutboundMessage = { text: reply, kind: "reply", inReplyTo: ids, sessionId: entry.sessionId };
      if (usage) out.usage = { promptTokens: usage.inputTokens ?? 0, completionTokens: usage.outputTokens ?? 0 };
      if (answeredBy !== undefined) out.model = answeredBy;
      await this.#send(source, out);
      if (answeredBy !== undefined) await this.#recordModel(entry.sessionId, answeredBy);
      // Only a session's first exchange is titled: a window that left messages out is not one.
      if (assembled.built.dropped === 0) this.#titleInBackground(entry, history, reply);
      // Due early too when the conversation nears what a request may hold (the window less the
      // reply's share, the prompt and the tools can be below the threshold): the summary runs
      // while there is still room, and nothing is left out unsummarised.
      const measure = this.contextMeasure(entry.sessionId);
      this.#afterTurn(key, entry, source, assembled.built.dropped > 0 || (measure !== undefined && measure.fullTokens > measure.budget * WINDOW_FULL_SHARE));
    } else if (outcome === "error") {
      // The chat gets a ref, the log above has the provider's detail under it (the terminal sees both).
      await this.notify(source, modelFailureText(source.platform, failureRefId, failure), ids, "error");
    } else if (outcome === "interrupted" && state.abortReason === "stop") {
      await this.notify(source, "Stopped.", ids, "notice");
    }
  }

  /**
   * The agent of `key`, marked mid-turn (the caller ends the turn). It is marked in the same
   * synchronous step that takes it from the cache or puts it in: across an await, another
   * session's `set()` could evict it from a full cache before its turn began.
   */
  async #agentFor(key: string, entry: SessionEntry): Promise<Agent> {
    const cached = this.agents.get(key);
    if (cached !== undefined) {
      this.agents.beginTurn(key);
      return cached;
    }
    const agent = await this.#factory(entry);
    this.agents.set(key, agent);
    this.agents.beginTurn(key);
    return agent;
  }

  /** The agent's `onDelta` for a turn whose sender wants the reply streamed, else `undefined`. */
  #deltaSink(source: SessionSource, ids: string[], sessionId: string): ((text: string) => void) | undefined {
    const adapter = this.#adapters.get(source.platform);
    if (adapter?.sendDelta === undefined || adapter.wantsStream?.(ids) !== true) return undefined;
    return (text) => {
      try {
        adapter.sendDelta!(source, { text, inReplyTo: ids, sessionId });
      } catch (error) {
        this.#log.warn({ err: error, platform: source.platform }, "streaming a reply piece failed");
      }
    };
  }

  /** Records the model that answered on the session (`show`, `stats`, cost by model), once per change. */
  async #recordModel(sessionId: string, model: string): Promise<void> {
    if (this.#recordedModels.get(sessionId) === model) return;
    try {
      await this.db.updateSession(sessionId, { model });
      this.#recordedModels.delete(sessionId);
      this.#recordedModels.set(sessionId, model);
      if (this.#recordedModels.size > RECORDED_MODELS) {
        const oldest = this.#recordedModels.keys().next().value;
        if (oldest !== undefined) this.#recordedModels.delete(oldest);
      }
    } catch (error) {
      this.#log.warn({ err: error, sessionId }, "recording the session's model failed");
    }
  }

  /** Titles an untitled session after its first exchange, in the background: the turn (and the next one) never waits for it. */
  #titleInBackground(entry: SessionEntry, history: ConversationMessage[], reply: string): void {
    if (this.#titler === null || this.#titleAbort.signal.aborted) return;
    const users = history.filter((m) => m.role === "user");
    if (users.length !== 1 || history.length > 2) return;
    const running: Promise<void> = this.#maybeTitle(entry, textOf(users[0]!.content), reply).finally(() => this.#titles.delete(running));
    this.#titles.add(running);
  }

  async #maybeTitle(entry: SessionEntry, userText: string, reply: string): Promise<void> {
    if (this.#titler === null) return;
    try {
      const session = await this.db.getSession(entry.sessionId);
      if (session === null || session.title !== null) return;
      const proposed = await this.#titler.proposeTitle({ userText, replyText: reply, signal: this.#titleAbort.signal });
      if (proposed === null || proposed.trim() === "" || this.#titleAbort.signal.aborted) return;
      // Someone may have named the session (`/title`) while the titler was thinking: theirs wins.
      if ((await this.db.getSession(entry.sessionId))?.title !== null) return;
      // An unrelated session holding the same title makes this one "title (2)": `#N` is for continuations.
      await setTitleAvoidingCollision(this.db, entry.sessionId, proposed, "unrelated");
    } catch (error) {
      this.#log.warn({ err: error, sessionId: entry.sessionId }, "titling failed");
    }
  }

  // --- outbound ------------------------------------------------------------------------

  async #send(source: SessionSource, message: OutboundMessage): Promise<void> {
    const adapter = this.#adapters.get(source.platform);
    if (adapter === undefined) {
      this.#log.warn({ platform: source.platform }, "no adapter for the platform; reply not delivered");
      return;
    }
    try {
      await adapter.send(source, message);
    } catch (error) {
      // The reply is stored already; a failed send is logged with the key and counted, never thrown.
      this.#metrics.sendFailed?.(source.platform, message.kind);
      const key = await this.store.sessionKeyFor(source).catch(() => null);
      this.#log.error(
        { err: error, platform: source.platform, key, sessionId: message.sessionId ?? null, kind: message.kind },
        "sending to the platform failed",
      );
    }
  }

  /** Sends a notice or error to the chat of `source`. */
  async notify(
    source: SessionSource,
    text: string,
    inReplyTo: string[],
    kind: OutboundMessage["kind"] = "notice",
    extra: Pick<OutboundMessage, "refused"> = {},
  ): Promise<void> {
    await this.#send(source, { text, kind, inReplyTo, ...(extra.refused === true ? { refused: true } : {}) });
  }

  // --- command host ------------------------------------------------------------------------

  /** Whether the sender is an admin of their platform (`adapters.<platform>.admins`, `gateway.admins`). */
  isAdmin(source: SessionSource): Promise<boolean> {
    return this.#gate === null ? Promise.resolve(true) : this.#gate.isAdmin(source);
  }

  /** Where pairing codes live (`/pair approve`); `null` when the runner has none. */
  get pairing(): PairingGateStore | null {
    return this.#pairing;
  }

  /** Whether a turn runs for the key in this process (a worker between turns does not count). */
  isBusy(key: string): boolean {
    return this.#running.get(key)?.phase === "turn";
  }

  /** Aborts the running turn of a key (`stop`: the turn ends; `shutdown`: it is left for resume). Resolves when it has stopped. */
  async interrupt(key: string, reason: "stop" | "shutdown"): Promise<boolean> {
    const state = this.#running.get(key);
    if (state === undefined) return false;
    state.abortReason = reason;
    state.controller?.abort();
    await state.done;
    return true;
  }

  /** Starts a worker for the key's queued messages (after a command interrupted one). */
  async resumeQueue(key: string, source: SessionSource): Promise<void> {
    if ((await this.db.listQueue(key)).length > 0) await this.#kick(key, source);
  }

  /** Runs a new turn with one message for a key now (or queues it when busy). */
  async runMessage(key: string, message: InboundMessage): Promise<void> {
    if (!(await this.#startNow(key, message))) await this.enqueue(key, message);
  }

  /** Logs a failure a chat was told about by `ref` only (see {@link CommandHost.logFailure}). */
  logFailure(ref: string, error: unknown, key: string): void {
    this.#log.warn({ err: error, ref, key }, "a command failed");
  }

  /** `/compress [focus]`: compresses the key's session now, on the automatic compression's code (see {@link SessionCompressor}). */
  async compress(key: string, source: SessionSource, focus: string | null): Promise<CompressOutcome> {
    const entry = await this.store.getEntry(key);
    if (entry === null) return { status: "nothing" };
    return this.compressor.compressNow(key, entry, source, focus);
  }

  // --- compression -------------------------------------------------------------------------

  #newCompressor(options: SessionCompressorOptions): SessionCompressor {
    const host = {
      store: this.store,
      agentFor: (key: string, entry: SessionEntry) => this.#agentFor(key, entry),
      endAgentTurn: (key: string) => void this.agents.endTurn(key),
      notify: (source: SessionSource, text: string, inReplyTo: string[], kind?: OutboundMessage["kind"]) => this.notify(source, text, inReplyTo, kind),
      log: this.#log,
      resetContext: async (entry: SessionEntry) => {
        // As before a reset: the session's person (nobody in a shared group) and their memory.
        const speaker = await speakerOfExpiringSession(this.store.aliases, this.db, entry.origin, this.store.keySettings);
        if (speaker === null) return {};
        const memory = speaker.userId === null || this.#memoryFor === null ? null : await this.#memoryFor(speaker).catch(() => null);
        return { speaker, ...(memory === null ? {} : { contextPrompt: memory }) };
      },
    };
    return new SessionCompressor(host, { ...(this.#leases === null ? {} : { holder: `${this.#leases.holder}:compress` }), ...options });
  }

  /** After a turn's reply was sent: a compression starts in the background when the session is due (never awaited). */
  #afterTurn(key: string, entry: SessionEntry, source: SessionSource, windowFull: boolean): void {
    this.compressor.afterTurn(key, entry, source, { windowFull });
  }

  /**
   * A session frozen after its summary failed (`compression.abortOnSummaryFailure`) takes no
   * turn until `/compress` or `/new`: the message is refused with a notice saying so.
   */
  async #refusedWhileFrozen(key: string, source: SessionSource, ids: string[], hooks: { durable: () => void }): Promise<boolean> {
    if (!this.compressor.settings.abortOnSummaryFailure) return false;
    const route = await this.db.getRoute(key);
    if (route === null || !(await this.compressor.isFrozen(route.sessionId))) return false;
    hooks.durable();
    await this.notify(
      source,
      "This conversation is paused because its summary failed: send /compress to try the summary again, or /new to start a fresh session. Your message was not sent to the model.",
      ids,
      "error",
      { refused: true },
    );
    return true;
  }

  // --- handoffs ---------------------------------------------------------------------------

  /** The connected adapter of a platform (`undefined` when none, or while not accepting). */
  adapter(platform: string): Adapter | undefined {
    return this.#accepting ? this.#adapters.get(platform) : undefined;
  }

  /** Resolves once no worker runs for the key in this process (its running and queued turns are done). */
  async whenIdle(key: string): Promise<void> {
    for (let state = this.#running.get(key); state !== undefined; state = this.#running.get(key)) await state.done;
  }

  /**
   * Carries out pending cross-platform handoffs (see {@link HandoffWorker}) to the platforms
   * that have a home channel in `homeChannels` and a connected adapter. Resolves with how
   * many it ended; a call while a pass runs joins it. `serve` calls this every second.
   */
  processHandoffs(homeChannels: HomeChannels, options: ProcessHandoffsOptions = {}): Promise<number> {
    const worker = (this.#handoffs ??= new HandoffWorker(this, { logger: this.#log, ...(this.#leases === null ? {} : { holder: this.#leases.holder }) }));
    // Home channels set from a chat with /sethome count too (the config file's win over them).
    return effectiveHomeChannels(this.db, homeChannels).then((homes) => worker.process(homes, options));
  }

  /** The home channels of the config (from `contextConfig.homeChannels`); `/sethome` ones live in the database. */
  get configuredHomeChannels(): HomeChannels {
    return this.#contextConfig.homeChannels ?? {};
  }

  // --- recovery and shutdown -------------------------------------------------------------

  /**
   * Resumes interrupted sessions (from `GatewayRecovery.startup().autoResume`). Only
   * sessions of platforms this gateway has an adapter for are resumed: a turn whose reply
   * cannot be delivered is not run (a terminal session keeps its resume marker for
   * `threadline chat --resume`).
   */
  async resume(entries: SessionEntry[]): Promise<number> {
    let started = 0;
    for (const entry of entries) {
      if (this.#running.has(entry.key)) continue;
      const source = (entry.origin as SessionSource | null) ?? { platform: entry.platform ?? "unknown", chatType: "dm" };
      if (!this.#serves(source.platform)) {
        this.#log.info({ key: entry.key, platform: source.platform }, "not resuming: this gateway has no adapter for the session's platform");
        continue;
      }
      const lease = await this.#acquire(entry.key);
      if (lease === false) continue;
      this.#startWorker(entry.key, source, lease, { resume: entry });
      started += 1;
    }
    return started;
  }

  /**
   * Stops accepting messages and waits for running turns (and background titles) up to
   * `timeoutMs`; turns still running then are aborted and left marked for resume, titles
   * still running are abandoned. Queued messages stay queued.
   */
  async drain(timeoutMs: number): Promise<DrainResult> {
    this.#accepting = false;
    await Promise.all(
      [...this.#adapters.values()].map((adapter) =>
        adapter.stopReceiving?.().catch((error: unknown) => this.#log.warn({ err: error, platform: adapter.platform }, "stopping an adapter's intake failed")),
      ),
    );
    const all = Promise.all([...this.#running.values()].map((state) => state.done)).then(() => Promise.all([...this.#titles]));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!timedOut) return { drained: true, stillRunning: [] };
    const stillRunning = [...this.#running.keys()];
    await Promise.all(stillRunning.map((key) => this.interrupt(key, "shutdown")));
    await this.#stopTitles();
    // Only titles still running (best effort, aborted above): the turns themselves drained.
    return { drained: stillRunning.length === 0, stillRunning };
  }

  /** Aborts background titles still running and waits for them to settle (they write nothing once aborted). */
  async #stopTitles(): Promise<void> {
    this.#titleAbort.abort();
    await Promise.all([...this.#titles, this.compressor.stop()]);
  }

  /** Disconnects every adapter, stops background titles and disposes cached agents. */
  async stop(): Promise<void> {
    this.#accepting = false;
    await this.#stopTitles();
    for (const adapter of this.#adapters.values()) await adapter.disconnect().catch(() => {});
    this.agents.clear();
    await this.agents.waitForDisposals();
  }

  /** Whether replies to a platform can be delivered here (an adapter for it was added). */
  #serves(platform: string): boolean {
    return this.#adapters.has(platform);
  }

  /**
   * The first message of a key in this process: remember the platform ids of the session's
   * recent user messages, so a platform that redelivers after a crash or reconnect (an
   * unconfirmed Telegram update, a replayed Discord event) does not start a second turn.
   */
  async #seedRecentIds(key: string): Promise<void> {
    if (this.#seededKeys.size >= RECENT_IDS) this.#seededKeys.clear();
    this.#seededKeys.add(key);
    const route = await this.db.getRoute(key);
    if (route === null) return;
    const recent = await this.db.getMessages(route.sessionId, { lastMessages: 50 });
    for (const m of recent) if (m.role === "user" && m.platformMessageId) this.#remember(`${key}\u0000${m.platformMessageId}`);
  }

  #remember(id: string): void {
    this.#recentIds.add(id);
    if (this.#recentIds.size > RECENT_IDS) {
      const oldest = this.#recentIds.values().next().value;
      if (oldest !== undefined) this.#recentIds.delete(oldest);
    }
  }
}
