/**
 * The Signal adapter: a bot account on a signal-cli REST API (bbernhard/signal-cli-rest-api),
 * received over its WebSocket (json-rpc mode, `ws`, loaded lazily) or by polling its receive
 * endpoint (normal/native mode), sent through `POST /v2/send`.
 *
 * - Start: `GET /v1/about` must report the mode the config names (`websocket` ↔ `json-rpc`,
 *   `polling` ↔ `normal`/`native`), else the start fails saying what to change; `GET
 *   /v1/accounts` must list the bot's number. An unreachable REST API does not hold the
 *   gateway's start: after `connectTimeoutMs` the adapter keeps trying in the background
 *   (1 s doubling to 60 s) and logs when it is connected.
 * - Inbound: messages are mapped ({@link mapSignalMessage}) and run through the shared
 *   {@link InboundFlow} one at a time in arrival order (de-duplicated by sender and timestamp,
 *   then the answer rules: refused messages are dropped, not stored), and acknowledged with a
 *   read receipt (`readReceipts`); while the turn runs the chat shows
 *   "typing…" (renewed every 10 s; Signal clients drop it after 15 s) and it is hidden when
 *   the reply is sent. The WebSocket reconnects after a drop (1 s doubling to 60 s) and is
 *   replaced when the REST API's pings (every 54 s) stop for 150 s.
 * - Outbound: Markdown as Signal text styles ({@link signalMessageBodies}), split at 2,000
 *   bytes, the first chunk quoting the message it answers; notices as plain text. A refused
 *   send (`{ error }`: an unregistered or untrusted recipient, a rate limit) is thrown with
 *   what the REST API said, so the gateway logs and counts it.
 * - Receiving: one receiver per account; with several replicas one receives at a time (the
 *   receiver lease, {@link SignalAdapter.exclusiveReceiver}). Sending needs no receiver.
 * - Signal does not deliver a message twice: the REST API hands a message to the connected
 *   WebSocket or poll only, so a message refused while the gateway shuts down is answered
 *   with the reason, and messages sent while no connection is open are not received.
 * - Media: attachments carry their REST API id ({@link mapSignalMessage}); the gateway fetches
 *   them in the turn through {@link SignalAdapter.fetchMedia} (`GET /v1/attachments/{id}` of the
 *   configured REST API, never a URL a message names). A long message's text attachment is
 *   read as its text, not kept as a file.
 * - Phone numbers of other people never appear in full in what this adapter logs (session
 *   keys included); errors of the REST API are passed on with numbers shortened
 *   ({@link maskPhoneNumbers}).
 *
 * @module
 */
import type { WebSocket as WsSocket } from "ws";
import {
  MediaUnavailableError,
  noopLogger,
  type Adapter,
  type AdapterEvents,
  type FetchedMedia,
  type GatewayLogger,
  type InboundHandler,
  type InboundMedia,
  type InboundMessage,
  type MediaFetchRequest,
  type OutboundMessage,
  type SessionSource,
} from "../../gateway/index.js";
import { InvalidInputError, PlatformError } from "../../store/index.js";
import {
  Backoff,
  DEFAULT_ANSWER_RULES,
  InboundFlow,
  abortableSleep,
  cleanedError,
  connectInBackground,
  loadSdk,
  retry,
  type AnswerRules,
  type MappedInbound,
} from "../chat/index.js";
import { signalMessageBodies } from "./signal-format.js";
import { SignalApiError, SignalRestClient, maskPhoneNumbers, type SignalAbout } from "./signal-rest-client.js";
import {
  SIGNAL_GROUP_PREFIX,
  SIGNAL_LONG_TEXT_TYPE,
  SIGNAL_PLATFORM,
  learnSignalSelfUuid,
  mapSignalMessage,
  signalMessageKey,
  type SignalReceived,
} from "./signal-source.js";

type Ws = typeof import("ws");

/** Options of a {@link SignalAdapter}. */
export interface SignalAdapterOptions {
  /** The REST API base URL, e.g. `http://127.0.0.1:8080`. */
  apiUrl: string;
  /** The bot's registered number (E.164). */
  number: string;
  /** `websocket` (json-rpc mode, the default) or `polling` (normal/native mode). */
  mode?: "websocket" | "polling";
  /** Send a read receipt for every message taken (default true). */
  readReceipts?: boolean;
  /** Who is answered (default: DMs, and mentions/replies in groups; no allowlists). */
  rules?: AnswerRules;
  logger?: GatewayLogger;
  /** How long `connect` waits for the REST API before going on in the background, in ms (default 20,000). */
  connectTimeoutMs?: number;
  /** How often "typing…" is renewed, in ms (default 10,000). */
  typingIntervalMs?: number;
  /** Polling: the `timeout` of each receive call, in seconds (default 5). */
  pollTimeoutSeconds?: number;
  /** WebSocket: replace the connection after this long without a ping or message, in ms (default 150,000). */
  idleTimeoutMs?: number;
}

/** The longest text taken from a long message's text attachment (Signal clients cap it at 64 KiB). */
const LONG_TEXT_MAX_BYTES = 64 * 1024;
/** How long a group-name look-up may hold a message, in ms. */
const GROUP_LOOKUP_MS = 2_000;

/** A send the REST API refused or that never reached it; `status` is the REST API's HTTP status (0: no answer). */
class SignalSendError extends PlatformError {
  readonly status: number;

  constructor(message: string, status: number) {
    super("signal", message);
    this.status = status;
  }
}

/** The Signal platform adapter. Create it with {@link SignalAdapter.create}. */
export class SignalAdapter implements Adapter {
  readonly platform = SIGNAL_PLATFORM;
  /** The REST API hands each message to one receiver: with several replicas, one receives at a time (the receiver lease). */
  readonly exclusiveReceiver = true;
  readonly #ws: Ws | null;
  readonly #options: SignalAdapterOptions;
  readonly #mode: "websocket" | "polling";
  readonly #client: SignalRestClient;
  readonly #log: GatewayLogger;
  readonly #flow: InboundFlow;
  /** Message timestamp → its author (number or UUID), for `quote_author` of replies. */
  readonly #authors = new Map<string, string>();
  /** Internal group id → name, from `GET /v1/groups`. */
  readonly #groupNames = new Map<string, string>();
  #groupsFetchedAt = 0;
  #selfUuid: string | null = null;
  #receiving = false;
  #connected = false;
  #stop = new AbortController();
  #socket: WsSocket | null = null;
  #loop: Promise<void> | null = null;
  /** Received messages are handled one after another, in arrival order. */
  #inbound: Promise<void> = Promise.resolve();

  private constructor(options: SignalAdapterOptions, ws: Ws | null) {
    this.#options = options;
    this.#ws = ws;
    this.#mode = options.mode ?? "websocket";
    this.#client = new SignalRestClient(options.apiUrl, options.number);
    this.#log = options.logger ?? noopLogger;
    const client = this.#client;
    this.#flow = new InboundFlow({
      platform: SIGNAL_PLATFORM,
      // The REST API hands a message out once: the chat is asked to send it again.
      redelivers: false,
      send: (source, message) => this.send(source, message),
      redact: (error) => this.#safe(error),
      rules: options.rules ?? DEFAULT_ANSWER_RULES,
      logger: this.#log,
      logKey: (key) => maskPhoneNumbers(key, options.number),
      typing: {
        send: (chat) => client.typing(chat, true),
        end: (chat) => client.typing(chat, false),
        intervalMs: options.typingIntervalMs ?? 10_000,
        onError: (error) => this.#log.warn({ err: this.#safe(error), platform: this.platform }, "signal: the typing indicator failed"),
      },
    });
  }

  /** Makes the adapter (loads `ws` for the WebSocket mode; nothing is sent yet). */
  static async create(options: SignalAdapterOptions): Promise<SignalAdapter> {
    const ws = (options.mode ?? "websocket") === "websocket" ? await loadSdk<Ws>("ws", SIGNAL_PLATFORM, () => import("ws")) : null;
    return new SignalAdapter(options, ws);
  }

  /** `websocket` or `polling`. */
  get mode(): "websocket" | "polling" {
    return this.#mode;
  }

  /** The bot's number. */
  get number(): string {
    return this.#options.number;
  }

  /** Whether the receive connection is up (the WebSocket open, or polling running). */
  get connected(): boolean {
    return this.#connected;
  }

  /**
   * Checks the REST API's mode and the account, then opens the receive WebSocket or starts
   * polling — at once, or, with a receiver lease in `events`, once this replica holds it. A mode that does not match or an unknown number fails at once; an unreachable
   * REST API does not hold the gateway's start: after `connectTimeoutMs` the adapter keeps
   * trying in the background.
   */
  async connect(handler: InboundHandler, events?: AdapterEvents): Promise<void> {
    this.#flow.connect(handler, events);
    await connectInBackground(this.#flow.receive({ start: () => this.#start(), stop: () => this.#stopLoop() }), {
      timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
      onTimeout: () =>
        this.#log.warn(
          { platform: this.platform, apiUrl: this.#client.apiUrl },
          "signal: the signal-cli REST API does not answer yet; still connecting in the background",
        ),
      onBackgroundFailure: (error) => this.#log.error({ err: this.#safe(error), platform: this.platform }, "signal: connecting failed"),
    });
  }

  /** Starts receiving (again after {@link #stopLoop}). */
  async #start(): Promise<void> {
    this.#receiving = true;
    this.#stop = new AbortController();
    const about = await this.#whenReachable(() => this.#client.about(), "GET /v1/about");
    if (about === null) return;
    this.#checkMode(about);
    const accounts = await this.#client.accounts().catch((error: unknown) => {
      this.#log.warn({ err: this.#safe(error), platform: this.platform }, "signal: could not list the REST API's accounts; going on");
      return null;
    });
    if (accounts !== null && !accounts.includes(this.number)) {
      throw new PlatformError(
        "signal",
        `signal: ${this.number} is not registered or linked in the signal-cli REST API at ${this.#client.apiUrl} (it has ${accounts.length} other account(s)). ` +
          "Register it (POST /v1/register/<number>, then /verify) or link it to your phone (GET /v1/qrcodelink), or fix adapters.signal.number.",
      );
    }
    if (!this.#receiving) return;
    if (this.#mode === "websocket") {
      await this.#openSocket();
    } else {
      this.#connected = true;
      this.#loop = this.#pollLoop();
    }
    if (!this.#receiving) return;
    this.#log.info(
      { platform: this.platform, mode: this.#mode, bot: this.number, apiVersion: about.version ?? null, apiMode: about.mode ?? null },
      `signal adapter connected as ${this.number} (${this.#mode})`,
    );
  }

  #checkMode(about: SignalAbout): void {
    const mode = about.mode ?? "unknown";
    if (this.#mode === "websocket" && mode !== "json-rpc") {
      throw new PlatformError(
        "signal",
        `signal: the signal-cli REST API at ${this.#client.apiUrl} runs in ${mode} mode, where messages are received by polling; ` +
          "set adapters.signal.mode: polling, or start the REST API with MODE=json-rpc (then it pushes messages over a WebSocket)",
      );
    }
    if (this.#mode === "polling" && mode !== "normal" && mode !== "native") {
      throw new PlatformError(
        "signal",
        `signal: the signal-cli REST API at ${this.#client.apiUrl} runs in ${mode} mode, where messages arrive over a WebSocket and cannot be polled; ` +
          "set adapters.signal.mode: websocket (the default), or start the REST API with MODE=normal or MODE=native",
      );
    }
  }

  /** Calls `call` until the REST API answers (1 s doubling to 60 s between tries); `null` when receiving stopped meanwhile. */
  async #whenReachable<T>(call: () => Promise<T>, what: string): Promise<T | null> {
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
    for (;;) {
      try {
        return await call();
      } catch (error) {
        const retry = error instanceof SignalApiError && (error.status === 0 || error.status >= 500);
        if (!retry) throw this.#connectError(error);
        if (!this.#receiving) return null;
        const delay = backoff.next();
        this.#log.warn(
          { err: this.#safe(error), platform: this.platform, retryInSeconds: delay / 1000 },
          `signal: cannot reach the signal-cli REST API (${what}); trying again in ${delay / 1000} s`,
        );
        await abortableSleep(delay, this.#stop.signal);
        if (!this.#receiving) return null;
      }
    }
  }

  // --- WebSocket (json-rpc mode) -------------------------------------------------------------

  /** Starts the socket loop; resolves once the first connection is open (or receiving stopped). */
  #openSocket(): Promise<void> {
    return new Promise<void>((firstOpen) => {
      this.#loop = (async () => {
        const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
        let opened = false;
        while (this.#receiving) {
          const closed = await this.#runSocket(() => {
            if (opened) this.#log.info({ platform: this.platform }, "signal: receive WebSocket reconnected");
            opened = true;
            backoff.reset();
            firstOpen();
          });
          if (!this.#receiving) break;
          const delay = backoff.next();
          const why = closed.error !== null ? this.#safe(closed.error).message : `code ${closed.code}${closed.reason ? `, ${closed.reason}` : ""}`;
          this.#log.warn(
            { platform: this.platform, code: closed.code, retryInSeconds: delay / 1000 },
            opened
              ? `signal: receive WebSocket connection lost (${why}); reconnecting in ${delay / 1000} s (messages sent meanwhile are not received)`
              : `signal: cannot open the receive WebSocket (${why}); trying again in ${delay / 1000} s`,
          );
          await abortableSleep(delay, this.#stop.signal);
        }
        firstOpen();
      })();
    });
  }

  /** One WebSocket connection; resolves when it has closed. */
  #runSocket(onOpen: () => void): Promise<{ code: number; reason: string; error: Error | null }> {
    return new Promise((resolve) => {
      const ws = new this.#ws!.WebSocket(this.#client.receiveSocketUrl, { handshakeTimeout: 15_000 });
      this.#socket = ws;
      let error: Error | null = null;
      let idle: NodeJS.Timeout | undefined;
      const arm = (): void => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          error = new PlatformError("signal", `no ping or message for ${(this.#options.idleTimeoutMs ?? 150_000) / 1000} s`);
          ws.terminate();
        }, this.#options.idleTimeoutMs ?? 150_000);
        idle.unref();
      };
      ws.on("open", () => {
        this.#connected = true;
        arm();
        onOpen();
      });
      ws.on("ping", arm);
      ws.on("message", (data) => {
        arm();
        this.#onSocketText(String(data));
      });
      ws.on("error", (e) => {
        error = e;
      });
      ws.on("close", (code, reason) => {
        clearTimeout(idle);
        this.#connected = false;
        if (this.#socket === ws) this.#socket = null;
        resolve({ code, reason: String(reason), error });
      });
    });
  }

  #onSocketText(text: string): void {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      this.#log.warn({ platform: this.platform }, "signal: the receive WebSocket sent something that is not JSON; ignored");
      return;
    }
    if (payload !== null && typeof payload === "object" && typeof (payload as { error?: unknown }).error === "string") {
      this.#log.warn(
        { platform: this.platform },
        `signal: the REST API reported an error on the receive WebSocket: ${maskPhoneNumbers((payload as { error: string }).error, this.number)}`,
      );
      return;
    }
    this.#enqueue(payload as SignalReceived);
  }

  // --- polling (normal/native mode) ----------------------------------------------------------

  async #pollLoop(): Promise<void> {
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
    let failing = false;
    while (this.#receiving) {
      let batch: unknown[];
      try {
        batch = await this.#client.receive(this.#options.pollTimeoutSeconds ?? 5);
      } catch (error) {
        if (!this.#receiving) break;
        failing = true;
        const delay = backoff.next();
        this.#log.warn(
          { err: this.#safe(error), platform: this.platform, retryInSeconds: delay / 1000 },
          `signal: receiving failed (${this.#safe(error).message}); polling again in ${delay / 1000} s`,
        );
        await abortableSleep(delay, this.#stop.signal);
        continue;
      }
      if (failing) this.#log.info({ platform: this.platform }, "signal: the REST API answers again; polling resumed");
      failing = false;
      backoff.reset();
      // Messages of the last poll are handled even when a stop began meanwhile: the REST API will not hand them out again.
      for (const item of batch) this.#enqueue(item as SignalReceived);
      await this.#inbound;
    }
    this.#connected = false;
  }

  /** Stops taking messages: the WebSocket closes; a poll under way finishes and its messages are still handled. */
  async stopReceiving(): Promise<void> {
    // The receiver first, while the flow still takes what it hands over (the REST API will not hand it out again).
    await this.#stopLoop();
    await this.#flow.stopReceiving();
  }

  /** Stops the WebSocket or the polling loop and waits for what they handed over; {@link #start} may follow. */
  async #stopLoop(): Promise<void> {
    if (!this.#receiving) return;
    this.#receiving = false;
    this.#stop.abort();
    this.#socket?.close(1000, "threadline is stopping");
    await this.#loop;
    await this.#inbound;
  }

  async disconnect(): Promise<void> {
    await this.stopReceiving();
    await this.#flow.close();
  }

  // --- inbound -------------------------------------------------------------------------------

  #enqueue(received: SignalReceived): void {
    this.#inbound = this.#inbound.then(() =>
      this.#receive(received).catch((error: unknown) =>
        this.#log.error({ err: this.#safe(error), platform: this.platform }, "signal: handling a message failed"),
      ),
    );
  }

  async #receive(received: SignalReceived): Promise<void> {
    const envelope = received?.envelope;
    if (envelope === null || envelope === undefined || typeof envelope !== "object") return;
    if (received.account && received.account !== this.number) return;
    this.#selfUuid ??= learnSignalSelfUuid(received, this.number);
    // A reconnect or a restarted poll may hand a message out again: the flow takes a key once.
    await this.#flow.take(signalMessageKey(envelope), () => this.#map(received));
  }

  /** The message as the flow takes it: a person by number or UUID, a group by either id; the full text of a long message once it is answered. */
  async #map(received: SignalReceived): Promise<MappedInbound | null> {
    const envelope = received.envelope!;
    const data = envelope.editMessage?.dataMessage ?? envelope.dataMessage;
    const internalGroupId = data?.groupInfo?.groupId;
    if (internalGroupId && !data?.groupInfo?.groupName) await this.#lookUpGroup(internalGroupId);
    const mapped = mapSignalMessage(received, { number: this.number, uuid: this.#selfUuid }, { groupName: (id) => this.#groupNames.get(id) ?? null });
    if (mapped === null) return null;
    const { inbound, candidate } = mapped;
    const users = [mapped.author, mapped.authorUuid].filter((id): id is string => typeof id === "string" && id !== "");
    const chats =
      inbound.source.chatType === "dm"
        ? users
        : [inbound.source.chatId, inbound.source.chatIdAlt].filter((id): id is string => typeof id === "string" && id !== "");
    return {
      candidate,
      otherUserIds: users,
      otherChatIds: chats,
      typingKey: inbound.source.chatId ?? null,
      inbound: async () => {
        await this.#takeLongText(inbound);
        this.#rememberAuthor(inbound.messageId!, mapped.author);
        return inbound;
      },
      onAck: (ack) => {
        if (ack.status === "duplicate" || ack.status === "rejected" || ack.status === "refused" || this.#options.readReceipts === false) return;
        this.#client
          .readReceipt(mapped.author, mapped.timestamp)
          .catch((error: unknown) => this.#log.debug?.({ err: this.#safe(error), platform: this.platform }, "signal: the read receipt failed"));
      },
    };
  }

  /** A long message arrives cut, with its full text as a `text/x-signal-plain` attachment: take the full text. */
  async #takeLongText(inbound: InboundMessage): Promise<void> {
    const media = inbound.media ?? [];
    const long = media.find((m) => m.mimeType === SIGNAL_LONG_TEXT_TYPE && m.fileId);
    if (long === undefined) return;
    try {
      const text = await this.#client.attachmentText(long.fileId!, LONG_TEXT_MAX_BYTES);
      if (text === null || text.trim() === "") return;
      inbound.text = text;
      const rest = media.filter((m) => m !== long);
      if (rest.length > 0) inbound.media = rest;
      else delete inbound.media;
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: this.platform }, "signal: could not read the full text of a long message; taking the shown part");
    }
  }

  /**
   * The bytes of a received attachment: `GET /v1/attachments/{id}` of the configured REST API
   * (the id, never a URL, so nothing a message names is fetched), with the length and type it
   * announces. An attachment the REST API no longer has (404) is a {@link MediaUnavailableError};
   * other failures are thrown with other people's numbers shortened.
   */
  async fetchMedia(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia> {
    const id = media.fileId;
    if (typeof id !== "string" || id === "") throw new MediaUnavailableError("This Signal message did not say which attachment it carries.");
    let response: Response;
    try {
      response = await this.#client.attachment(id, request.signal);
    } catch (error) {
      if (error instanceof SignalApiError && error.status === 404)
        throw new MediaUnavailableError("The Signal server no longer has this attachment (it may have been deleted).");
      if (request.signal.aborted) throw error;
      const safe = this.#safe(error);
      throw new PlatformError(this.platform, `signal: ${safe.message}`, { cause: safe });
    }
    const length = Number(response.headers.get("content-length"));
    const type = response.headers.get("content-type");
    return {
      // Node's web streams are async iterable (breaking out of the loop cancels the download).
      body: (response.body ?? emptyBody()) as unknown as AsyncIterable<Uint8Array>,
      size: response.headers.has("content-length") && Number.isSafeInteger(length) && length >= 0 ? length : null,
      // The REST API guesses a type from the bytes; what the sender declared is said too.
      mimeType: media.mimeType ?? (type !== null && type !== "application/octet-stream" ? type : null),
      fileName: media.fileName ?? null,
    };
  }

  /** Fills the group-name cache from `GET /v1/groups` (at most once a minute, waiting at most 2 s). */
  async #lookUpGroup(internalId: string): Promise<void> {
    if (this.#groupNames.has(internalId) || Date.now() - this.#groupsFetchedAt < 60_000) return;
    this.#groupsFetchedAt = Date.now();
    try {
      for (const group of await this.#client.groups(GROUP_LOOKUP_MS)) {
        if (group.internal_id && group.name) this.#groupNames.set(group.internal_id, group.name);
      }
    } catch (error) {
      this.#log.debug?.({ err: this.#safe(error), platform: this.platform }, "signal: could not list the groups; going on without the group's name");
    }
  }

  #rememberAuthor(messageId: string, author: string): void {
    this.#authors.set(messageId, author);
    if (this.#authors.size > 5_000) this.#authors.delete(this.#authors.keys().next().value!);
  }

  // --- outbound ------------------------------------------------------------------------------

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const recipient = source.chatId;
    if (!recipient) {
      throw new InvalidInputError("signal: the session source has no chatId to send to; pass the source of a Signal chat (a phone number or a group id).", {
        field: "source.chatId",
      });
    }
    try {
      if (message.text.trim() === "") return { messageId: null };
      const quote = this.#quoteFor(source, message);
      const group = recipient.startsWith(SIGNAL_GROUP_PREFIX);
      if (message.kind !== "notice") this.#flow.stopTyping(recipient);
      let first: string | null = null;
      for (const [i, body] of signalMessageBodies(message.text, { styled: message.kind === "reply" }).entries()) {
        const result = await this.#sendWithRetry({ ...body, recipients: [recipient], ...(i === 0 && quote !== null ? quote : {}) });
        if (result.failures.length > 0) {
          const reasons = [...new Set(result.failures.map((f) => f.reason ?? "unknown"))].join(", ");
          if (!group || result.timestamp === null) throw new SignalApiError(`signal: Signal did not deliver the message (${reasons})`, 200, reasons);
          this.#log.warn(
            { platform: this.platform, failed: result.failures.length, reasons },
            `signal: the message did not reach ${result.failures.length} group member(s) (${reasons})`,
          );
        }
        first ??= result.timestamp;
      }
      return { messageId: first };
    } catch (error) {
      throw this.#sendError(error);
    } finally {
      if (message.kind !== "notice") this.#flow.stopTyping(recipient);
    }
  }

  /** `quote_timestamp`/`quote_author` of the message a reply answers, when it is known. */
  #quoteFor(source: SessionSource, message: OutboundMessage): { quote_timestamp: number; quote_author: string } | null {
    const id = message.inReplyTo.find((m) => /^\d{1,16}$/u.test(m));
    if (id === undefined) return null;
    const author = this.#authors.get(id) ?? (source.userId || (source.chatType === "dm" ? source.chatId : null));
    return author ? { quote_timestamp: Number(id), quote_author: author } : null;
  }

  /** Sends one body; a refused connection (nothing was sent) is tried again up to twice (after 1 s, then 2 s). */
  #sendWithRetry(request: Parameters<SignalRestClient["send"]>[0]): ReturnType<SignalRestClient["send"]> {
    return retry(() => this.#client.send(request), {
      attempts: 3,
      backoff: { initialMs: 1_000, maxMs: 2_000 },
      isRetryable: (error) => error instanceof SignalApiError && error.unreachable,
    });
  }

  // --- errors --------------------------------------------------------------------------------

  #sendError(error: unknown): PlatformError {
    if (!(error instanceof SignalApiError)) {
      const safe = this.#safe(error);
      return new PlatformError(this.platform, safe.message, { cause: safe });
    }
    const said = error.apiError ?? "";
    const hint =
      error.status === 429
        ? " (Signal rate-limited the bot's account: solve the challenge through POST /v1/accounts/{number}/rate-limit-challenge)"
        : /untrusted/iu.test(said)
          ? " (the recipient's safety number changed: trust it with PUT /v1/identities/{number}/trust/{recipient})"
          : /not registered/iu.test(said) && said.includes(this.number)
            ? " (the bot's own number is not registered in the REST API)"
            : /unregistered/iu.test(said)
              ? " (the recipient is not on Signal)"
              : "";
    return new SignalSendError(`signal: sending failed: ${error.message.replace(/^signal: /u, "")}${hint}`, error.status);
  }

  #connectError(error: unknown): PlatformError {
    const safe = this.#safe(error);
    return new PlatformError(this.platform, `signal: could not start with the signal-cli REST API at ${this.#client.apiUrl}: ${safe.message}`, { cause: safe });
  }

  /** An error safe to log: other people's numbers shortened. */
  #safe(error: unknown): Error {
    return cleanedError(error, (text) => maskPhoneNumbers(text, this.number));
  }
}

/** A body with no bytes. */
async function* emptyBody(): AsyncGenerator<Uint8Array> {}
