/**
 * The admission of inbound messages to a `GatewayRunner`: access check, slash commands,
 * de-duplication (a platform's redelivered message id, per process; a client's idempotent
 * retry answered from the transcript), then run now or queue. Messages of one chat are
 * admitted in arrival order.
 *
 * @module
 */
import { isDataUrl } from "../media/index.js";
import type { InboundClaim } from "../store/index.js";
import type { InboundAck, InboundMessage } from "./adapter.js";
import type { AccessGate } from "./access-gate.js";
import { claimCommand, inboundClaimOf, isClaimedElsewhere } from "./inbound-claims.js";
import type { RunnerContext } from "./runner-context.js";
import type { InboundEvent } from "./session-queue.js";
import type { SessionSource } from "./session-source.js";
import type { SessionWorkers } from "./session-workers.js";
import { isGatewayCommand, parseSlashCommand, runSlashCommand, type CommandHost } from "./slash-commands.js";
import { isFailedTurnRecord, textOf } from "./turn-messages.js";

/** Platform message ids (and keys seeded with them) this process remembers for de-duplication. */
const RECENT_IDS = 10_000;
/** How often a replica looks for the reply another replica stored for a waiting request. */
const RELAY_POLL_MS = 100;
/** How far back (messages of the current session) an idempotent message id is looked for. */
const IDEMPOTENCY_WINDOW = 100;

/** The admission of one gateway's inbound messages. */
export class Admission {
  readonly #ctx: RunnerContext;
  readonly #workers: SessionWorkers;
  readonly #gate: AccessGate | null;
  /** Runs slash commands (the runner). */
  readonly #commands: CommandHost;
  readonly #recentIds = new Set<string>();
  /** Keys whose recent platform message ids were loaded from the transcript (after a start). */
  readonly #seededKeys = new Set<string>();
  readonly #lanes = new Map<string, Promise<unknown>>();

  constructor(context: RunnerContext, workers: SessionWorkers, gate: AccessGate | null, commands: CommandHost) {
    this.#ctx = context;
    this.#workers = workers;
    this.#gate = gate;
    this.#commands = commands;
  }

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
    const store = this.#ctx.store;
    // Who may talk to the agent is decided before anything about the message is stored.
    if (this.#gate !== null && this.#ctx.isAccepting()) {
      const outcome = await this.#gate.check(message);
      if (!outcome.pass) return { status: "refused", sessionKey: await store.sessionKeyFor(message.source) };
    }
    await store.aliases.learn(message.source);
    const key = await store.sessionKeyFor(message.source);
    if (!this.#ctx.isAccepting()) return { status: "rejected", sessionKey: key, reason: "The gateway is shutting down; send the message again in a moment." };
    const command = parseSlashCommand(message.text);
    if (command !== null && isGatewayCommand(command)) {
      // Claimed before it runs: a command delivered to several replicas runs once.
      if (!(await claimCommand(this.#ctx.db, message))) return { status: "duplicate", sessionKey: key };
      await runSlashCommand(this.#commands, key, message, command);
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
      // Attachments to download wait in the durable queue: the platform's delivery is acknowledged
      // now (a webhook must answer fast), and the turn downloads them.
      if (!this.#downloadsInTurn(message) && (await this.#startNow(key, message, claims))) return { status: "accepted", sessionKey: key };
    } catch (error) {
      if (isClaimedElsewhere(error)) return { status: "duplicate", sessionKey: key };
      throw error;
    }
    // The adapter that handed the message over tells the chat why a rejected one was not taken.
    return this.enqueue(key, message, claims, { tellRejected: false });
  }

  /** Whether the turn of a message will download attachments through its platform's adapter (`fetchMedia`). */
  #downloadsInTurn(message: InboundMessage): boolean {
    if (this.#ctx.adapters.get(message.source.platform)?.fetchMedia === undefined) return false;
    return (message.media ?? []).some((m) => !m.stored && !m.refused && !isDataUrl(m.url));
  }

  /**
   * An idempotent message whose id is already stored in the key's current session (a
   * client's retry): sends the stored reply again, waits for a reply still running, or
   * runs a failed turn once more — never stores the user message a second time.
   * `null` when the id is new.
   */
  async #repeatAttempt(key: string, message: InboundMessage, messageId: string, waited = false): Promise<InboundAck | null> {
    const { db, log } = this.#ctx;
    const running = this.#workers.running;
    const route = await db.getRoute(key);
    if (route === null) return null;
    const messages = await db.getMessages(route.sessionId, { lastMessages: IDEMPOTENCY_WINDOW });
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
      log.info({ sessionId: route.sessionId }, "a repeated request got the stored reply");
      await this.#ctx.send(source, { text: textOf(reply.content), kind: "reply", inReplyTo: [messageId], sessionId: route.sessionId });
      return { status: "duplicate", sessionKey: key };
    }
    const failures = after.filter(isFailedTurnRecord).length;
    if (end === messages.length && (route.turnStartedAt !== null || this.#workers.isBusy(key))) {
      // An attempt is still running (here or on another replica): hand its reply over when stored.
      this.#relayReply(key, source, messageId, failures);
      return { status: "duplicate", sessionKey: key };
    }
    if (end < messages.length) {
      // Later messages were answered since: re-running this one would answer out of order.
      const failure = after.findLast(isFailedTurnRecord);
      await this.#ctx.notify(
        source,
        failure === undefined ? "This message got no reply, and the conversation has moved on since; send it again as a new message." : textOf(failure.content),
        [messageId],
        "error",
      );
      return { status: "duplicate", sessionKey: key };
    }
    // A worker that just finished the failed turn may still be looking at the queue: let it end.
    const worker = running.get(key);
    if (worker !== undefined && worker.phase === "between" && !waited) {
      await worker.done;
      return this.#repeatAttempt(key, message, messageId, true);
    }
    if (running.has(key)) {
      return { status: "rejected", sessionKey: key, reason: "The session is busy with another message; retry this one when it is answered." };
    }
    const lease = await this.#workers.acquire(key);
    if (lease === false || running.has(key)) {
      if (lease !== null && lease !== false) await this.#workers.dropUnused(key, lease);
      return { status: "rejected", sessionKey: key, reason: "The session is busy with another message; retry this one when it is answered." };
    }
    const entry = await this.#ctx.store.getEntry(key);
    if (entry === null) {
      if (lease !== null) await this.#workers.dropUnused(key, lease);
      return null;
    }
    log.info({ sessionId: entry.sessionId }, "a repeated request re-runs the failed turn");
    this.#workers.startWorker(key, source, lease, { rerun: entry, ids: [messageId], model: message.model ?? undefined });
    return { status: "accepted", sessionKey: key };
  }

  /** Runs a new turn with one message for a key now (or queues it when busy). */
  async runMessage(key: string, message: InboundMessage): Promise<void> {
    if (!(await this.#startNow(key, message))) await this.enqueue(key, message);
  }

  /**
   * Runs a message at once when the session is idle here (and its lease, if any, is
   * free): resolves `true` once the user message is stored, `false` when it must queue.
   */
  async #startNow(key: string, message: InboundMessage, claims?: InboundClaim[]): Promise<boolean> {
    const running = this.#workers.running;
    if (running.has(key)) return false;
    const lease = await this.#workers.acquire(key);
    if (lease === false) return false;
    if (running.has(key)) {
      if (lease !== null) await this.#workers.dropUnused(key, lease);
      return false;
    }
    let durable!: () => void;
    let failed!: (error: unknown) => void;
    const stored = new Promise<void>((resolve, reject) => {
      durable = resolve;
      failed = reject;
    });
    this.#workers.startWorker(key, message.source, lease, { messages: [message], durable, failed, claims });
    await stored;
    return true;
  }

  /**
   * Queues a message for a key (durably) and makes sure some worker will run it. A refusal (the
   * queue is full) is told to the chat unless `tellRejected` is false: an adapter's own message
   * gets the reason in its ack and tells the chat itself, so it would hear it twice.
   */
  async enqueue(key: string, message: InboundMessage, claims?: InboundClaim[], options: { tellRejected?: boolean } = {}): Promise<InboundAck> {
    const running = this.#workers.running;
    const event: InboundEvent = {
      ...(claims === undefined ? {} : { claims }),
      messageId: message.messageId ?? null,
      senderId: message.source.userId ?? null,
      kind: (message.media?.length ?? 0) > 0 ? "media" : "text",
      albumId: message.albumId ?? null,
      payload: message,
    };
    const outcome = await this.#ctx.queue.enqueue(key, event);
    if (outcome.status === "rejected") {
      if (options.tellRejected !== false) await this.#ctx.notify(message.source, outcome.reason, [message.messageId ?? ""].filter(Boolean), "error");
      return { status: "rejected", sessionKey: key, reason: outcome.reason };
    }
    if (outcome.status === "duplicate") {
      // A retry of a message still waiting in the queue: its reply answers the retry too.
      if (message.idempotent === true && message.messageId && !running.has(key)) this.#relayReply(key, message.source, message.messageId);
      return { status: "duplicate", sessionKey: key };
    }
    this.#ctx.metrics.queueDepthChanged?.(key, outcome.depth);
    const worker = running.get(key);
    if (worker !== undefined) worker.more = true;
    else await this.#workers.kick(key, message.source);
    if (!running.has(key) && message.messageId) this.#relayReply(key, message.source, message.messageId);
    return { status: "queued", sessionKey: key, depth: outcome.depth };
  }

  /**
   * Another replica will run a message that came in through a request/response adapter
   * here: watch the transcript for its reply and hand it to the waiting request.
   */
  #relayReply(key: string, source: SessionSource, messageId: string, knownFailures = 0): void {
    const { db, log } = this.#ctx;
    const adapter = this.#ctx.adapters.get(source.platform);
    if (adapter?.awaitsReply === undefined) return;
    const waiting = (): boolean => adapter.awaitsReply!(messageId);
    void (async () => {
      while (waiting()) {
        await new Promise((resolve) => setTimeout(resolve, RELAY_POLL_MS));
        if (!waiting()) return;
        const route = await db.getRoute(key);
        if (route === null) continue;
        const messages = await db.getMessages(route.sessionId, { lastMessages: 200 });
        const at = messages.findIndex((m) => m.role === "user" && m.platformMessageId === messageId);
        if (at < 0) continue;
        let failures = 0;
        for (let i = at + 1; i < messages.length && messages[i]!.role !== "user"; i++) {
          const m = messages[i]!;
          // A failed attempt answers (as an error) unless it was already there when the wait began.
          if (isFailedTurnRecord(m) && ++failures > knownFailures) {
            await this.#ctx.send(source, { text: textOf(m.content), kind: "error", inReplyTo: [messageId] });
            return;
          }
          if (isFailedTurnRecord(m)) continue;
          if (m.role === "assistant" && textOf(m.content).trim() !== "" && !(m.toolCalls && m.toolCalls.length > 0)) {
            await this.#ctx.send(source, { text: textOf(m.content), kind: "reply", inReplyTo: [messageId], sessionId: route.sessionId });
            return;
          }
        }
      }
    })().catch((error: unknown) => log.warn({ err: error, key }, "relaying a reply from another replica failed"));
  }

  /**
   * The first message of a key in this process: remember the platform ids of the session's
   * recent user messages, so a platform that redelivers after a crash or reconnect (an
   * unconfirmed Telegram update, a replayed Discord event) does not start a second turn.
   */
  async #seedRecentIds(key: string): Promise<void> {
    if (this.#seededKeys.size >= RECENT_IDS) this.#seededKeys.clear();
    this.#seededKeys.add(key);
    const route = await this.#ctx.db.getRoute(key);
    if (route === null) return;
    const recent = await this.#ctx.db.getMessages(route.sessionId, { lastMessages: 50 });
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
