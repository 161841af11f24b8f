/**
 * The gateway side of a cross-platform handoff: claims pending handoff records for the
 * platforms this gateway serves, routes the home channel's chat (or a new thread in it) to
 * the handed-off session, runs a synthetic turn there that summarises where things stand,
 * and completes the record, or fails it with the reason. `GatewayRunner.processHandoffs`
 * runs one; `threadline serve` calls that every second.
 *
 * @module
 */
import { hostname } from "node:os";
import {
  ConflictError,
  HANDOFF_MESSAGE_PREFIX,
  ThreadlineError,
  type Handoff,
  type HandoffStore,
  type QueueStore,
  type RouteStore,
  type SessionHistory,
} from "../store/index.js";
import type { Adapter, InboundMessage } from "./adapter.js";
import { noopLogger, type GatewayLogger } from "./gateway-logger.js";
import type { HomeChannel, HomeChannels } from "./handoff.js";
import { isSharedMultiUserSession } from "./session-key.js";
import type { SessionRouter } from "./session-router.js";
import { parseSessionSource, type SessionSource } from "./session-source.js";
import { isFailedTurnRecord, textOf } from "./turn-messages.js";

/** What a {@link HandoffWorker} needs from the gateway (a `GatewayRunner` is one). */
export interface HandoffHost {
  readonly store: SessionRouter;
  readonly db: SessionHistory & RouteStore & QueueStore & HandoffStore;
  /** The gateway accepts messages (false while starting and once it drains). */
  readonly accepting: boolean;
  /** The connected adapter of a platform, if any. */
  adapter(platform: string): Adapter | undefined;
  /** Runs a message for a key now, or queues it when the key is busy. */
  runMessage(key: string, message: InboundMessage): Promise<void>;
  /** Resolves once no turn of the key runs (or is queued to run) in this process. */
  whenIdle(key: string): Promise<void>;
  /** Whether a turn of the key runs in this process right now. */
  isBusy(key: string): boolean;
}

/** Options of a {@link HandoffWorker}. */
export interface HandoffWorkerOptions {
  /** Who claims (recorded as `claimedBy`; default `gateway-<host>-<pid>`). */
  holder?: string;
  logger?: GatewayLogger;
  /**
   * How long to wait for the summary turn's reply when it runs in another replica (it held
   * the key's lease), in ms (default 300,000).
   */
  turnTimeoutMs?: number;
}

/** Options of one {@link HandoffWorker.process} pass. */
export interface ProcessHandoffsOptions {
  /**
   * A pending handoff to a platform that has a home channel here but no connected adapter
   * is failed (reason: no adapter) once it is this many seconds old, so the terminal hears
   * it at once rather than at its timeout; a gateway that serves the platform claims it
   * well before (it looks every second). `null`: leave such handoffs alone (default 5).
   */
  unservedGraceSeconds?: number | null;
}

/** Default of {@link ProcessHandoffsOptions.unservedGraceSeconds}. */
export const DEFAULT_UNSERVED_GRACE_SECONDS = 5;

/** The prefix of the synthetic message id of a handoff's summary turn (`handoff:<id>`): it marks the note as a note. */
export { HANDOFF_MESSAGE_PREFIX } from "../store/index.js";

/**
 * The synthetic user message of a handoff's summary turn: a note for the model, stored in
 * the transcript, whose reply goes to the target chat.
 */
export function handoffNotice(platform: string): string {
  return `[System note: This conversation was handed off from the terminal to ${platform}; summarise where things stand and what is next.]`;
}

const REPLY_POLL_MS = 100;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A handoff step that failed; `message` is the reason recorded. `cause` is `"turn_ended"`
 * when the summary turn ended without a reply (the worker then undoes the step).
 */
class HandoffStepError extends ThreadlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TL_ERR_HANDOFF", message, options);
  }
}

/**
 * Carries out pending handoffs.
 *
 * The target chat: when the home channel has `threadsSupported` and the platform's adapter
 * implements `createThread`, a new thread in the home channel (titled after the session);
 * otherwise the home channel itself. Either is keyed as the chat's next real message will
 * be, so the conversation goes on there: the home's `chatType` (`dm` when absent: a direct
 * chat, `agent:<profile>:<platform>:dm:<chatId>`, as hermes keys it) and, where the chat
 * gives each person a session of their own (`groupSessionsPerUser` / `threadSessionsPerUser`),
 * the lane of the home's `userId` (who sent `/sethome`). Such a chat without a `userId` fails
 * the handoff, saying how to name one. That key is routed to the handed-off session with
 * {@link SessionRouter.bindKeyToSession}; the terminal keeps the session too.
 */
export class HandoffWorker {
  readonly #host: HandoffHost;
  readonly #holder: string;
  readonly #log: GatewayLogger;
  readonly #turnTimeoutMs: number;
  #pass: Promise<number> | null = null;

  constructor(host: HandoffHost, options: HandoffWorkerOptions = {}) {
    this.#host = host;
    this.#holder = options.holder ?? `gateway-${hostname()}-${process.pid}`;
    this.#log = options.logger ?? noopLogger;
    this.#turnTimeoutMs = options.turnTimeoutMs ?? 300_000;
  }

  /** Who this worker claims as. */
  get holder(): string {
    return this.#holder;
  }

  /**
   * One pass: claims and carries out every pending handoff to a platform that has a home
   * channel in `homeChannels` and a connected adapter, one after the other, then fails the
   * stale ones no adapter here can serve (see {@link ProcessHandoffsOptions}). Resolves with
   * how many it ended (completed or failed). A call while a pass runs joins that pass.
   */
  process(homeChannels: HomeChannels, options: ProcessHandoffsOptions = {}): Promise<number> {
    if (this.#pass !== null) return this.#pass;
    const pass = this.#run(homeChannels, options).finally(() => {
      if (this.#pass === pass) this.#pass = null;
    });
    this.#pass = pass;
    return pass;
  }

  /** Resolves when the pass in progress (if any) has ended. */
  async idle(): Promise<void> {
    await this.#pass?.catch(() => {});
  }

  async #run(homeChannels: HomeChannels, options: ProcessHandoffsOptions): Promise<number> {
    const host = this.#host;
    if (!host.accepting) return 0;
    const homes = Object.entries(homeChannels ?? {}).filter(
      ([, home]) => home !== null && typeof home === "object" && typeof home.chatId === "string" && home.chatId !== "",
    );
    const served = homes.filter(([platform]) => host.adapter(platform) !== undefined).map(([platform]) => platform);
    const unserved = homes.filter(([platform]) => host.adapter(platform) === undefined).map(([platform]) => platform);
    let ended = 0;
    while (served.length > 0 && host.accepting) {
      const claimed = await host.db.claimHandoff({ platforms: served, holder: this.#holder });
      if (claimed === null) break;
      await this.#carryOut(claimed, homeChannels[claimed.platform]!);
      ended += 1;
    }
    const grace = options.unservedGraceSeconds === undefined ? DEFAULT_UNSERVED_GRACE_SECONDS : options.unservedGraceSeconds;
    while (grace !== null && unserved.length > 0 && host.accepting) {
      // Records carry the database's (wall-clock) times.
      const createdBefore = Date.now() / 1000 - grace;
      const stale = await host.db.claimHandoff({ platforms: unserved, holder: this.#holder, createdBefore });
      if (stale === null) break;
      await this.#fail(
        stale,
        `no ${stale.platform} adapter is connected to the running gateway (${this.#holder}); enable it in the config of threadline serve`,
      );
      ended += 1;
    }
    return ended;
  }

  async #carryOut(handoff: Handoff, home: HomeChannel): Promise<void> {
    const host = this.#host;
    const platform = handoff.platform;
    this.#log.info({ handoffId: handoff.id, sessionId: handoff.sessionId, platform }, "carrying out a handoff");
    let key: string | null = null;
    let hadRoute = false;
    const messageId = `${HANDOFF_MESSAGE_PREFIX}${handoff.id}`;
    try {
      const adapter = host.adapter(platform);
      if (adapter === undefined) throw new HandoffStepError(`the ${platform} adapter is not connected`);
      const session = await host.db.getSession(handoff.sessionId);
      if (session === null) throw new HandoffStepError(`the session ${handoff.sessionId} no longer exists`);
      const target = await this.#target(adapter, home, session.title ?? `Continued from the terminal (${session.id})`);
      key = await host.store.sessionKeyFor(target);
      hadRoute = (await host.db.getRoute(key)) !== null;
      await host.store.bindKeyToSession(target, session.id);
      await host.runMessage(key, { source: target, text: handoffNotice(platform), messageId });
      await this.#awaitReply(key, session.id, messageId);
      try {
        await host.db.finishHandoff(handoff.id, {
          status: "completed",
          chatId: target.chatId ?? home.chatId,
          threadId: target.threadId ?? null,
          sessionKey: key,
        });
        this.#log.info({ handoffId: handoff.id, key }, "handoff completed");
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        this.#log.warn({ handoffId: handoff.id, key }, "handoff done, but the terminal had stopped waiting for it");
      }
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      if (error instanceof HandoffStepError && error.cause === "turn_ended" && key !== null) {
        await this.#undo(key, handoff.sessionId, messageId, hadRoute);
      }
      await this.#fail(handoff, reason);
    }
  }

  /**
   * The source of the chat the session moves to, as the chat's next real message will carry
   * it: a new thread in the home channel, or the home channel.
   */
  async #target(adapter: Adapter, home: HomeChannel, title: string): Promise<SessionSource> {
    const threaded = home.threadsSupported === true && adapter.createThread !== undefined;
    const user = typeof home.userId === "string" && home.userId !== "" ? home.userId : null;
    const chat: SessionSource = {
      platform: adapter.platform,
      // Unsaid: the parent of a new thread is a channel; a chat without threads is keyed DM-style (hermes).
      chatType: home.chatType ?? (threaded ? "channel" : "dm"),
      chatId: home.chatId,
      chatName: home.name ?? null,
      ...(user === null ? {} : { userId: user }),
    };
    // In a chat (or thread) with a session per person, only one person's lane can continue it.
    const probe: SessionSource = threaded ? { ...chat, threadId: "thread" } : chat;
    if (user === null && chat.chatType !== "dm" && !isSharedMultiUserSession(probe, this.#host.store.keySettings)) {
      const setting = threaded ? "sessions.threadSessionsPerUser" : "sessions.groupSessionsPerUser";
      throw new HandoffStepError(
        `the ${adapter.platform} home channel ${home.chatId} is a ${chat.chatType} with a session per person (${setting}), so it is not known whose to continue: ` +
          `send /sethome in that chat from your account, or set homeChannels.${adapter.platform}.userId to your ${adapter.platform} user id`,
      );
    }
    if (!threaded) return chat;
    let thread: SessionSource;
    try {
      thread = parseSessionSource(await adapter.createThread!(chat, title));
    } catch (error) {
      throw new HandoffStepError(`creating a thread in the ${adapter.platform} home channel failed: ${(error as Error).message}`);
    }
    if (thread.platform !== adapter.platform) {
      throw new HandoffStepError(`the ${adapter.platform} adapter returned a thread on another platform (${thread.platform})`);
    }
    return user === null || thread.userId ? thread : { ...thread, userId: user };
  }

  /** Waits until the summary turn has stored its reply (and sent it); throws when it ended without one. */
  async #awaitReply(key: string, sessionId: string, messageId: string): Promise<void> {
    const host = this.#host;
    const deadline = Date.now() + this.#turnTimeoutMs;
    for (;;) {
      await host.whenIdle(key);
      const found = await this.#replyState(sessionId, messageId);
      if (found === "replied") return;
      if (!host.accepting) throw new HandoffStepError("the gateway shut down during the summary turn");
      if (found === "unanswered") {
        const route = await host.db.getRoute(key);
        // No turn in progress anywhere (and none here): it ended without a reply.
        if (route !== null && route.turnStartedAt === null && !host.isBusy(key)) {
          throw new HandoffStepError(`the summary turn in ${sessionId} ended without a reply (see the gateway log)`, {
            cause: "turn_ended",
          });
        }
      } else {
        const queued = (await host.db.listQueue(key)).some((item) => item.messageIds.includes(messageId));
        if (!queued && !host.isBusy(key)) throw new HandoffStepError("the summary turn's message was neither stored nor queued");
      }
      if (Date.now() > deadline) {
        throw new HandoffStepError(`the summary turn did not finish within ${Math.round(this.#turnTimeoutMs / 1000)} s`);
      }
      await sleep(REPLY_POLL_MS);
    }
  }

  /** Whether the synthetic message is stored, and answered by a text reply. */
  async #replyState(sessionId: string, messageId: string): Promise<"replied" | "unanswered" | "missing"> {
    const messages = await this.#host.db.getMessages(sessionId, { lastMessages: 200 });
    const at = messages.findIndex((m) => m.role === "user" && m.platformMessageId === messageId);
    if (at < 0) return "missing";
    for (let i = at + 1; i < messages.length && messages[i]!.role !== "user"; i++) {
      const m = messages[i]!;
      if (m.role === "assistant" && !isFailedTurnRecord(m) && textOf(m.content).trim() !== "" && !(m.toolCalls && m.toolCalls.length > 0)) return "replied";
    }
    return "unanswered";
  }

  /**
   * After a summary turn that ended without a reply: hides the synthetic message again (so
   * the session's transcript is as it was) and removes the key's entry when the handoff
   * created it. Best effort.
   */
  async #undo(key: string, sessionId: string, messageId: string, hadRoute: boolean): Promise<void> {
    const db = this.#host.db;
    try {
      const lastUser = (await db.getMessages(sessionId, { lastMessages: 50 })).filter((m) => m.role === "user").at(-1);
      if (lastUser?.platformMessageId === messageId) await db.rewind(sessionId, 1);
      if (!hadRoute) {
        const route = await db.getRoute(key);
        if (route !== null && route.sessionId === sessionId) await db.deleteRoute(key, { expectedVersion: route.version });
      }
    } catch (error) {
      this.#log.warn({ err: error, key, sessionId }, "undoing a failed handoff failed");
    }
  }

  async #fail(handoff: Handoff, reason: string): Promise<void> {
    this.#log.warn({ handoffId: handoff.id, sessionId: handoff.sessionId, platform: handoff.platform, reason }, "handoff failed");
    try {
      await this.#host.db.finishHandoff(handoff.id, { status: "failed", reason });
    } catch (error) {
      if (!(error instanceof ConflictError)) this.#log.error({ err: error, handoffId: handoff.id }, "recording a failed handoff failed");
    }
  }
}
