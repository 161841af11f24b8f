/**
 * The `local` adapter: an in-process platform for tests and embedding. Messages go in
 * with {@link LocalAdapter.receive}; everything the gateway sends is kept in
 * {@link LocalAdapter.sent} and can be awaited with {@link LocalAdapter.nextMessage}.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { ThreadlineError } from "../store/index.js";
import type { Adapter, InboundAck, InboundHandler, InboundMessage, OutboundMessage, SessionSource } from "../gateway/index.js";

/** A message the gateway sent through the local adapter. */
export interface LocalDelivery {
  source: SessionSource;
  message: OutboundMessage;
}

/**
 * An in-process adapter.
 *
 * @example
 * const local = new LocalAdapter();
 * const runner = new GatewayRunner({ store, agentFactory: () => new EchoAgent(), adapters: [local] });
 * await runner.start();
 * await local.receive("hello", { chatId: "me" });
 * (await local.nextMessage()).message.text; // "Echo: hello"
 */
export class LocalAdapter implements Adapter {
  readonly platform: string;
  readonly sent: LocalDelivery[] = [];
  /** Threads opened with {@link LocalAdapter.createThread}, in order. */
  readonly threads: Array<{ parent: SessionSource; title: string; thread: SessionSource }> = [];
  /**
   * Present only with `threads: true`: opens a thread in the chat of `source` and returns
   * its source (same chat, `threadId` `thread-<n>`, `parentChatId` the chat).
   */
  readonly createThread?: (source: SessionSource, title: string) => Promise<SessionSource>;
  #handler: InboundHandler | null = null;
  #waiters: Array<{ match: (d: LocalDelivery) => boolean; resolve: (d: LocalDelivery) => void }> = [];
  #read = 0;
  #counter = 0;
  readonly #instance = randomUUID().slice(0, 8);

  /**
   * @param options.platform the platform name its sources carry (default `local`).
   * @param options.threads implement `createThread` (default false: the adapter has none).
   */
  constructor(options: { platform?: string; threads?: boolean } = {}) {
    this.platform = options.platform ?? "local";
    if (options.threads === true) {
      this.createThread = async (source, title) => {
        const thread: SessionSource = {
          ...source,
          platform: this.platform,
          threadId: `thread-${this.threads.length + 1}`,
          parentChatId: source.chatId ?? null,
          chatTopic: title,
        };
        this.threads.push({ parent: source, title, thread });
        return thread;
      };
    }
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
    const waiter = this.#waiters.findIndex((w) => w.match(delivery));
    if (waiter >= 0) {
      const [w] = this.#waiters.splice(waiter, 1);
      w!.resolve(delivery);
    }
    return { messageId: `out-${this.sent.length}` };
  }

  /**
   * Delivers a message as if a user sent it (default source: a DM with `local-user`).
   * Resolves with the gateway's acknowledgement.
   */
  async receive(text: string, source: Partial<SessionSource> = {}, extra: Partial<InboundMessage> = {}): Promise<InboundAck> {
    if (this.#handler === null) throw new ThreadlineError("TL_ERR_UNAVAILABLE", "LocalAdapter is not connected: start the GatewayRunner first.");
    this.#counter += 1;
    const message: InboundMessage = {
      source: { platform: this.platform, chatType: "dm", chatId: "local-chat", userId: "local-user", userName: "Local user", ...source },
      text,
      // Unique across adapter instances and restarts, as platform message ids are (the gateway
      // takes an id it already stored for the session as a redelivery).
      messageId: `in-${this.#instance}-${this.#counter}`,
      ...extra,
    };
    return this.#handler(message);
  }

  /** The next delivery not yet returned by this method (in send order), waiting for it if needed. */
  nextMessage(match: (delivery: LocalDelivery) => boolean = () => true, timeoutMs = 10_000): Promise<LocalDelivery> {
    while (this.#read < this.sent.length) {
      const delivery = this.sent[this.#read++]!;
      if (match(delivery)) return Promise.resolve(delivery);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new ThreadlineError(
              "TL_ERR_TIMEOUT",
              `No matching message within ${timeoutMs} ms; check what the gateway sent (adapter.sent) or give nextMessage a longer timeout.`,
            ),
          ),
        timeoutMs,
      );
      this.#waiters.push({
        match,
        resolve: (d) => {
          clearTimeout(timer);
          this.#read = this.sent.length;
          resolve(d);
        },
      });
    });
  }

  /** Deliveries answering a given inbound message id. */
  repliesTo(messageId: string): LocalDelivery[] {
    return this.sent.filter((d) => d.message.inReplyTo.includes(messageId));
  }
}
