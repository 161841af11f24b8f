/**
 * The WhatsApp adapter: Meta's WhatsApp Cloud API over its documented HTTP interface (no
 * SDK), receiving webhooks on a route of the gateway's own server
 * ({@link mountWhatsAppWebhook}: the GET verification handshake, and POSTs checked against
 * `X-Hub-Signature-256`) and sending through the Graph API ({@link WhatsAppGraphApi}).
 *
 * - Inbound: each message of a `messages` notification for this business number is mapped
 *   ({@link mapWhatsAppMessage}) and goes through the chat adapters' one {@link InboundFlow}
 *   (de-duplicated by `wamid`, the answer rules, the hand-off to the gateway); the POST is
 *   answered 200 once every message is stored, and 500 (503 while stopping) when one could not
 *   be: Meta redelivers what it saw no 200 for (`redelivers`). With `readReceipts` (default on) an answered message is marked read and the chat
 *   shows "typing…" (renewed every 20 s, WhatsApp drops it after 25 s) until the reply.
 * - Status callbacks are never user messages: `sent`/`delivered`/`read` are ignored; a
 *   `failed` status is reported to the gateway ({@link AdapterEvents.deliveryFailed}), which
 *   logs it with the session key and counts it — 131047 says plainly that the 24-hour
 *   customer-service window closed.
 * - Outbound: replies are converted to WhatsApp formatting ({@link markdownToWhatsApp}),
 *   split at 4,096 characters ({@link splitMessage}), the first chunk quoting the triggering
 *   message (`context.message_id`); notices are plain text. A send Meta refuses (e.g. 131047
 *   outside the window, 131026 undeliverable) throws a clear error the gateway logs and
 *   counts; rate limits and server errors are retried with back-off.
 * - Media: inbound images, voice notes, audio, video, documents and stickers carry their media
 *   id ({@link mapWhatsAppMessage}); the gateway fetches them in the turn through
 *   {@link WhatsAppAdapter.fetchMedia} (the media endpoint, then the file on Meta's media host
 *   with the token; never the `url` a webhook names).
 * - The access token, the app secret and the verify token never appear in anything this
 *   adapter logs or throws.
 *
 * @module
 */
import type { FastifyInstance } from "fastify";
import type {
  Adapter,
  AdapterEvents,
  FetchedMedia,
  GatewayLogger,
  InboundHandler,
  InboundMedia,
  MediaFetchRequest,
  OutboundMessage,
  SessionSource,
} from "../../gateway/index.js";
import { MediaUnavailableError, noopLogger, normalizeIdentity } from "../../gateway/index.js";
import { InvalidInputError, type PlatformError } from "../../store/index.js";
import { DEFAULT_ANSWER_RULES, InboundFlow, PlatformFailures, SeenMessageIds, splitMessage, type AnswerRules } from "../chat/index.js";
import { WHATSAPP_MESSAGE_LIMIT, markdownToWhatsApp } from "./whatsapp-format.js";
import { WhatsAppApiError, WhatsAppGraphApi } from "./whatsapp-graph-api.js";
import {
  WHATSAPP_PLATFORM,
  explainWhatsAppError,
  mapWhatsAppMessage,
  whatsappRecipientOf,
  type WhatsAppChangeValue,
  type WhatsAppMessage,
  type WhatsAppStatus,
  type WhatsAppWebhookPayload,
} from "./whatsapp-source.js";
import { mountWhatsAppWebhook } from "./whatsapp-webhook-route.js";

/** Options of a {@link WhatsAppAdapter}. */
export interface WhatsAppAdapterOptions {
  /** The Graph API access token (never logged). */
  accessToken: string;
  /** The app secret: webhook POSTs are checked against it (never logged). */
  appSecret: string;
  /** The verify token of Meta's GET handshake (never logged). */
  verifyToken: string;
  /** The business number's Phone number ID (replies are sent from it; notifications for other numbers are ignored). */
  phoneNumberId: string;
  /** The Graph API base URL (default `https://graph.facebook.com`; a test fake). */
  apiUrl?: string | null;
  /** The Graph API version (default `v26.0`). */
  apiVersion?: string | null;
  /** The webhook route on the gateway's server (default `/whatsapp/webhook`). */
  webhookPath?: string | null;
  /** Mark answered messages read and show "typing…" while the turn runs (default true). */
  readReceipts?: boolean;
  /** Let the platform show previews of links in sent messages (default false: previews off, so no URL in a reply is fetched without a click). */
  linkPreviews?: boolean;
  /** Who is answered (default: DMs, and mentions/replies in groups; no allowlists). */
  rules?: AnswerRules;
  logger?: GatewayLogger;
  /** How many times a send hit by a rate limit or a server error is retried (default 5). */
  maxRetries?: number;
  /** The first pause before such a retry, in ms (default 1,000; doubling; `Retry-After` wins). */
  retryMinDelayMs?: number;
  /** One Graph API request's time limit, in ms (default 30,000). */
  requestTimeoutMs?: number;
}

/** How many sent message ids are remembered (delivery failures name their chat; replies to them are replies to the bot). */
const SENT_MEMORY = 10_000;

/** The WhatsApp (Cloud API) platform adapter. */
export class WhatsAppAdapter implements Adapter {
  readonly platform = WHATSAPP_PLATFORM;
  /** Webhooks only: any replica behind a load balancer serves them. */
  readonly exclusiveReceiver = false;
  readonly #options: WhatsAppAdapterOptions;
  readonly #api: WhatsAppGraphApi;
  readonly #log: GatewayLogger;
  readonly #failures: PlatformFailures;
  readonly #flow: InboundFlow;
  readonly #seenFailures = new SeenMessageIds(10_000);
  /** `wamid` of each message sent → the source it answered (bounded, oldest first out). */
  readonly #sent = new Map<string, SessionSource>();
  /** Chat key → the latest inbound message there (what the typing indicator refers to). */
  readonly #lastInbound = new Map<string, string>();
  #me: { displayPhoneNumber: string | null; verifiedName: string | null } | null = null;
  #typingWarned = false;

  constructor(options: WhatsAppAdapterOptions) {
    this.#options = options;
    this.#log = options.logger ?? noopLogger;
    this.#failures = new PlatformFailures(WHATSAPP_PLATFORM, [options.accessToken, options.appSecret, options.verifyToken], {
      codeOf: (error) => (error instanceof WhatsAppApiError ? error.platformCode : null),
    });
    this.#api = new WhatsAppGraphApi({
      accessToken: options.accessToken,
      phoneNumberId: options.phoneNumberId,
      apiUrl: options.apiUrl ?? null,
      apiVersion: options.apiVersion ?? null,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.retryMinDelayMs !== undefined ? { retryMinDelayMs: options.retryMinDelayMs } : {}),
      ...(options.requestTimeoutMs !== undefined ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
      onRetry: ({ attempt, delayMs, status, code }) =>
        this.#log.warn(
          { platform: this.platform, attempt, status, code, retryInMs: delayMs },
          "whatsapp: the Graph API asked to slow down (or failed); retrying the send after a pause",
        ),
    });
    this.#flow = new InboundFlow({
      platform: WHATSAPP_PLATFORM,
      redelivers: true,
      rules: normalizedRules(options.rules ?? DEFAULT_ANSWER_RULES),
      logger: this.#log,
      send: (source, message) => this.send(source, message),
      redact: (error) => this.#failures.safe(error),
      typing:
        options.readReceipts === false
          ? null
          : {
              intervalMs: 20_000,
              send: async (chat) => {
                const messageId = this.#lastInbound.get(chat);
                if (messageId !== undefined) await this.#api.markRead(messageId, true);
              },
              onError: (error) => {
                const level = this.#typingWarned ? "debug" : "warn";
                this.#typingWarned = true;
                this.#log[level]?.(
                  { err: this.#failures.safe(error), platform: this.platform },
                  "whatsapp: marking a message read / showing typing failed (the reply is not affected)",
                );
              },
            },
    });
  }

  /** Always `webhook`: the Cloud API delivers by webhook only. */
  get mode(): "webhook" {
    return "webhook";
  }

  /** The business number once connected (`+1 555-078-3881 (106540352242922)`), `null` before. */
  get identity(): string | null {
    if (this.#me === null) return null;
    return `${this.#me.displayPhoneNumber ?? "(number unknown)"} (${this.#options.phoneNumberId})`;
  }

  /** The webhook route path. */
  get webhookPath(): string {
    return this.#options.webhookPath ?? "/whatsapp/webhook";
  }

  /** Mounts the webhook route (GET handshake, signed POSTs) on the gateway's server (call before it listens). */
  routes(http: FastifyInstance): void {
    mountWhatsAppWebhook(http, {
      path: this.webhookPath,
      appSecret: this.#options.appSecret,
      verifyToken: this.#options.verifyToken,
      accepting: () => this.#flow.receiving,
      deliver: (payload) => this.#deliver(payload),
      logger: this.#log,
    });
  }

  /**
   * Looks the business number up (`GET /<phone-number-id>`): a refused token or an unknown
   * phone number id fails the start with a clear error; an unreachable Graph API does not
   * (the webhook works without it, and sends fail and are counted until it answers). Then
   * notifications are taken.
   */
  async connect(handler: InboundHandler, events?: AdapterEvents): Promise<void> {
    this.#flow.connect(handler, events);
    try {
      this.#me = await this.#api.phoneNumber();
    } catch (error) {
      if (error instanceof WhatsAppApiError && error.status >= 400 && error.status < 500 && error.status !== 429) throw this.#connectError(error);
      this.#log.warn(
        { err: this.#failures.safe(error), platform: this.platform, apiUrl: this.#api.baseUrl },
        "whatsapp: the Graph API does not answer; taking webhooks anyway (replies fail and are counted until it does)",
      );
      this.#me = { displayPhoneNumber: null, verifiedName: null };
    }
    await this.#flow.receive();
    this.#log.info(
      { platform: this.platform, mode: this.mode, bot: this.identity, verifiedName: this.#me.verifiedName, path: this.webhookPath },
      `whatsapp adapter connected as ${this.identity} (${this.mode})`,
    );
  }

  /** Stops taking notifications (the route answers 503, so Meta delivers them again later). */
  async stopReceiving(): Promise<void> {
    await this.#flow.stopReceiving();
  }

  async disconnect(): Promise<void> {
    await this.#flow.close();
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const recipient = whatsappRecipientOf(source);
    if (recipient === null) {
      throw new InvalidInputError(
        "whatsapp: the session source has no chatId or userId to send to; pass the source of a WhatsApp chat (a phone number or a group id).",
        {
          field: "source.chatId",
        },
      );
    }
    const chat = this.#chatKey(source);
    // Only WhatsApp message ids can be quoted (a handoff or an API caller may pass others).
    const replyTo = message.inReplyTo.find((id) => id.startsWith("wamid.")) ?? null;
    try {
      if (message.text.trim() === "") return { messageId: null };
      const chunks =
        message.kind === "reply"
          ? splitMessage(message.text, WHATSAPP_MESSAGE_LIMIT, { measure: (t) => markdownToWhatsApp(t).length })
          : splitMessage(message.text, WHATSAPP_MESSAGE_LIMIT);
      let first: string | null = null;
      for (const [i, chunk] of chunks.entries()) {
        const formatted = message.kind === "reply" ? markdownToWhatsApp(chunk) : chunk;
        const body = formatted.trim() === "" ? chunk : formatted;
        const id = await this.#api.sendText(recipient, body, i === 0 ? replyTo : null, this.#options.linkPreviews === true);
        this.#remember(id, source);
        first ??= id;
      }
      return { messageId: first };
    } catch (error) {
      throw this.#failures.failure(error);
    } finally {
      if (message.kind !== "notice") this.#flow.stopTyping(chat);
    }
  }

  /**
   * The bytes of an inbound media file: `GET /<media-id>` (its URL, type and size), then the
   * file from that URL with the access token — only on the media host (see
   * `whatsappMediaOrigins`). When the declared `file_size` is over `maxBytes` nothing is
   * downloaded: the size is returned for the gateway to refuse, and the body refuses to be read.
   * The download starts when the body is first read. A media id WhatsApp no longer has (media
   * is kept 30 days) is a {@link MediaUnavailableError}; other failures are thrown without the token.
   */
  async fetchMedia(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia> {
    const mediaId = media.fileId;
    if (typeof mediaId !== "string" || mediaId === "") throw new MediaUnavailableError("This WhatsApp message did not say which file it carries.");
    let info: Awaited<ReturnType<WhatsAppGraphApi["mediaInfo"]>>;
    try {
      info = await this.#api.mediaInfo(mediaId, request.signal);
    } catch (error) {
      if (error instanceof WhatsAppApiError && (error.platformCode === 100 || error.status === 404))
        throw new MediaUnavailableError("WhatsApp no longer has this file (it keeps media for 30 days).");
      throw this.#failures.failure(error);
    }
    const api = this.#api;
    const failures = this.#failures;
    const { maxBytes, signal } = request;
    async function* body(): AsyncGenerator<Uint8Array> {
      if (info.size !== null && info.size > maxBytes)
        throw new MediaUnavailableError(`The file is ${megabytes(info.size)} and at most ${megabytes(maxBytes)} is kept here, so it was not downloaded.`);
      let response: Response;
      try {
        response = await api.downloadMedia(info.url, signal);
      } catch (error) {
        throw failures.failure(error);
      }
      if (response.body === null) return;
      // Node's web streams are async iterable (breaking out of the loop cancels the download).
      yield* response.body as unknown as AsyncIterable<Uint8Array>;
    }
    return { body: body(), size: info.size, mimeType: info.mimeType ?? media.mimeType ?? null, fileName: media.fileName ?? null };
  }

  // --- inbound -----------------------------------------------------------------------

  /** Handles a verified notification; resolves with the HTTP status for Meta. */
  async #deliver(payload: unknown): Promise<number> {
    const body = payload as WhatsAppWebhookPayload;
    if (body === null || typeof body !== "object" || body.object !== "whatsapp_business_account" || !Array.isArray(body.entry)) {
      this.#log.debug?.({ platform: this.platform }, "whatsapp: a notification that is not for a WhatsApp Business account; ignored");
      return 200;
    }
    let status = 200;
    for (const entry of body.entry) {
      for (const change of entry?.changes ?? []) {
        const value = change?.value;
        if (change?.field !== "messages" || value === undefined || value === null) continue;
        const numberId = value.metadata?.phone_number_id;
        if (numberId !== undefined && numberId !== this.#options.phoneNumberId) {
          this.#log.debug?.({ platform: this.platform }, "whatsapp: a notification for another business number; ignored");
          continue;
        }
        for (const error of value.errors ?? []) {
          this.#log.warn(
            { platform: this.platform, code: error.code ?? null },
            `whatsapp: Meta reported an error: ${explainWhatsAppError(error.code, error.title, error.error_data?.details)}`,
          );
        }
        for (const item of value.statuses ?? []) this.#status(item);
        for (const message of value.messages ?? []) {
          const outcome = await this.#receive(message, value);
          if (outcome !== 200 && status === 200) status = outcome;
        }
      }
    }
    return status;
  }

  /** One inbound message: 200 when taken (or not for the bot), 500 (503 while stopping) when Meta must send it again. */
  async #receive(message: WhatsAppMessage, value: WhatsAppChangeValue): Promise<number> {
    const id = message.id;
    if (typeof id !== "string" || id === "") return 200;
    // Stopping while a notification is handled: what is left of it comes again to the next start.
    if (!this.#flow.receiving) return 503;
    const outcome = await this.#flow.take(id, () => {
      const mapped = mapWhatsAppMessage(message, value, { businessPhone: this.#me?.displayPhoneNumber ?? null, sentByBot: (sent) => this.#sent.has(sent) });
      if (mapped === null) {
        this.#log.debug?.(
          { platform: this.platform, type: message.type ?? null },
          "whatsapp: not a user message (reaction, system notice, unsupported type); ignored",
        );
        return null;
      }
      const chat = this.#chatKey(mapped.inbound.source);
      return {
        candidate: mapped.candidate,
        otherUserIds: mapped.senderIds,
        inbound: async () => {
          // Read + typing go out before the gateway takes the message: a fast turn may reply first.
          this.#lastInbound.set(chat, id);
          if (this.#lastInbound.size > 10_000) this.#lastInbound.delete(this.#lastInbound.keys().next().value!);
          return mapped.inbound;
        },
        typingKey: chat,
      };
    });
    if (outcome !== "redeliver") return 200;
    return this.#flow.receiving ? 500 : 503;
  }

  /** A status callback: `failed` is reported to the gateway; the others are ignored. */
  #status(status: WhatsAppStatus): void {
    const id = status.id;
    if (status.status !== "failed" || typeof id !== "string" || id === "") {
      this.#log.debug?.({ platform: this.platform, status: status.status ?? null }, "whatsapp: status callback");
      return;
    }
    if (!this.#seenFailures.add(id)) return;
    const error = status.errors?.[0];
    const code = typeof error?.code === "number" ? error.code : null;
    const recipient = status.recipient_id ?? status.recipient_user_id;
    const source: SessionSource | null =
      this.#sent.get(id) ??
      (recipient !== undefined && status.recipient_type !== "group" ? { platform: this.platform, chatType: "dm", chatId: recipient } : null);
    const description = `${explainWhatsAppError(code, error?.title ?? error?.message, error?.error_data?.details)}${code === null ? "" : ` (error ${code})`}`;
    const events = this.#flow.events;
    if (events === null) {
      this.#log.error({ platform: this.platform, messageId: id, reason: code ?? "unknown" }, `whatsapp: a message was not delivered: ${description}`);
      return;
    }
    events.deliveryFailed({ platform: this.platform, source, messageId: id, reason: code === null ? "unknown" : String(code), description });
  }

  // --- helpers -----------------------------------------------------------------------

  #remember(id: string, source: SessionSource): void {
    this.#sent.set(id, { ...source });
    if (this.#sent.size > SENT_MEMORY) this.#sent.delete(this.#sent.keys().next().value!);
  }

  /** One typing/read lane per chat: a group, or a person in any spelling of their id. */
  #chatKey(source: SessionSource): string {
    if (source.chatType !== "dm") return `group\u0000${source.chatId ?? ""}`;
    return `dm\u0000${normalizeIdentity(this.platform, source.chatId ?? source.userId ?? "")}`;
  }

  #connectError(error: WhatsAppApiError): PlatformError {
    const why = error.isAuthError
      ? `Meta refused the access token (${error.platformCode ?? `HTTP ${error.status}`}): check adapters.whatsapp.accessToken or WHATSAPP_ACCESS_TOKEN (a system user's token with whatsapp_business_messaging)`
      : error.platformCode === 100 || error.status === 404
        ? `Meta does not know the phone number id ${this.#options.phoneNumberId} (or the token may not use it): check adapters.whatsapp.phoneNumberId (WhatsApp → API Setup → Phone number ID)`
        : `the Graph API refused the phone number look-up: ${this.#failures.safe(error).message}`;
    return this.#failures.connectError(why, error);
  }
}

/** A size for people: `25.3 MB`. */
function megabytes(bytes: number): string {
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

/** The access lists with WhatsApp ids in canonical form (`+49 151 …` → `49151…`; group ids as given). */
function normalizedRules(rules: AnswerRules): AnswerRules {
  return {
    ...rules,
    allowedUsers: rules.allowedUsers.map((id) => normalizeIdentity(WHATSAPP_PLATFORM, id)),
    allowedChats: rules.allowedChats.map((id) => normalizeIdentity(WHATSAPP_PLATFORM, id)),
  };
}
