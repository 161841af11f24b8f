/**
 * The Telegram adapter: grammY (loaded lazily) on the Bot API, by long polling or by
 * webhook (a route on the gateway's own HTTP server, checked against the secret token).
 *
 * - Inbound: every message, edit and channel post is mapped ({@link mapTelegramMessage}) and
 *   goes through the chat adapters' one {@link InboundFlow} (de-duplicated by `update_id`,
 *   the answer rules, "typing…" renewed every 4 s, the hand-off to the gateway). Telegram
 *   delivers again what was not taken (`redelivers`): when the gateway cannot store a
 *   message, a webhook update is answered 500 and a polled one is handed over again after a
 *   pause (polling does not move on meanwhile).
 * - Outbound: replies are split so each chunk's rendered text (what Telegram counts, in
 *   UTF-16 code units) is at most 4,096 ({@link splitMessage} with
 *   {@link telegramRenderedLength}), converted to Telegram HTML (plain text again when
 *   Telegram answers "can't parse entities"), sent in the same forum topic and as a reply to
 *   the triggering message; notices are sent as plain text. A chunk Telegram still finds
 *   "too long" is split in halves and sent again, so no part is lost. Link previews are off
 *   (`link_preview_options.is_disabled`) on every sendMessage and editMessageText unless
 *   `linkPreviews`. 429s are waited out by `@grammyjs/auto-retry`.
 * - Polling survives connection errors with growing pauses ({@link Backoff}: 1 s doubling to
 *   60 s) and is restarted with the same back-off if it stops (a 409 conflict, a revoked
 *   token). With several replicas it runs under the receiver lease (one replica polls:
 *   Telegram answers a second `getUpdates` with 409); sending works on every replica.
 * - Media: {@link TelegramAdapter.fetchMedia} downloads an inbound file through the Bot API
 *   (`getFile`, then `<apiRoot>/file/bot<token>/<file_path>`), refusing files over the 20 MB a
 *   bot may download before any download.
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
  MediaUnavailableError,
  type AdapterEvents,
  type FetchedMedia,
  type GatewayLogger,
  type InboundHandler,
  type InboundMedia,
  type MediaFetchRequest,
  type OutboundMessage,
  type SessionSource,
} from "../../gateway/index.js";
import { InvalidInputError, PlatformError } from "../../store/index.js";
import {
  Backoff,
  InboundFlow,
  PlatformFailures,
  abortableSleep,
  connectInBackground,
  downloadPlatformFile,
  httpOrigin,
  loadSdk,
  redactText,
  splitMessage,
  type AnswerRules,
  type MappedInbound,
} from "../chat/index.js";
import { secretsEqual } from "../../net/index.js";
import { TELEGRAM_MESSAGE_LIMIT, markdownToTelegramHtml, telegramRenderedLength } from "./telegram-format.js";
import { TELEGRAM_DOWNLOAD_LIMIT, TELEGRAM_PLATFORM, mapTelegramMessage } from "./telegram-source.js";

/** The Bot API's own address, when `apiRoot` is not set. */
const TELEGRAM_API_ROOT = "https://api.telegram.org";

/** What the chat is told when a file is over the Bot API's download limit. */
const TOO_BIG_FOR_BOTS = "Telegram lets bots download files of at most 20 MB.";

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
  /** Polling keeps one `getUpdates` per token (one replica polls); a webhook is served by any replica. */
  readonly exclusiveReceiver: boolean;
  readonly #grammy: Grammy;
  readonly #bot: Bot;
  readonly #mode: "polling" | "webhook";
  readonly #options: TelegramAdapterOptions;
  readonly #log: GatewayLogger;
  readonly #failures: PlatformFailures;
  readonly #flow: InboundFlow;
  /** `<chatId>:<threadId>` of forum topics the bot opened or posted in. */
  readonly #botTopics = new Set<string>();
  /** Between `connect` and `stopReceiving` (the bring-up goes on only while it is set). */
  #wanted = false;
  #connecting = new AbortController();
  #polling: { loop: Promise<void>; stop: AbortController } | null = null;
  readonly #pollBackoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
  /** The Bot API base URL without a trailing slash (files are downloaded from `<apiRoot>/file/bot<token>/…`). */
  readonly #apiRoot: string;

  private constructor(options: TelegramAdapterOptions, grammy: Grammy, retry: AutoRetry) {
    this.#options = options;
    this.#grammy = grammy;
    this.#mode = options.mode ?? "polling";
    this.exclusiveReceiver = this.#mode === "polling";
    if (this.#mode === "webhook" && (typeof options.secret !== "string" || options.secret.length < 16)) {
      throw new InvalidInputError(
        "adapters.telegram.secret: webhook mode needs a secret of at least 16 characters (letters, digits, '_' or '-'; e.g. openssl rand -hex 24): Telegram sends it with every update.",
        { field: "adapters.telegram.secret" },
      );
    }
    this.#log = options.logger ?? noopLogger;
    this.#failures = new PlatformFailures(TELEGRAM_PLATFORM, [options.token], { codeOf: (error) => (error as { error_code?: number }).error_code });
    const apiRoot = options.apiRoot?.replace(/\/+$/u, "");
    this.#apiRoot = apiRoot || TELEGRAM_API_ROOT;
    this.#bot = new grammy.Bot(options.token, apiRoot ? { client: { apiRoot } } : {});
    // Sends: 429 (retry_after) and 5xx are retried by the plugin; network errors fail the send (logged and counted).
    const sendRetry = retry.autoRetry({ maxRetryAttempts: options.maxRetryAttempts ?? 5, maxDelaySeconds: 300, rethrowHttpErrors: true });
    this.#bot.api.config.use((prev, method, payload, signal) =>
      method === "getUpdates" ? this.#pollPause(prev, method, payload, signal) : sendRetry(prev, method, payload, signal),
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
    this.#flow = new InboundFlow({
      platform: TELEGRAM_PLATFORM,
      redelivers: true,
      rules: options.rules,
      logger: this.#log,
      send: (source, message) => this.send(source, message),
      redact: (error) => this.#failures.safe(error),
      typing: {
        send: (chat) => {
          const [chatId, threadId] = chat.split("\u0000");
          return this.#bot.api.sendChatAction(chatId!, "typing", threadId ? { message_thread_id: Number(threadId) } : {});
        },
      },
    });
    this.#bot.on(["message", "edited_message", "channel_post", "edited_channel_post"], (ctx) => this.#receive(ctx));
    this.#bot.catch((error) => this.#log.error({ err: this.#failures.safe(error.error), platform: this.platform }, "telegram: handling an update failed"));
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
      if (!this.#flow.receiving) return reply.code(503).send({ error: "not receiving" });
      return callback(request, reply);
    });
  }

  /**
   * Logs in (getMe), registers the slash commands (setMyCommands) and starts polling or
   * sets the webhook. A refused token fails at once; an unreachable Bot API does not hold
   * the gateway's start: after `connectTimeoutMs` the adapter keeps trying in the
   * background (grammY retries with back-off) and logs when it is connected.
   */
  async connect(handler: InboundHandler, events?: AdapterEvents): Promise<void> {
    this.#flow.connect(handler, events);
    this.#wanted = true;
    this.#connecting = new AbortController();
    await connectInBackground(this.#bringUp(), {
      timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
      onTimeout: () =>
        this.#log.warn(
          { platform: this.platform, apiRoot: this.#options.apiRoot ?? "https://api.telegram.org" },
          "telegram: the Bot API does not answer yet; still connecting in the background",
        ),
      onBackgroundFailure: (error) => this.#log.error({ err: this.#failures.safe(error), platform: this.platform }, "telegram: connecting failed"),
    });
  }

  async #bringUp(): Promise<void> {
    try {
      await this.#bot.init(this.#connecting.signal as Parameters<Bot["init"]>[0]);
    } catch (error) {
      throw this.#connectError(error);
    }
    if (!this.#wanted) return;
    const commands = Object.entries(SLASH_COMMANDS)
      .filter(([name]) => /^[a-z0-9_]{1,32}$/u.test(name))
      .map(([command, description]) => ({ command, description: description.slice(0, 256) }));
    await this.#bot.api
      .setMyCommands(commands)
      .catch((error: unknown) =>
        this.#log.warn({ err: this.#failures.safe(error), platform: this.platform }, "telegram: setMyCommands failed (the commands still work as text)"),
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
      await this.#flow.receive();
    } else {
      await this.#flow.receive({ start: async () => this.#startPolling(), stop: () => this.#stopPolling() });
    }
    this.#log.info({ platform: this.platform, mode: this.#mode, bot: this.username }, `telegram adapter connected as ${this.username} (${this.#mode})`);
  }

  /** Stops taking updates (polling stops and confirms what it handled; the webhook route answers 503); `connect` starts again. */
  async stopReceiving(): Promise<void> {
    this.#wanted = false;
    this.#connecting.abort();
    await this.#flow.stopReceiving();
  }

  async disconnect(): Promise<void> {
    this.#wanted = false;
    this.#connecting.abort();
    await this.#flow.close();
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
      throw this.#failures.failure(error);
    } finally {
      if (message.kind !== "notice") this.#flow.stopTyping(chat);
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
      throw this.#failures.failure(error);
    }
  }

  async editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    try {
      await this.#bot.api.editMessageText(source.chatId!, Number(messageId), text);
    } catch (error) {
      throw this.#failures.failure(error);
    }
  }

  /**
   * Downloads an inbound file through the Bot API: `getFile` gives its `file_path`, then
   * `GET <apiRoot>/file/bot<token>/<file_path>` (the configured `apiRoot` only). A file over the
   * Bot API's 20 MB download limit (declared, or as `getFile` tells) is refused with
   * {@link MediaUnavailableError} before anything is downloaded. The token never appears in an
   * error.
   */
  async fetchMedia(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia> {
    const fileId = media.fileId;
    if (typeof fileId !== "string" || fileId === "") {
      throw new PlatformError(this.platform, "telegram: the attachment has no file_id, so it cannot be downloaded through getFile");
    }
    if (typeof media.size === "number" && media.size > TELEGRAM_DOWNLOAD_LIMIT) throw new MediaUnavailableError(TOO_BIG_FOR_BOTS);
    let file: Awaited<ReturnType<Bot["api"]["getFile"]>>;
    try {
      file = await this.#bot.api.getFile(fileId, request.signal as Parameters<Bot["api"]["getFile"]>[1]);
    } catch (error) {
      if (this.#failures.codeOf(error) === 400 && /file is too big/iu.test(String((error as { description?: unknown }).description ?? ""))) {
        throw new MediaUnavailableError(TOO_BIG_FOR_BOTS);
      }
      throw this.#failures.failure(error);
    }
    if (typeof file.file_size === "number" && file.file_size > TELEGRAM_DOWNLOAD_LIMIT) throw new MediaUnavailableError(TOO_BIG_FOR_BOTS);
    if (typeof file.file_path !== "string" || file.file_path === "") {
      throw new MediaUnavailableError("Telegram did not give the file for download (it may have expired); please send it again.");
    }
    const path = file.file_path.split("/").map(encodeURIComponent).join("/");
    const token = this.#options.token;
    const fetched = await downloadPlatformFile(`${this.#apiRoot}/file/bot${token}/${path}`, {
      platform: this.platform,
      origins: new Set([httpOrigin(this.#apiRoot) ?? TELEGRAM_API_ROOT]),
      host: "the Bot API server",
      signal: request.signal,
      redact: (text) => redactText(text, [token]),
    });
    return { ...fetched, size: fetched.size ?? file.file_size ?? null };
  }

  // --- inbound -----------------------------------------------------------------------

  /**
   * One update through the flow. When the gateway cannot store it, Telegram must deliver it
   * again: a webhook update fails (grammY answers 500); a polled one is handed over again after
   * a pause, so polling does not move past it while the store is down.
   */
  async #receive(ctx: Context): Promise<void> {
    const id = String(ctx.update.update_id);
    const retry = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
    while ((await this.#flow.take(id, () => this.#map(ctx))) === "redeliver") {
      if (this.#mode === "webhook") throw new PlatformError(this.platform, "telegram: the gateway could not take the update; Telegram delivers it again");
      if (!this.#flow.receiving || this.#polling === null) return;
      await retry.sleep(this.#polling.stop.signal);
    }
  }

  #map(ctx: Context): MappedInbound | null {
    const message: Message | undefined = ctx.msg;
    if (message === undefined) return null;
    const edited = ctx.editedMessage !== undefined || ctx.editedChannelPost !== undefined;
    const mapped = mapTelegramMessage(message, ctx.me, { edited, botTopics: this.#botTopics });
    if (mapped === null) return null;
    return { ...mapped, typingKey: this.#chatKey(mapped.inbound.source.chatId!, mapped.inbound.source.threadId) };
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

  /** Starts the polling loop (a receiver lease's `start`; again after {@link #stopPolling}). */
  #startPolling(): void {
    if (this.#polling !== null) return;
    const stop = new AbortController();
    this.#polling = { stop, loop: this.#pollLoop(stop.signal) };
  }

  /** Stops polling (confirming what was handled) and waits for the loop to end. */
  async #stopPolling(): Promise<void> {
    const polling = this.#polling;
    if (polling === null) return;
    polling.stop.abort();
    if (this.#bot.isRunning())
      await this.#bot.stop().catch((error: unknown) => this.#log.warn({ err: this.#failures.safe(error) }, "telegram: stopping polling failed"));
    await polling.loop;
    this.#polling = null;
  }

  async #pollLoop(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
    while (!signal.aborted) {
      try {
        await this.#bot.start({
          timeout: this.#options.pollingTimeoutSeconds ?? 30,
          allowed_updates: ["message", "edited_message", "channel_post", "edited_channel_post"],
          onStart: () => backoff.reset(),
        });
      } catch (error) {
        if (signal.aborted) return;
        const delay = backoff.next();
        const safe = this.#failures.safe(error);
        this.#log.error(
          { err: safe, platform: this.platform, retryInSeconds: delay / 1000 },
          `telegram: polling stopped (${safe.message}); restarting in ${delay / 1000} s`,
        );
        await abortableSleep(delay, signal);
      }
    }
  }

  /** getUpdates: after a connection error, wait 1 s, 2 s, 4 s … (at most 60 s) before grammY retries. */
  readonly #pollPause: Transformer = async (prev, method, payload, signal) => {
    try {
      const result = await prev(method, payload, signal);
      if (this.#pollBackoff.attempts > 0) this.#log.info({ platform: this.platform }, "telegram: Bot API reachable again; polling resumed");
      this.#pollBackoff.reset();
      return result;
    } catch (error) {
      const polling = this.#polling;
      if (error instanceof this.#grammy.HttpError && polling !== null && !polling.stop.signal.aborted && !(signal?.aborted ?? false)) {
        const wait = this.#pollBackoff.next();
        this.#log.warn(
          { err: this.#failures.safe(error), platform: this.platform, retryInSeconds: wait / 1000 },
          "telegram: cannot reach the Bot API; polling again after a pause",
        );
        await abortableSleep(wait, polling.stop.signal);
      }
      throw error;
    }
  };

  #connectError(error: unknown): PlatformError {
    const code = this.#failures.codeOf(error);
    const why =
      code === 401 || code === 404
        ? "Telegram refused the bot token (check adapters.telegram.token or TELEGRAM_BOT_TOKEN; BotFather's /token shows it)"
        : `could not reach the Telegram Bot API${this.#options.apiRoot ? ` at ${this.#options.apiRoot}` : ""}: ${this.#failures.safe(error).message}`;
    return this.#failures.connectError(why, error);
  }
}
