/**
 * What the Matrix bot posted ({@link MatrixBotPosts}): the event ids it sent (a reply to one
 * addresses the bot) and the thread roots it posted in (kept across restarts in the
 * gateway's database), and the look-up of whether a message replies to the bot or sits in
 * one of its threads (asking the homeserver when the event is not known).
 *
 * @module
 */
import type { MatrixClient } from "matrix-js-sdk";
import type { AdapterStateStore, GatewayLogger } from "../../gateway/index.js";
import { SeenMessageIds } from "../chat/index.js";
import { MATRIX_PLATFORM, matrixRelations, stripReplyFallback, type MatrixRawEvent } from "./matrix-source.js";

/** How many thread roots the bot posted in are remembered across restarts. */
const BOT_THREADS_KEPT = 500;

/** What {@link MatrixBotPosts} works with. */
export interface MatrixBotPostsOptions {
  client: MatrixClient;
  state: AdapterStateStore | null;
  log: GatewayLogger;
  /** The error with the access token removed. */
  safe(error: unknown): Error;
  /** The bot's user id (`null` before the login). */
  userId(): string | null;
}

/** The bot's own events and threads. */
export class MatrixBotPosts {
  readonly #client: MatrixClient;
  readonly #state: AdapterStateStore | null;
  readonly #log: GatewayLogger;
  readonly #safe: (error: unknown) => Error;
  readonly #userId: () => string | null;
  /** Event ids the bot sent (replies to them address the bot). */
  readonly #events = new SeenMessageIds(10_000);
  /** Thread roots the bot posted in (kept across restarts). */
  #threads: string[] = [];

  constructor(options: MatrixBotPostsOptions) {
    this.#client = options.client;
    this.#state = options.state;
    this.#log = options.log;
    this.#safe = options.safe;
    this.#userId = options.userId;
  }

  /** Notes an event the bot sent. */
  addEvent(eventId: string): void {
    this.#events.add(eventId);
  }

  /** Reads the thread roots saved by earlier runs. */
  async loadThreads(): Promise<void> {
    try {
      const saved = await this.#state?.get(`bot_threads:${this.#userId()}`);
      const parsed: unknown = saved ? JSON.parse(saved) : [];
      if (Array.isArray(parsed)) this.#threads = parsed.filter((id): id is string => typeof id === "string").slice(-BOT_THREADS_KEPT);
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: MATRIX_PLATFORM }, "matrix: could not read the bot's threads");
    }
  }

  /** Notes (and saves) a thread root the bot posted in. */
  async rememberThread(root: string): Promise<void> {
    if (this.#threads.includes(root)) return;
    this.#threads = [...this.#threads, root].slice(-BOT_THREADS_KEPT);
    const userId = this.#userId();
    if (userId === null) return;
    await this.#state
      ?.set(`bot_threads:${userId}`, JSON.stringify(this.#threads))
      .catch((error: unknown) => this.#log.warn({ err: this.#safe(error), platform: MATRIX_PLATFORM }, "matrix: could not save the bot's threads"));
  }

  /** Whether the event replies to the bot and whether its thread is the bot's (looked up when not known). */
  async relationsOf(roomId: string, event: MatrixRawEvent): Promise<{ repliesToBot: boolean; inBotThread: boolean }> {
    const rel = matrixRelations(event.content);
    let repliesToBot = false;
    if (rel.replyTo !== null && !rel.replyIsFallback) {
      const body = typeof event.content["body"] === "string" ? event.content["body"] : "";
      // The reply fallback names the author of the message replied to.
      const fallbackNamesBot = body !== stripReplyFallback(body) && body.startsWith(`> <${this.#userId()}>`);
      repliesToBot = fallbackNamesBot || (await this.#sentByBot(roomId, rel.replyTo));
    }
    let inBotThread = false;
    if (rel.threadRoot !== null) inBotThread = this.#threads.includes(rel.threadRoot) || (await this.#sentByBot(roomId, rel.threadRoot));
    return { repliesToBot, inBotThread };
  }

  async #sentByBot(roomId: string, eventId: string): Promise<boolean> {
    if (this.#events.has(eventId)) return true;
    try {
      const event = await this.#client.fetchRoomEvent(roomId, eventId);
      if (event.sender === this.#userId()) this.#events.add(eventId);
      return event.sender === this.#userId();
    } catch (error) {
      this.#log.debug?.({ err: this.#safe(error), platform: MATRIX_PLATFORM }, "matrix: could not look up a related event");
      return false;
    }
  }
}
