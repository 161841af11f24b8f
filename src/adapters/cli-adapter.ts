/**
 * The `cli` adapter: the terminal side of `threadline chat`. Lines the person types go in
 * with {@link CliAdapter.submit}; everything the gateway sends to the terminal's chat
 * (replies, notices, errors) is handed to the `onDelivery` callback (which prints it) and
 * kept in {@link CliAdapter.sent}.
 *
 * Its source is a direct chat on platform `cli`: `{ platform: "cli", chatType: "dm",
 * chatId, userId }`, where `chatId` names the terminal's lane (`threadline chat` uses the
 * id of the session the lane started with) and `userId` is the operating-system user.
 *
 * @module
 */
import { userInfo } from "node:os";
import { ThreadlineError } from "../store/index.js";
import type { Adapter, InboundAck, InboundHandler, InboundMessage, OutboundDelta, OutboundMessage, SessionSource } from "../gateway/index.js";

/** The platform name of terminal sessions (also their `source` in the database). */
export const CLI_PLATFORM = "cli";

/** A message the gateway sent to the terminal. */
export interface CliDelivery {
  source: SessionSource;
  message: OutboundMessage;
}

/** Options of {@link CliAdapter}. */
export interface CliAdapterOptions {
  /** The lane of this terminal (the `chatId` of its source). */
  chatId: string;
  /** The person (default: the operating-system user name). */
  userId?: string;
  /** Called for every delivery, in send order (typically prints it). */
  onDelivery?: (delivery: CliDelivery) => void;
  /** Set to have replies streamed: called with each piece as the model produces it (the whole reply is still delivered after). */
  onDelta?: (delta: OutboundDelta) => void;
}

/** The operating-system user name (`user` when it cannot be read). */
export function osUserName(): string {
  try {
    return userInfo().username || "user";
  } catch {
    return process.env["USER"] ?? process.env["USERNAME"] ?? "user";
  }
}

/**
 * The terminal adapter.
 *
 * @example
 * const cli = new CliAdapter({ chatId: "20260314_101500_a1b2c3", onDelivery: (d) => console.log(d.message.text) });
 * const runner = new GatewayRunner({ store, agentFactory: () => new EchoAgent(), adapters: [cli] });
 * await runner.start();
 * await cli.submit("hello"); // prints "Echo: hello"
 */
export class CliAdapter implements Adapter {
  readonly platform = CLI_PLATFORM;
  /** The source of every message typed in this terminal. */
  readonly source: SessionSource;
  /** Everything the gateway sent, in order. */
  readonly sent: CliDelivery[] = [];
  readonly #onDelivery: (delivery: CliDelivery) => void;
  readonly #onDelta: ((delta: OutboundDelta) => void) | null;
  readonly #listeners = new Set<(delivery: CliDelivery) => void>();
  #handler: InboundHandler | null = null;
  #counter = 0;

  constructor(options: CliAdapterOptions) {
    const user = options.userId ?? osUserName();
    this.source = { platform: CLI_PLATFORM, chatType: "dm", chatId: options.chatId, userId: user, userName: user };
    this.#onDelivery = options.onDelivery ?? (() => {});
    this.#onDelta = options.onDelta ?? null;
  }

  /** Whether replies are streamed (an `onDelta` was given). */
  wantsStream(): boolean {
    return this.#onDelta !== null;
  }

  /** Hands a piece of a reply to `onDelta`. */
  sendDelta(_source: SessionSource, delta: OutboundDelta): void {
    this.#onDelta?.(delta);
  }

  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
  }

  async disconnect(): Promise<void> {
    this.#handler = null;
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId: string }> {
    const delivery = { source, message };
    this.sent.push(delivery);
    this.#onDelivery(delivery);
    for (const listener of [...this.#listeners]) listener(delivery);
    return { messageId: `cli-out-${this.sent.length}` };
  }

  /** Hands a typed line to the gateway as a message of this terminal; resolves with the acknowledgement. */
  async submit(text: string): Promise<{ ack: InboundAck; messageId: string }> {
    if (this.#handler === null) throw new ThreadlineError("TL_ERR_UNAVAILABLE", "CliAdapter is not connected: start the GatewayRunner first.");
    this.#counter += 1;
    const messageId = `cli-${process.pid}-${Date.now().toString(36)}-${this.#counter}`;
    const message: InboundMessage = { source: this.source, text, messageId };
    return { ack: await this.#handler(message), messageId };
  }

  /** Calls `listener` for every later delivery until the returned function is called. */
  onDelivery(listener: (delivery: CliDelivery) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
