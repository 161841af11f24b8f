/**
 * `GatewayRunner`: wires adapters, the {@link SessionRouter}, the durable queue and an
 * {@link Agent}. For every inbound message: session key → entry → run a turn now, or
 * queue it when the session is busy. A turn stores the user message before the model
 * is called, loads the newest history that fits the model's context window, runs the agent, commits the reply with every
 * tool call and its result as one atomic turn, updates totals, sends the reply and
 * promotes the queue head. One turn at a time per session; sessions run concurrently.
 *
 * The runner is the front of its parts: the admission of inbound messages
 * ({@link Admission}: access, commands, de-duplication, run now or queue), the session
 * workers and their leases ({@link SessionWorkers}), the turns ({@link TurnRunner}) and the
 * background titles ({@link SessionTitles}).
 *
 * @module
 */
import type { Agent, Titler, TurnSpeaker } from "../agents/index.js";
import { mediaSettingsOf, type MediaSettings } from "../media/index.js";
import { InternalError, InvalidInputError } from "../store/index.js";
import type { Adapter, AdapterEvents, DeliveryFailure, InboundAck, InboundMessage, OutboundMessage } from "./adapter.js";
import { AccessGate, type PairingGateStore } from "./access-gate.js";
import type { PlatformAccess } from "./access-policy.js";
import { Admission } from "./admission.js";
import { AgentCache } from "./agent-cache.js";
import { noopLogger, type GatewayLogger } from "./gateway-logger.js";
import { redactingLogger } from "./log-redaction.js";
import type { HomeChannels } from "./handoff.js";
import { effectiveHomeChannels } from "./home-channels.js";
import { HandoffWorker, type ProcessHandoffsOptions } from "./handoff-worker.js";
import { storeReceiverLeases } from "./receiver-lease.js";
import type { StaleHolderTest } from "./stale-leases.js";
import type { InboundBuffer } from "./inbound-buffer.js";
import type { GatewayMetrics, RunnerContext, RunnerLeases } from "./runner-context.js";
import type { SessionEntry } from "./session-entry.js";
import { SessionQueue } from "./session-queue.js";
import type { SessionContextConfig } from "./session-context.js";
import type { SessionSource } from "./session-source.js";
import type { GatewayDB, SessionRouter } from "./session-router.js";
import { SessionTitles } from "./session-titles.js";
import { SessionWorkers } from "./session-workers.js";
import type { CommandHost } from "./slash-commands.js";
import { TurnContexts, type ContextMeasure, type ContextWindowResolver } from "./turn-context.js";
import { SessionCompressor, type CompressOutcome, type SessionCompressorOptions } from "./session-compressor.js";
import { TurnRunner } from "./turn-runner.js";
import { speakerOfExpiringSession } from "./turn-speaker.js";

export type { GatewayMetrics } from "./runner-context.js";

/** Options of a {@link GatewayRunner}. */
export interface GatewayRunnerOptions {
  store: SessionRouter;
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
   * fence every transcript write with its token. `holder` names this process of the replica
   * (`leaseHolderName`). `stale` says which other holders are dead earlier processes of
   * this replica (`staleHolderTest`): their session and receiver leases are taken over at
   * once instead of after they expire.
   */
  leases?: { holder: string; ttlSeconds?: number; stale?: StaleHolderTest } | null;
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
  /**
   * Inbound media (`media.*`): `maxBytes` (default 20 MiB), `downloadTimeoutSeconds` (default 60)
   * and `maxImagesInContext` (default 4). Each turn reads its messages' attachments through their
   * platform adapter's `fetchMedia` (or decodes their `data:` URL), keeps them in the store and
   * transcribes audio with the agent's `transcribe` before the user messages are stored. At most
   * `maxImagesInContext` images (the newest) go to the model as image parts in a turn's request,
   * when the agent's `acceptsImages(model)` says it takes them; older ones go as text placeholders
   * (0: never send images).
   */
  media?: Partial<MediaSettings>;
}

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
  readonly store: SessionRouter;
  readonly db: GatewayDB;
  readonly queue: SessionQueue;
  readonly agents: AgentCache<Agent>;
  readonly #adapters = new Map<string, Adapter>();
  readonly #contextConfig: SessionContextConfig;
  readonly #memoryFor: ((speaker: TurnSpeaker) => Promise<string | null>) | null;
  readonly #log: GatewayLogger;
  readonly #metrics: GatewayMetrics;
  readonly #leases: RunnerLeases | null;
  /** Automatic compression and `/compress` (see {@link SessionCompressor}). */
  readonly compressor: SessionCompressor;
  /** What the parts below share (see {@link RunnerContext}). */
  readonly #context: RunnerContext;
  readonly #titles: SessionTitles;
  readonly #turns: TurnRunner;
  readonly #workers: SessionWorkers;
  readonly #admission: Admission;
  #accepting = false;
  #buffer: InboundBuffer<InboundMessage> | null = null;
  #handoffs: HandoffWorker | null = null;
  readonly #gate: AccessGate | null;
  readonly #pairing: PairingGateStore | null;

  constructor(options: GatewayRunnerOptions) {
    this.store = options.store;
    this.db = options.store.db;
    this.queue = options.queue ?? new SessionQueue(this.db, { clock: this.store.clock });
    this.agents = options.agentCache ?? new AgentCache<Agent>({ clock: this.store.clock });
    for (const adapter of options.adapters ?? []) this.#adapters.set(adapter.platform, adapter);
    this.#contextConfig = {
      keySettings: options.store.keySettings,
      ...options.contextConfig,
      connectedPlatforms: options.contextConfig?.connectedPlatforms ?? [...this.#adapters.keys()],
    };
    this.#memoryFor = options.memoryFor ?? null;
    // Session keys with phone numbers (WhatsApp, Signal) are logged as hashes.
    this.#log = redactingLogger(options.logger ?? noopLogger);
    this.#metrics = options.metrics ?? {};
    this.#leases = options.leases
      ? { holder: options.leases.holder, ttlSeconds: options.leases.ttlSeconds ?? 30, stale: options.leases.stale ?? (() => false) }
      : null;
    // Several replicas: a connection-style adapter receives in one of them at a time (see ReceiverLease).
    if (this.#leases !== null)
      this.#adapterEvents.receiverLease = storeReceiverLeases(this.db, { ...this.#leases, clock: this.store.clock, logger: this.#log });
    this.#context = {
      store: this.store,
      db: this.db,
      queue: this.queue,
      log: this.#log,
      metrics: this.#metrics,
      leases: this.#leases,
      adapters: this.#adapters,
      mediaSettings: mediaSettingsOf(options.media),
      isAccepting: () => this.#accepting,
      send: (source, message) => this.#send(source, message),
      notify: (source, text, inReplyTo, kind, extra) => this.notify(source, text, inReplyTo, kind, extra),
    };
    this.#titles = new SessionTitles(this.db, options.titler ?? null, this.#log);
    // Compression measures against the same window the turns are built within.
    const windowFor = options.contextWindow;
    this.compressor = this.#newCompressor({
      ...(windowFor === undefined ? {} : { contextWindow: (model: string | null) => windowFor(model ?? undefined).tokens }),
      ...options.compression,
    });
    this.#turns = new TurnRunner({
      context: this.#context,
      agentFactory: options.agentFactory,
      agents: this.agents,
      contexts: new TurnContexts(this.db, {
        ...(options.contextWindow === undefined ? {} : { windowFor: options.contextWindow }),
        ...(options.historyLimit === undefined ? {} : { historyLimit: options.historyLimit }),
        maxImagesInContext: this.#context.mediaSettings.maxImagesInContext,
      }),
      contextConfig: this.#contextConfig,
      redactPii: options.redactPii ?? false,
      memoryFor: this.#memoryFor,
      compressor: this.compressor,
      titles: this.#titles,
    });
    this.#workers = new SessionWorkers(this.#context, this.#turns);
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
    this.#admission = new Admission(this.#context, this.#workers, this.#gate, this);
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
    return this.#workers.running.size;
  }

  /** Keys of the sessions with a turn running (or a worker between queued turns) here, and what each is doing. */
  get runningSessions(): Array<{ key: string; platform: string; phase: "turn" | "between" }> {
    return [...this.#workers.running].map(([key, r]) => ({ key, platform: r.source.platform, phase: r.phase }));
  }

  /** Platforms of the adapters this runner serves (connected while {@link accepting}). */
  get platforms(): string[] {
    return [...this.#adapters.keys()];
  }

  /** Turns completed since start. */
  get turnsCompleted(): number {
    return this.#turns.turnsCompleted;
  }

  /** Whether the gateway accepts messages. */
  get accepting(): boolean {
    return this.#accepting;
  }

  // --- inbound (see Admission) -------------------------------------------------------

  /**
   * Handles one inbound message; resolves once it is durable (stored or queued), a command
   * ran, or it was refused. Messages of one chat are admitted in the order `handle` was
   * called, so a session's turns follow arrival order.
   */
  handle(message: InboundMessage): Promise<InboundAck> {
    return this.#admission.handle(message);
  }

  /** Queues a message for a key (durably) and makes sure some worker will run it. */
  enqueue(key: string, message: InboundMessage): Promise<InboundAck> {
    return this.#admission.enqueue(key, message);
  }

  /**
   * Runs queued messages of every key (after a restart, or a sweep for keys whose lease
   * holder died). Keys of platforms without an adapter here (a terminal session's queue)
   * are left queued: their replies could not be delivered.
   */
  replayQueues(): Promise<number> {
    return this.#workers.replayQueues();
  }

  /**
   * With leases: resumes turns another replica left unfinished (it died mid-turn; its
   * lease expired), then runs queued messages whose lease is free. `serve` calls this every
   * lease TTL. Returns how many sessions it started.
   */
  sweep(): Promise<number> {
    return this.#workers.sweep();
  }

  /**
   * What the context of a session's last turn measured in this process (the window, what was
   * left out, and the whole conversation's tokens and messages after the turn was stored), or
   * `undefined` when no turn of it ran here since the start.
   */
  contextMeasure(sessionId: string): ContextMeasure | undefined {
    return this.#turns.contextMeasure(sessionId);
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
    return this.#workers.isBusy(key);
  }

  /** Aborts the running turn of a key (`stop`: the turn ends; `shutdown`: it is left for resume). Resolves when it has stopped. */
  interrupt(key: string, reason: "stop" | "shutdown"): Promise<boolean> {
    return this.#workers.interrupt(key, reason);
  }

  /** Starts a worker for the key's queued messages (after a command interrupted one). */
  async resumeQueue(key: string, source: SessionSource): Promise<void> {
    if ((await this.db.listQueue(key)).length > 0) await this.#workers.kick(key, source);
  }

  /** Runs a new turn with one message for a key now (or queues it when busy). */
  runMessage(key: string, message: InboundMessage): Promise<void> {
    return this.#admission.runMessage(key, message);
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
      agentFor: (key: string, entry: SessionEntry) => this.#turns.agentFor(key, entry),
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

  // --- handoffs ---------------------------------------------------------------------------

  /** The connected adapter of a platform (`undefined` when none, or while not accepting). */
  adapter(platform: string): Adapter | undefined {
    return this.#accepting ? this.#adapters.get(platform) : undefined;
  }

  /** Resolves once no worker runs for the key in this process (its running and queued turns are done). */
  whenIdle(key: string): Promise<void> {
    return this.#workers.whenIdle(key);
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
  resume(entries: SessionEntry[]): Promise<number> {
    return this.#workers.resume(entries);
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
    const all = Promise.all([...this.#workers.running.values()].map((state) => state.done)).then(() => this.#titles.settled());
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      all.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!timedOut) return { drained: true, stillRunning: [] };
    const stillRunning = [...this.#workers.running.keys()];
    await Promise.all(stillRunning.map((key) => this.interrupt(key, "shutdown")));
    await this.#stopTitles();
    // Only titles still running (best effort, aborted above): the turns themselves drained.
    return { drained: stillRunning.length === 0, stillRunning };
  }

  /** Aborts background titles still running and waits for them to settle (they write nothing once aborted). */
  async #stopTitles(): Promise<void> {
    await Promise.all([this.#titles.stop(), this.compressor.stop()]);
  }

  /** Disconnects every adapter, stops background titles and disposes cached agents. */
  async stop(): Promise<void> {
    this.#accepting = false;
    await this.#stopTitles();
    for (const adapter of this.#adapters.values()) await adapter.disconnect().catch(() => {});
    this.agents.clear();
    await this.agents.waitForDisposals();
  }
}
