/**
 * The Telegram adapter: grammY (loaded lazily) on the Bot API, by long polling or by
 * webhook (a route on the gateway's own HTTP server, checked against the secret token).
 *
 * - Inbound: every message, edit and channel post is mapped ({@link mapTelegramMessage}),
 *   filtered by the answer rules ({@link decideAnswer}: refused messages are dropped, not
 *   stored), de-duplicated by `update_id`, and handed to the gateway; while its turn runs
 *   the chat shows "typing…" (renewed every 4 s).
 * - Outbound: replies are split so each chunk's rendered text (what Telegram counts, in
 *   UTF-16 code units) is at most 4,096 ({@link splitMessage} with
 *   {@link telegramRenderedLength}), converted to Telegram HTML (plain text again when
 *   Telegram answers "can't parse entities"), sent in the same forum topic and as a reply to
 *   the triggering message; notices are sent as plain text. A chunk Telegram still finds
 *   "too long" is split in halves and sent again, so no part is lost. Link previews are off
 *   (`link_preview_options.is_disabled`) on every sendMessage and editMessageText unless
 *   `linkPreviews`. 429s are waited out by `@grammyjs/auto-retry`.
 * - Polling survives connection errors with growing pauses (1 s doubling to 60 s) and is
 *   restarted with the same back-off if it stops (a 409 conflict, a revoked token).
 * - The bot token never appears in anything this adapter logs or throws.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Bot, Context, Transformer } from "grammy";
import type { Message } from "grammy/types";
import {
  SLASH_COMMANDS,
  noopLogger,
  type Adapter,
  type GatewayLogger,
  type InboundHandler,
  type OutboundMessage,
  type SessionSource,
} from "../../gateway/index.js";
import { InvalidInputError, PlatformError } from "../../store/index.js";
import {
  DEFAULT_ANSWER_RULES,
  SeenMessageIds,
  TypingIndicator,
  abortableSleep,
  connectInBackground,
  decideAnswer,
  loadSdk,
  redactError,
  splitMessage,
  type AnswerRules,
} from "../chat/index.js";
import { secretsEqual } from "../../net/index.js";
import { TELEGRAM_MESSAGE_LIMIT, markdownToTelegramHtml, telegramRenderedLength } from "./telegram-format.js";
import { TELEGRAM_PLATFORM, mapTelegramMessage } from "./telegram-source.js";

type Grammy = typeof import("grammy");
type AutoRetry = typeof import("@grammyjs/auto-retry");

/** Options of a {@link TelegramAdapter}. */
export interface TelegramAdapterOptions {
  /** The bot token from BotFather (never logged). */
  token: string;
  /** `polling` (getUpdates long polling, the default) or `webhook`. */
  mode?: "polling" | "webhook";
  /** The Bot API base URL (default `https://api.telegram.org`; a self-hosted Bot API server, or a test fake). */
  apiRoot?: string | null;
  /** Webhook mode: the public HTTPS URL Telegram POSTs updates to. */
  webhookUrl?: string | null;
  /** Webhook mode: the `secret_token` Telegram sends in `X-Telegram-Bot-Api-Secret-Token`; requests without it get 401. */
  secret?: string | null;
  /** Webhook mode: the route on the gateway's server (default: the path of `webhookUrl`). */
  webhookPath?: string | null;
  /** Who is answered (default: DMs, and mentions/replies in groups; no bots; no allowlists). */
  rules?: AnswerRules;
  /** Let the platform show previews of links in sent messages (default false: previews off, so no URL in a reply is fetched without a click). */
  linkPreviews?: boolean;
  logger?: GatewayLogger;
  /** Long-polling timeout in seconds (default 30). */
  pollingTimeoutSeconds?: number;
  /** How many times a send hit by 429 or a 5xx is retried (default 5). */
  maxRetryAttempts?: number;
  /** How long `connect` waits for the Bot API before going on in the background, in ms (default 20,000). */
  connectTimeoutMs?: number;
}

/** The Telegram platform adapter. Create it with {@link TelegramAdapter.create}. */
export class TelegramAdapter implements Adapter {
  readonly platform = TELEGRAM_PLATFORM;
  readonly #grammy: Grammy;
  readonly #bot: Bot;
  readonly #token: string;
  readonly #mode: "polling" | "webhook";
  readonly #options: TelegramAdapterOptions;
  readonly #rules: AnswerRules;
  readonly #log: GatewayLogger;
  readonly #seen = new SeenMessageIds(10_000);
  readonly #typing: TypingIndicator;
  /** `<chatId>:<threadId>` of forum topics the bot opened or posted in. */
  readonly #botTopics = new Set<string>();
  #handler: InboundHandler | null = null;
  #receiving = false;
  #polling: Promise<void> | null = null;
  readonly #stop = new AbortController();

  private constructor(options: TelegramAdapterOptions, grammy: Grammy, retry: AutoRetry) {
    this.#options = options;
    this.#grammy = grammy;
    this.#token = options.token;
    this.#mode = options.mode ?? "polling";
    if (this.#mode === "webhook" && (typeof options.secret !== "string" || options.secret.length < 16)) {
      throw new InvalidInputError(
        "adapters.telegram.secret: webhook mode needs a secret of at least 16 characters (letters, digits, '_' or '-'; e.g. openssl rand -hex 24): Telegram sends it with every update.",
        { field: "adapters.telegram.secret" },
      );
    }
    this.#rules = options.rules ?? DEFAULT_ANSWER_RULES;
    this.#log = options.logger ?? noopLogger;
    const apiRoot = options.apiRoot?.replace(/\/+$/u, "");
    this.#bot = new grammy.Bot(options.token, apiRoot ? { client: { apiRoot } } : {});
    // Sends: 429 (retry_after) and 5xx are retried by the plugin; network errors fail the send (logged and counted).
    const sendRetry = retry.autoRetry({ maxRetryAttempts: options.maxRetryAttempts ?? 5, maxDelaySeconds: 300, rethrowHttpErrors: true });
    this.#bot.api.config.use((prev, method, payload, signal) =>
      method === "getUpdates" ? this.#pollBackoff(prev, method, payload, signal) : sendRetry(prev, method, payload, signal),
    );
    // Every text the bot sends or edits goes out without a link preview unless asked for: a
    // preview is fetched by Telegram's servers with no click (docs/platforms.md).
    if (options.linkPreviews !== true) {
      this.#bot.api.config.use((prev, method, payload, signal) => {
        if ((method === "sendMessage" || method === "editMessageText") && !("link_preview_options" in payload)) {
          return prev(method, { ...payload, link_preview_options: { is_disabled: true } } as typeof payload, signal);
        }
        return prev(method, payload, signal);
      });
    }
    this.#typing = new TypingIndicator({
      send: (chat) => {
        const [chatId, threadId] = chat.split("\u0000");
        return this.#bot.api.sendChatAction(chatId!, "typing", threadId ? { message_thread_id: Number(threadId) } : {});
      },
      onError: (error) => this.#log.warn({ err: this.#safe(error), platform: this.platform }, "telegram: sendChatAction failed"),
    });
    this.#bot.on(["message", "edited_message", "channel_post", "edited_channel_post"], (ctx) => this.#receive(ctx));
    this.#bot.catch((error) => this.#log.error({ err: this.#safe(error.error), platform: this.platform }, "telegram: handling an update failed"));
  }

  /** Loads grammY and its auto-retry plugin and makes the adapter (nothing is sent yet). */
  static async create(options: TelegramAdapterOptions): Promise<TelegramAdapter> {
    const grammy = await loadSdk<Grammy>("grammy", TELEGRAM_PLATFORM, () => import("grammy"));
    const retry = await loadSdk<AutoRetry>("@grammyjs/auto-retry", TELEGRAM_PLATFORM, () => import("@grammyjs/auto-retry"));
    return new TelegramAdapter(options, grammy, retry);
  }

  /** `polling` or `webhook`. */
  get mode(): "polling" | "webhook" {
    return this.#mode;
  }

  /** The bot's `@username` once connected (`null` before). */
  get username(): string | null {
    return this.#bot.isInited() ? `@${this.#bot.botInfo.username}` : null;
  }

  /** Webhook mode: mounts `POST <path>` on the gateway's server (call before it listens). */
  routes(http: FastifyInstance): void {
    if (this.#mode !== "webhook") return;
    const path = this.#options.webhookPath ?? new URL(this.#options.webhookUrl!).pathname;
    const callback = this.#grammy.webhookCallback(this.#bot, "fastify", {
      secretToken: this.#options.secret ?? undefined,
      onTimeout: "return",
      timeoutMilliseconds: 50_000,
    });
    const secret = this.#options.secret ?? null;
    // The secret is checked before the body is read, in constant time (grammY compares it again, after).
    const checkSecret = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      const given = request.headers["x-telegram-bot-api-secret-token"];
      if (secret !== null && (typeof given !== "string" || !secretsEqual(given, secret))) {
        await reply.code(401).send({ error: "wrong or missing X-Telegram-Bot-Api-Secret-Token" });
      }
    };
    // The access log shows the route as `(telegram webhook)`: the path is often a secret.
    http.post(path, { onRequest: checkSecret, config: { logAs: "(telegram webhook)" } }, async (request, reply) => {
      if (!this.#receiving) return reply.code(503).send({ error: "not receiving" });
      return callback(request, reply);
    });
  }

  /**
   * Logs in (getMe), registers the slash commands (setMyCommands) and starts polling or
   * sets the webhook. A refused token fails at once; an unreachable Bot API does not hold
   * the gateway's start: after `connectTimeoutMs` the adapter keeps trying in the
   * background (grammY retries with back-off) and logs when it is connected.
   */
  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
    this.#receiving = true;
    await connectInBackground(this.#bringUp(), {
      timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
      onTimeout: () =>
        this.#log.warn(
          { platform: this.platform, apiRoot: this.#options.apiRoot ?? "https://api.telegram.org" },
          "telegram: the Bot API does not answer yet; still connecting in the background",
        ),
      onBackgroundFailure: (error) => this.#log.error({ err: this.#safe(error), platform: this.platform }, "telegram: connecting failed"),
    });
  }

  async #bringUp(): Promise<void> {
    try {
      await this.#bot.init(this.#stop.signal as Parameters<Bot["init"]>[0]);
    } catch (error) {
      throw this.#connectError(error);
    }
    if (!this.#receiving) return;
    const commands = Object.entries(SLASH_COMMANDS)
      .filter(([name]) => /^[a-z0-9_]{1,32}$/u.test(name))
      .map(([command, description]) => ({ command, description: description.slice(0, 256) }));
    await this.#bot.api
      .setMyCommands(commands)
      .catch((error: unknown) =>
        this.#log.warn({ err: this.#safe(error), platform: this.platform }, "telegram: setMyCommands failed (the commands still work as text)"),
      );
    if (this.#mode === "webhook") {
      try {
        await this.#bot.api.setWebhook(this.#options.webhookUrl!, {
          secret_token: this.#options.secret ?? undefined,
          allowed_updates: ["message", "edited_message", "channel_post", "edited_channel_post"],
        });
      } catch (error) {
        throw this.#connectError(error);
      }
    } else {
      this.#polling = this.#pollLoop();
    }
    this.#log.info({ platform: this.platform, mode: this.#mode, bot: this.username }, `telegram adapter connected as ${this.username} (${this.#mode})`);
  }

  /** Stops taking updates (polling stops and confirms what it handled; the webhook route answers 503). */
  async stopReceiving(): Promise<void> {
    if (!this.#receiving) return;
    this.#receiving = false;
    this.#stop.abort();
    if (this.#bot.isRunning())
      await this.#bot.stop().catch((error: unknown) => this.#log.warn({ err: this.#safe(error) }, "telegram: stopping polling failed"));
    await this.#polling;
  }

  async disconnect(): Promise<void> {
    await this.stopReceiving();
    this.#typing.stopAll();
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const chatId = source.chatId;
    if (chatId === undefined || chatId === null || chatId === "") {
      throw new InvalidInputError("telegram: the session source has no chatId to send to; pass the source of a Telegram chat.", { field: "source.chatId" });
    }
    const threadId = source.threadId ? Number(source.threadId) : undefined;
    const chat = this.#chatKey(chatId, source.threadId);
    const replyTo = message.inReplyTo.map((id) => Number.parseInt(id, 10)).find((n) => Number.isSafeInteger(n) && n > 0);
    try {
      if (message.text.trim() === "") return { messageId: null };
      let first: string | null = null;
      const formatted = message.kind === "reply";
      const chunks = splitMessage(message.text, TELEGRAM_MESSAGE_LIMIT, formatted ? { measure: telegramRenderedLength } : {});
      for (const [i, chunk] of chunks.entries()) {
        const other = {
          ...(threadId !== undefined && Number.isSafeInteger(threadId) ? { message_thread_id: threadId } : {}),
          ...(i === 0 && replyTo !== undefined ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}),
        };
        const sent = await this.#sendChunk(chatId, chunk, other, formatted, 0);
        first ??= String(sent.message_id);
      }
      if (threadId !== undefined) this.#botTopics.add(`${chatId}:${source.threadId}`);
      return { messageId: first };
    } catch (error) {
      throw this.#failure(error);
    } finally {
      if (message.kind !== "notice") this.#typing.stop(chat);
    }
  }

  /** Opens a forum topic in the chat of `source` (a forum supergroup) and returns its source. */
  async createThread(source: SessionSource, title: string): Promise<SessionSource> {
    const chatId = source.chatId;
    if (!chatId) {
      throw new InvalidInputError("telegram: the home channel has no chatId; set homeChannels.telegram.chatId to a chat id, or send /sethome in that chat.", {
        field: "source.chatId",
      });
    }
    try {
      const topic = await this.#bot.api.createForumTopic(chatId, title.slice(0, 128) || "Threadline");
      const threadId = String(topic.message_thread_id);
      this.#botTopics.add(`${chatId}:${threadId}`);
      return { platform: this.platform, chatType: "group", chatId, chatName: source.chatName ?? null, threadId };
    } catch (error) {
      throw this.#failure(error);
    }
  }

  async editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    try {
      await this.#bot.api.editMessageText(source.chatId!, Number(messageId), text);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  // --- inbound -----------------------------------------------------------------------

  async #receive(ctx: Context): Promise<void> {
    const handler = this.#handler;
    if (handler === null || !this.#receiving) return;
    const updateId = String(ctx.update.update_id);
    if (!this.#seen.add(updateId)) return;
    const message: Message | undefined = ctx.msg;
    if (message === undefined) return;
    const edited = ctx.editedMessage !== undefined || ctx.editedChannelPost !== undefined;
    const mapped = mapTelegramMessage(message, ctx.me, { edited, botTopics: this.#botTopics });
    if (mapped === null) return;
    const decision = decideAnswer(mapped.candidate, this.#rules);
    if (!decision.answer) {
      this.#log.debug?.({ platform: this.platform, reason: decision.reason }, "telegram: message not answered");
      return;
    }
    const { inbound } = mapped;
    // Typing starts before the gateway takes the message: a fast turn may reply (and stop it)
    // before the acknowledgement is back. Commands, repeats and refusals stop it at once.
    const chat = this.#chatKey(inbound.source.chatId!, inbound.source.threadId);
    this.#typing.start(chat);
    try {
      const ack = await handler(inbound);
      if (ack.status !== "accepted" && ack.status !== "queued") this.#typing.stop(chat);
      if (ack.status === "rejected")
        this.#log.warn({ platform: this.platform, key: ack.sessionKey, reason: ack.reason }, "telegram: message refused by the gateway");
    } catch (error) {
      this.#typing.stop(chat);
      this.#seen.delete(updateId);
      this.#log.error({ err: this.#safe(error), platform: this.platform }, "telegram: the gateway could not take a message");
      await this.send(inbound.source, {
        text: "Sorry, your message could not be stored. Please send it again.",
        kind: "error",
        inReplyTo: [inbound.messageId ?? ""],
      }).catch(() => {});
    }
  }

  // --- helpers -----------------------------------------------------------------------

  #chatKey(chatId: string, threadId: string | null | undefined): string {
    return `${chatId}\u0000${threadId ?? ""}`;
  }

  /**
   * Sends one chunk (Telegram HTML when `formatted`, else plain text). When Telegram answers
   * "message is too long" (it counted more than we did), the chunk is split in halves and each
   * half sent the same way (at most 4 times deeper), so the text after it is not lost. Only the
   * first piece is a reply to the triggering message.
   */
  async #sendChunk(chatId: string, text: string, other: Record<string, unknown>, formatted: boolean, depth: number): Promise<Message.TextMessage> {
    try {
      return formatted ? await this.#sendFormatted(chatId, text, other) : await this.#bot.api.sendMessage(chatId, text, other);
    } catch (error) {
      if (!this.#tooLong(error) || depth >= 4 || text.length < 32) throw error;
      const measure = formatted ? telegramRenderedLength : (t: string): number => t.length;
      const limit = Math.max(16, Math.min(TELEGRAM_MESSAGE_LIMIT, Math.floor(measure(text) / 2)));
      const pieces = splitMessage(text, limit, { measure });
      this.#log.warn({ platform: this.platform, pieces: pieces.length }, "telegram: message too long; sending it in smaller pieces");
      const { reply_parameters: _reply, ...rest } = other;
      let first: Message.TextMessage | null = null;
      for (const [i, piece] of pieces.entries()) {
        const sent = await this.#sendChunk(chatId, piece, i === 0 ? other : rest, formatted, depth + 1);
        first ??= sent;
      }
      return first!;
    }
  }

  /** Whether Telegram refused a text for its length. */
  #tooLong(error: unknown): boolean {
    return (
      error instanceof this.#grammy.GrammyError && error.error_code === 400 && /message is too long|text is too long|MESSAGE_TOO_LONG/iu.test(error.description)
    );
  }

  /** Sends Telegram HTML; plain text when Telegram cannot parse the entities. */
  async #sendFormatted(chatId: string, markdown: string, other: Record<string, unknown>): Promise<Message.TextMessage> {
    try {
      return await this.#bot.api.sendMessage(chatId, markdownToTelegramHtml(markdown), { ...other, parse_mode: "HTML" });
    } catch (error) {
      if (error instanceof this.#grammy.GrammyError && error.error_code === 400 && /can't parse entities|can't find end/iu.test(error.description)) {
        this.#log.warn({ platform: this.platform, description: error.description }, "telegram: formatting rejected; sending plain text");
        return await this.#bot.api.sendMessage(chatId, markdown, other);
      }
      throw error;
    }
  }

  async #pollLoop(): Promise<void> {
    let delay = 1_000;
    while (this.#receiving) {
      try {
        await this.#bot.start({
          timeout: this.#options.pollingTimeoutSeconds ?? 30,
          allowed_updates: ["message", "edited_message", "channel_post", "edited_channel_post"],
          onStart: () => {
            delay = 1_000;
          },
        });
      } catch (error) {
        if (!this.#receiving) return;
        this.#log.error(
          { err: this.#safe(error), platform: this.platform, retryInSeconds: delay / 1000 },
          `telegram: polling stopped (${this.#safe(error).message}); restarting in ${delay / 1000} s`,
        );
        await abortableSleep(delay, this.#stop.signal);
        delay = Math.min(delay * 2, 60_000);
      }
    }
  }

  /** getUpdates: after a connection error, wait 1 s, 2 s, 4 s … (at most 60 s) before grammY retries. */
  #pollFailures = 0;
  readonly #pollBackoff: Transformer = async (prev, method, payload, signal) => {
    try {
      const result = await prev(method, payload, signal);
      if (this.#pollFailures > 0) this.#log.info({ platform: this.platform }, "telegram: Bot API reachable again; polling resumed");
      this.#pollFailures = 0;
      return result;
    } catch (error) {
      if (error instanceof this.#grammy.HttpError && this.#receiving && !(signal?.aborted ?? false)) {
        const wait = Math.min(60_000, 1000 * 2 ** Math.min(this.#pollFailures, 6));
        this.#pollFailures += 1;
        this.#log.warn(
          { err: this.#safe(error), platform: this.platform, retryInSeconds: wait / 1000 },
          "telegram: cannot reach the Bot API; polling again after a pause",
        );
        await abortableSleep(wait, this.#stop.signal);
      }
      throw error;
    }
  };

  #connectError(error: unknown): PlatformError {
    const safe = this.#safe(error);
    const code = (error as { error_code?: number }).error_code;
    const why =
      code === 401 || code === 404
        ? "Telegram refused the bot token (check adapters.telegram.token or TELEGRAM_BOT_TOKEN; BotFather's /token shows it)"
        : `could not reach the Telegram Bot API${this.#options.apiRoot ? ` at ${this.#options.apiRoot}` : ""}: ${safe.message}`;
    return new PlatformError(this.platform, `telegram: ${why}`, { platformCode: code ?? null, cause: safe });
  }

  #safe(error: unknown): Error {
    return redactError(error, [this.#token]);
  }

  /** A failed platform call as the adapter throws it: a {@link PlatformError} with the redacted error's message, that error as `cause`. */
  #failure(error: unknown): PlatformError {
    const safe = this.#safe(error);
    return new PlatformError(this.platform, safe.message, { cause: safe });
  }
}
