/**
 * The inbound flow of every chat adapter, written once ({@link InboundFlow}). A platform maps
 * its event (who wrote where, and the {@link InboundMessage}); the flow does the rest, in this
 * order, the same way for every platform:
 *
 * 1. de-duplication by the platform's message id ({@link SeenMessageIds}, per process), before
 *    anything else;
 * 2. the answer rules ({@link decideAnswer}, with the allowlists): a refused message is dropped,
 *    not stored;
 * 3. "typing…" ({@link TypingIndicator}) from then on, stopped unless the gateway accepted or
 *    queued the message (the reply stops it otherwise);
 * 4. the hand-off to the gateway's {@link InboundHandler}, and what the chat is told by its
 *    {@link InboundAck} — one table for all platforms:
 *    - the handler throws (the message could not be stored): the id is forgotten; a platform that
 *      `redelivers` what was not acknowledged is left to deliver it again (the outcome is
 *      `redeliver`: a webhook answers 5xx, a poll does not move on), any other is told
 *      {@link COULD_NOT_STORE} in reply to the message;
 *    - `rejected`: the chat is told the reason, as a notice in reply to the message — except on
 *      a redelivering platform while receiving has stopped (the gateway is stopping): then the
 *      platform delivers it again to the next start;
 *    - `accepted`, `queued`, `duplicate`, `refused`, `command`: nothing more (replies, pairing
 *      and commands come through the gateway).
 *
 * It also owns when a platform receives ({@link InboundFlow.receive}): at once, or — with
 * several replicas — under the platform's {@link ReceiverLease}, so only one replica polls or
 * holds the socket; sending never depends on it.
 *
 * @module
 */
import {
  noopLogger,
  type AdapterEvents,
  type GatewayLogger,
  type InboundAck,
  type InboundHandler,
  type InboundMessage,
  type OutboundMessage,
  type ReceiverHandlers,
  type SessionSource,
} from "../../gateway/index.js";
import { DEFAULT_ANSWER_RULES, decideAnswer, type AnswerCandidate, type AnswerDecision, type AnswerRules } from "./answer-policy.js";
import { SeenMessageIds } from "./seen-message-ids.js";
import { TypingIndicator, type TypingIndicatorOptions } from "./typing-indicator.js";

/** What the chat is told when the gateway could not store its message (and the platform does not deliver it again). */
export const COULD_NOT_STORE = "Sorry, your message could not be stored. Please send it again.";

/** Options of an {@link InboundFlow}. */
export interface InboundFlowOptions {
  /** The platform name (`telegram`, …): log lines and the receiver lease's name. */
  platform: string;
  /**
   * The platform delivers an event again when it was not acknowledged (Telegram getUpdates and
   * webhooks, the Slack Events API, WhatsApp webhooks): a message the gateway could not store is
   * left to it (outcome `redeliver`) instead of the chat being asked to send it again.
   */
  redelivers: boolean;
  /** Sends to a chat (the adapter's own `send`): the notices of the outcome table. */
  send(source: SessionSource, message: OutboundMessage): Promise<unknown>;
  /** Removes secrets from an error before it is logged (e.g. {@link PlatformFailures.safe}). */
  redact(error: unknown): Error;
  /** Who is answered (default {@link DEFAULT_ANSWER_RULES}). */
  rules?: AnswerRules;
  logger?: GatewayLogger;
  /** The session key as logged (e.g. phone numbers masked); default as it is. */
  logKey?(sessionKey: string): string;
  /** "typing…" while a turn runs; `null`/absent: the platform shows none. Errors are logged (warn) unless `onError` is given. */
  typing?: TypingIndicatorOptions | null;
  /** How many message ids are remembered for de-duplication (default 10,000). */
  seenSize?: number;
}

/** An event as the platform maps it (see {@link InboundFlow.take}). */
export interface MappedInbound {
  /** Who wrote where, for the answer rules. */
  candidate: AnswerCandidate;
  /** Other ids of the same sender that the allowlists may name (a phone number and a UUID, another spelling). */
  otherUserIds?: readonly string[];
  /** Other ids of the same chat that the allowlists may name (a thread inside a listed or unlisted channel, a group's other id). */
  otherChatIds?: readonly string[];
  /** The message for the gateway, or how to make it once the rules let it through (look-ups that cost an API call). */
  inbound: InboundMessage | (() => Promise<InboundMessage>);
  /** The chat key "typing…" is shown under (`null`: none for this message). */
  typingKey?: string | null;
  /** When the rules answer `not-addressed`: learns more (whom it replies to, whose thread it is) and maps again; the rules are asked once more. */
  moreFacts?(): Promise<MappedInbound | null>;
  /** Told the gateway's acknowledgement (e.g. a read receipt for what was taken). */
  onAck?(ack: InboundAck): void;
}

/**
 * What became of an event: `ignored` (a repeat, not a user message, not for the bot, or not
 * receiving), `taken` (the gateway has it, or the chat was told why not), `redeliver` (the
 * platform must deliver it again: answer the webhook with a 5xx, do not move the poll on).
 */
export type InboundOutcome = "ignored" | "taken" | "redeliver";

/**
 * The inbound side of one chat adapter. The adapter calls {@link connect} with the gateway's
 * handler, starts receiving with {@link receive}, hands each event to {@link take}, and
 * stops typing in `send` with {@link stopTyping}.
 *
 * @example
 * ```ts
 * this.#flow = new InboundFlow({ platform: "telegram", redelivers: true, rules, logger,
 *   send: (source, message) => this.send(source, message), redact: (e) => this.#failures.safe(e) });
 * // connect:
 * this.#flow.connect(handler, events);
 * await this.#flow.receive({ start: () => this.#startPolling(), stop: () => this.#stopPolling() });
 * // per event:
 * const outcome = await this.#flow.take(String(update.update_id), () => mapTelegramMessage(…));
 * ```
 */
export class InboundFlow {
  readonly platform: string;
  /** The "typing…" indicator (`null` when the platform shows none). */
  readonly typing: TypingIndicator | null;
  readonly #options: InboundFlowOptions;
  readonly #rules: AnswerRules;
  readonly #log: GatewayLogger;
  readonly #seen: SeenMessageIds;
  #handler: InboundHandler | null = null;
  #events: AdapterEvents | null = null;
  #receiving = false;
  #receiver: { handlers: ReceiverHandlers; release: (() => Promise<void>) | null } | null = null;

  constructor(options: InboundFlowOptions) {
    this.platform = options.platform;
    this.#options = options;
    this.#rules = options.rules ?? DEFAULT_ANSWER_RULES;
    this.#log = options.logger ?? noopLogger;
    this.#seen = new SeenMessageIds(options.seenSize ?? 10_000);
    const typing = options.typing;
    this.typing =
      typing === null || typing === undefined
        ? null
        : new TypingIndicator({
            ...typing,
            onError:
              typing.onError ??
              ((error) => this.#log.warn({ err: options.redact(error), platform: this.platform }, `${this.platform}: showing "typing…" failed`)),
          });
  }

  /** Whether events are taken now (between {@link receive} and {@link stopReceiving}); webhook routes answer 503 otherwise. */
  get receiving(): boolean {
    return this.#receiving && this.#handler !== null;
  }

  /** What the runner gave {@link connect} besides the handler (`null` before). */
  get events(): AdapterEvents | null {
    return this.#events;
  }

  /** Remembers the gateway's handler and events (the adapter's `connect`); nothing is taken before {@link receive}. */
  connect(handler: InboundHandler, events?: AdapterEvents): void {
    this.#handler = handler;
    this.#events = events ?? null;
  }

  /**
   * Starts taking events. With `handlers` (a platform that keeps one connection per token:
   * polling, a socket), receiving runs under the platform's receiver lease when the runner gave
   * one (`handlers.start` once this replica holds it: `receive` does not wait for that), else
   * `handlers.start` runs at once and `receive` waits for it (a failure is thrown). Without
   * `handlers` (webhooks) events are simply taken from now on. Again after {@link stopReceiving}: starts again.
   */
  async receive(handlers?: ReceiverHandlers): Promise<void> {
    if (this.#receiving) return;
    this.#receiving = true;
    if (handlers === undefined) return;
    const lease = this.#events?.receiverLease?.(this.platform);
    if (lease === undefined) {
      this.#receiver = { handlers, release: null };
      try {
        await handlers.start();
      } catch (error) {
        this.#receiving = false;
        this.#receiver = null;
        throw error;
      }
      return;
    }
    const guarded: ReceiverHandlers = {
      start: async () => {
        this.#log.info({ platform: this.platform }, `${this.platform}: this replica holds the receiver lease; receiving`);
        await handlers.start().catch((error: unknown) => {
          this.#log.error({ err: this.#options.redact(error), platform: this.platform }, `${this.platform}: starting to receive failed`);
          throw error;
        });
      },
      stop: async () => {
        this.#log.info({ platform: this.platform }, `${this.platform}: receiver lease given up; not receiving`);
        await handlers.stop();
      },
    };
    this.#receiver = { handlers, release: lease.hold(guarded) };
    this.#log.info({ platform: this.platform }, `${this.platform}: receiving when this replica holds the receiver lease`);
  }

  /** Stops taking events (and releases the receiver lease, stopping the connection); {@link receive} may follow. */
  async stopReceiving(): Promise<void> {
    if (!this.#receiving) return;
    this.#receiving = false;
    const receiver = this.#receiver;
    this.#receiver = null;
    if (receiver === null) return;
    if (receiver.release !== null) await receiver.release();
    else await receiver.handlers.stop();
  }

  /** Stops receiving and every "typing…" (the adapter's `disconnect`). */
  async close(): Promise<void> {
    await this.stopReceiving();
    this.typing?.stopAll();
  }

  /** Stops "typing…" under `key` (the adapter's `send`, when the reply is out). */
  stopTyping(key: string | null | undefined): void {
    if (key !== null && key !== undefined) this.typing?.stop(key);
  }

  /**
   * Runs one event through the flow: `id` (the platform's message id, unique per platform, e.g.
   * `<chat>:<ts>`) is de-duplicated first, then `map` (null: not a user message) is asked who
   * wrote where, the rules decide, and the message goes to the gateway; see the module doc for
   * what the chat is told. Throws only what `map` throws.
   */
  async take(id: string, map: () => MappedInbound | null | Promise<MappedInbound | null>): Promise<InboundOutcome> {
    const handler = this.#handler;
    if (handler === null || !this.#receiving) return "ignored";
    if (!this.#seen.add(id)) return "ignored";
    let mapped = await map();
    if (mapped === null) return "ignored";
    let decision = this.#decide(mapped);
    if (!decision.answer && decision.reason === "not-addressed" && mapped.moreFacts !== undefined) {
      mapped = (await mapped.moreFacts()) ?? mapped;
      decision = this.#decide(mapped);
    }
    if (!decision.answer) {
      this.#log.debug?.({ platform: this.platform, reason: decision.reason }, `${this.platform}: message not answered`);
      return "ignored";
    }
    const inbound = typeof mapped.inbound === "function" ? await mapped.inbound() : mapped.inbound;
    // Typing starts before the gateway takes the message: a fast turn may reply (and stop it)
    // before the acknowledgement is back. Commands, repeats and refusals stop it at once.
    const typingKey = this.typing === null ? null : (mapped.typingKey ?? null);
    if (typingKey !== null) this.typing?.start(typingKey);
    let ack: InboundAck;
    try {
      ack = await handler(inbound);
    } catch (error) {
      this.stopTyping(typingKey);
      this.#seen.delete(id);
      const err = this.#options.redact(error);
      if (this.#options.redelivers) {
        this.#log.error({ err, platform: this.platform }, `${this.platform}: the gateway could not take a message; the platform delivers it again`);
        return "redeliver";
      }
      this.#log.error({ err, platform: this.platform }, `${this.platform}: the gateway could not take a message`);
      await this.#tell(inbound, COULD_NOT_STORE, "error");
      return "taken";
    }
    if (ack.status !== "accepted" && ack.status !== "queued") this.stopTyping(typingKey);
    mapped.onAck?.(ack);
    if (ack.status === "rejected") {
      if (this.#options.redelivers && !this.#receiving) {
        // Refused because the gateway is stopping: the platform delivers it again to the next start.
        this.#seen.delete(id);
        return "redeliver";
      }
      const key = this.#options.logKey?.(ack.sessionKey) ?? ack.sessionKey;
      this.#log.warn({ platform: this.platform, key, reason: ack.reason }, `${this.platform}: message refused by the gateway`);
      await this.#tell(inbound, ack.reason, "notice");
    }
    return "taken";
  }

  /** The rules, with the other ids of the sender and the chat tried against the allowlists. */
  #decide(mapped: MappedInbound): AnswerDecision {
    const { allowedUsers, allowedChats } = this.#rules;
    const pick = (first: string, others: readonly string[] | undefined, allowed: readonly string[]): string =>
      allowed.length === 0 || allowed.includes(first) ? first : ([first, ...(others ?? [])].find((id) => allowed.includes(id)) ?? first);
    const candidate = mapped.candidate;
    return decideAnswer(
      {
        ...candidate,
        userId: pick(candidate.userId, mapped.otherUserIds, allowedUsers),
        chatId: pick(candidate.chatId, mapped.otherChatIds, allowedChats),
      },
      this.#rules,
    );
  }

  async #tell(inbound: InboundMessage, text: string, kind: "notice" | "error"): Promise<void> {
    const inReplyTo = inbound.messageId ? [inbound.messageId] : [];
    await this.#options.send(inbound.source, { text, kind, inReplyTo }).catch((error: unknown) => {
      this.#log.warn({ err: this.#options.redact(error), platform: this.platform }, `${this.platform}: telling the chat failed`);
    });
  }
}
