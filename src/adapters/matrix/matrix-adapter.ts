/**
 * The Matrix adapter: matrix-js-sdk (loaded lazily, no end-to-end encryption) against the
 * Client-Server API of the bot account's homeserver.
 *
 * - Login: the access token is checked with `GET /account/whoami` (a refused token stops the
 *   start with a clear error; an unreachable homeserver is retried with growing pauses while
 *   the gateway starts). Then the SDK's sync loop runs (`startClient`: versions, capabilities,
 *   push rules, a filter, then `/sync` long polls), with its own reconnects and back-off.
 * - Sync position: the `next_batch` token is saved in the gateway's database
 *   ({@link AdapterStateStore}) after each batch's messages were handed to the gateway
 *   ({@link createSyncTokenStore}), so a restart continues where the last run stopped: what
 *   was sent while the gateway was down is answered, nothing is answered twice. On the very
 *   first start (no token saved) the history the initial sync returns is not answered.
 * - Inbound: `m.room.message` events are mapped ({@link mapMatrixEvent}) with what the
 *   adapter knows of the room (members and names from the SDK's room state, else from
 *   `GET /rooms/{id}/state`, cached; direct rooms from `m.direct` and `is_direct` invites),
 *   filtered by the answer rules ({@link decideAnswer}), de-duplicated by event id and handed
 *   to the gateway in order; while the turn runs the room shows "typing…"
 *   (`PUT /rooms/{id}/typing/{userId}`, 30 s, renewed every 20 s; turned off after the reply).
 * - Invites: accepted (`POST /join/{roomId}`) unless `autoJoin` is false, only from
 *   `allowedUsers` and to `allowedChats` when those are set; a DM invite (`is_direct`) is
 *   recorded in the bot's `m.direct` account data, so the room stays a DM after restarts.
 * - Encrypted rooms are not supported: a joined room with `m.room.encryption` state (seen at
 *   startup or later) gets one warning, its `m.room.encrypted` events are ignored, and
 *   nothing is sent there.
 * - Outbound: `m.room.message` events built by {@link matrixMessageContents} (Markdown with an
 *   HTML copy, split at 16,000 bytes, threads and replies as relations), sent with the SDK's
 *   HTTP client (`PUT …/send/m.room.message/{txnId}`, not its scheduler, which would give up
 *   on every queued message of every room when one send fails): `M_LIMIT_EXCEEDED` is waited
 *   out (`retry_after_ms`, at most 60 s a time), 5xx and connection errors retried, 4 retries
 *   with the same transaction id; a refused send (403 `M_FORBIDDEN`, …) is thrown as a clear
 *   error.
 * - matrix-js-sdk's own log lines go to the gateway's logger at warn and error only (its
 *   unused call support is silenced). The access token never appears in anything this
 *   adapter logs or throws.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { format } from "node:util";
import type { MatrixClient, MatrixError, MatrixEvent } from "matrix-js-sdk";
import {
  noopLogger,
  type Adapter,
  type AdapterStateStore,
  type GatewayLogger,
  type InboundHandler,
  type OutboundMessage,
  type SessionSource,
} from "../../gateway/index.js";
import { InvalidInputError, PlatformError, ThreadlineError } from "../../store/index.js";
import {
  DEFAULT_ANSWER_RULES,
  SeenMessageIds,
  TypingIndicator,
  abortableSleep,
  connectInBackground,
  decideAnswer,
  loadSdk,
  redactError,
  redactText,
  type AnswerRules,
} from "../chat/index.js";
import { matrixEditContent, matrixMessageContents } from "./matrix-format.js";
import { MATRIX_PLATFORM, mapMatrixEvent, matrixRelations, stripReplyFallback, type MatrixRawEvent, type MatrixRoomFacts } from "./matrix-source.js";
import { createSyncTokenStore } from "./matrix-sync-store.js";

type MatrixSdk = typeof import("matrix-js-sdk");
type SdkLoggerModule = typeof import("matrix-js-sdk/lib/logger.js");

/** Options of a {@link MatrixAdapter}. */
export interface MatrixAdapterOptions {
  /** The homeserver's base URL (the part before `/_matrix`). */
  homeserverUrl: string;
  /** The bot account's access token (never logged). */
  accessToken: string;
  /** The expected user id; the start fails when the token belongs to someone else. */
  userId?: string | null;
  /** Accept invitations (default true). */
  autoJoin?: boolean;
  /** Who is answered (default: DMs, and mentions/replies/the bot's threads in rooms; no bots; no allowlists). */
  rules?: AnswerRules;
  logger?: GatewayLogger;
  /** Where the sync token and the bot's threads are kept across restarts (default: in memory only). */
  state?: AdapterStateStore | null;
  /** How long `connect` waits for the first sync before going on in the background, in ms (default 20,000). */
  connectTimeoutMs?: number;
  /** The `/sync` long-poll timeout, in ms (default 30,000). */
  pollTimeoutMs?: number;
  /** How often "typing…" is renewed, in ms (default 20,000; each lasts 30 s). */
  typingIntervalMs?: number;
}

/** How long one "typing…" lasts on the homeserver, in ms. */
const TYPING_TIMEOUT_MS = 30_000;
/** The longest wait for a rate limit before a send gives up, in ms. */
const MAX_RETRY_WAIT_MS = 60_000;
/**
 * How long a login or a send may take, in ms. (Not the SDK's `localTimeoutMs`: its timer is
 * never cleared and would keep a failed start's process alive.)
 */
const REQUEST_TIMEOUT_MS = 60_000;
/**
 * The most messages of one room a sync batch carries (the homeserver's default is about 10):
 * after a long stop, what is older in a room than this is not delivered (a `limited` batch).
 */
const SYNC_TIMELINE_LIMIT = 50;
/** How many thread roots the bot posted in are remembered across restarts. */
const BOT_THREADS_KEPT = 500;
/** How many rooms' facts are cached. */
const ROOMS_CACHED = 2_000;

/** Where matrix-js-sdk's log lines go (the adapter created last). */
let sdkLogSink: ((level: "warn" | "error", message: string) => void) | null = null;

/**
 * Routes matrix-js-sdk's global loglevel logger (the one its sync loop and HTTP layer use) to
 * {@link sdkLogSink} at warn and above, and silences the loggers of its call (MatrixRTC)
 * support, which Threadline does not use (it reports every invite as an "unknown room").
 */
function routeSdkLogs(module: SdkLoggerModule): void {
  const factory = (methodName: string): ((...args: unknown[]) => void) => {
    const level = methodName === "error" ? "error" : "warn";
    return (...args: unknown[]) => sdkLogSink?.(level, format(...args));
  };
  const root = module.logger;
  root.methodFactory = factory as typeof root.methodFactory;
  root.setLevel("warn", false);
  for (const name of ["MatrixRTCSession", "MatrixRTCSessionManager"]) (root.getChild(name) as typeof root).setLevel("silent", false);
}

/** What the adapter keeps about a room. */
interface RoomInfo {
  name: string | null;
  topic: string | null;
  members: Map<string, string | null>;
  encrypted: boolean;
}

/** The Matrix platform adapter. Create it with {@link MatrixAdapter.create}. */
export class MatrixAdapter implements Adapter {
  readonly platform = MATRIX_PLATFORM;
  readonly #sdk: MatrixSdk;
  readonly #client: MatrixClient;
  readonly #options: MatrixAdapterOptions;
  readonly #rules: AnswerRules;
  readonly #log: GatewayLogger;
  readonly #state: AdapterStateStore | null;
  readonly #seen = new SeenMessageIds(10_000);
  /** Event ids the bot sent (replies to them address the bot). */
  readonly #botEvents = new SeenMessageIds(10_000);
  /** Thread roots the bot posted in (kept across restarts). */
  #botThreads: string[] = [];
  readonly #typing: TypingIndicator;
  readonly #stop = new AbortController();
  /** Rooms listed in `m.direct` or joined from an `is_direct` invite. */
  readonly #direct = new Set<string>();
  /** The bot's `m.direct` account data as last seen (user id → room ids). */
  #directContent: Record<string, string[]> = {};
  readonly #rooms = new Map<string, Promise<RoomInfo>>();
  readonly #encrypted = new Set<string>();
  readonly #warnedEncrypted = new Set<string>();
  #handler: InboundHandler | null = null;
  #receiving = false;
  #userId: string | null;
  /** The chain of inbound work of the current sync batch, in event order. */
  #pending: Promise<void> = Promise.resolve();
  /** No token was saved: the first batch is history, not answered. */
  #skipHistory = false;
  #syncTrouble = false;

  private constructor(options: MatrixAdapterOptions, sdk: MatrixSdk) {
    this.#options = options;
    this.#sdk = sdk;
    this.#rules = options.rules ?? DEFAULT_ANSWER_RULES;
    this.#log = options.logger ?? noopLogger;
    this.#state = options.state ?? null;
    this.#userId = options.userId ?? null;
    const store = createSyncTokenStore(sdk.MemoryStore, {
      load: () => this.#loadSyncToken(),
      synced: (nextBatch) => this.#synced(nextBatch),
    });
    const sdkLogger = this.#sdkLogger("");
    this.#client = sdk.createClient({
      baseUrl: options.homeserverUrl,
      accessToken: options.accessToken,
      userId: options.userId ?? undefined,
      store,
      logger: sdkLogger,
      timelineSupport: false,
      useAuthorizationHeader: true,
    });
    this.#typing = new TypingIndicator({
      send: (room) => this.#client.sendTyping(room, true, TYPING_TIMEOUT_MS),
      intervalMs: options.typingIntervalMs ?? 20_000,
      onError: (error) => this.#log.warn({ err: this.#safe(error), platform: this.platform }, "matrix: the typing notification failed"),
    });
    const { ClientEvent } = sdk;
    this.#client.on(ClientEvent.Event, (event) => this.#onEvent(event));
    this.#client.on(ClientEvent.AccountData, (event) => {
      if (event.getType() === "m.direct") this.#readDirect(event.getContent());
    });
    this.#client.on(ClientEvent.Sync, (state, _previous, data) => this.#onSyncState(state, data?.error ?? null));
  }

  /** Loads matrix-js-sdk (and quiets its logger) and makes the adapter (nothing is sent yet). */
  static async create(options: MatrixAdapterOptions): Promise<MatrixAdapter> {
    const sdk = await loadSdk<MatrixSdk>("matrix-js-sdk", MATRIX_PLATFORM, () => import("matrix-js-sdk"));
    routeSdkLogs(await loadSdk<SdkLoggerModule>("matrix-js-sdk", MATRIX_PLATFORM, () => import("matrix-js-sdk/lib/logger.js")));
    const adapter = new MatrixAdapter(options, sdk);
    const log = adapter.#log;
    const secrets = [options.accessToken];
    sdkLogSink = (level, message) => log[level]({ platform: MATRIX_PLATFORM }, `matrix-js-sdk: ${redactText(message, secrets)}`);
    return adapter;
  }

  /** `sync` (the Client-Server API's long-polled `/sync`). */
  get mode(): "sync" {
    return "sync";
  }

  /** The bot's user id once logged in (`null` before, unless configured). */
  get userId(): string | null {
    return this.#userId;
  }

  /**
   * Logs in (`whoami`) and starts the sync loop (without waiting for the first batch, whose
   * messages the gateway takes only once it has started). A refused token or a user id that
   * does not match fails at once; a homeserver that does not answer does not hold the
   * gateway's start: after `connectTimeoutMs` the adapter keeps trying in the background.
   */
  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
    this.#receiving = true;
    await connectInBackground(this.#bringUp(), {
      timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
      onTimeout: () =>
        this.#log.warn(
          { platform: this.platform, homeserverUrl: this.#options.homeserverUrl },
          "matrix: the homeserver does not answer yet; still connecting in the background",
        ),
      onBackgroundFailure: (error) => this.#log.error({ err: this.#safe(error), platform: this.platform }, "matrix: connecting failed"),
    });
  }

  async #bringUp(): Promise<void> {
    const who = await this.#login();
    if (!this.#receiving) return;
    this.#userId = who.user_id;
    this.#client.credentials.userId = who.user_id;
    if (who.device_id) this.#client.deviceId = who.device_id;
    await this.#loadBotThreads();
    try {
      const direct = await this.#client.getAccountDataFromServer(this.#sdk.EventType.Direct);
      if (direct) this.#readDirect(direct as Record<string, unknown>);
    } catch (error) {
      this.#log.warn(
        { err: this.#safe(error), platform: this.platform },
        "matrix: could not read the m.direct account data (direct rooms are recognised by their two members)",
      );
    }
    // The first batch may hold messages the gateway only takes once it has started, so the
    // start does not wait for it: "connected" is logged when the first sync is processed.
    const { ClientEvent, SyncState } = this.#sdk;
    const onSync = (state: string): void => {
      if (state !== SyncState.Prepared) return;
      this.#client.off(ClientEvent.Sync, onSync);
      this.#log.info(
        { platform: this.platform, mode: this.mode, bot: this.#userId, homeserverUrl: this.#options.homeserverUrl },
        `matrix adapter connected as ${this.#userId} (sync)`,
      );
      void this.#checkJoinedRooms();
    };
    if (!this.#receiving) return;
    this.#client.on(ClientEvent.Sync, onSync);
    // No presence, typing or receipts (a bot needs none); up to SYNC_TIMELINE_LIMIT messages a room per batch.
    const filter = new this.#sdk.Filter(who.user_id);
    filter.setDefinition({ presence: { not_types: ["*"] }, room: { ephemeral: { not_types: ["*"] }, timeline: { limit: SYNC_TIMELINE_LIMIT } } });
    await this.#client.startClient({
      filter,
      initialSyncLimit: 1,
      lazyLoadMembers: false,
      disablePresence: true,
      threadSupport: false,
      pollTimeout: this.#options.pollTimeoutMs ?? 30_000,
    });
  }

  /** `whoami`, retried with growing pauses (1 s doubling to 60 s) while the homeserver cannot be reached. */
  async #login(): Promise<{ user_id: string; device_id?: string }> {
    let delay = 1_000;
    for (;;) {
      try {
        const who = await this.#client.http.authedRequest<{ user_id: string; device_id?: string }>(
          this.#sdk.Method.Get,
          "/account/whoami",
          undefined,
          undefined,
          timeoutOpts(),
        );
        const expected = this.#options.userId;
        if (expected && expected !== who.user_id) {
          throw new PlatformError(
            this.platform,
            `matrix: the access token belongs to ${who.user_id}, not to adapters.matrix.userId ${expected}: use the bot account's token, or correct (or remove) adapters.matrix.userId`,
          );
        }
        return who;
      } catch (error) {
        const status = (error as MatrixError).httpStatus;
        if (status !== undefined && status !== 429 && status < 500) throw this.#connectError(error);
        if (status === undefined && !(error instanceof this.#sdk.ConnectionError) && !isTimeout(error)) throw error;
        if (!this.#receiving) throw this.#connectError(error);
        this.#log.warn(
          { err: this.#safe(error), platform: this.platform, retryInSeconds: delay / 1000 },
          `matrix: cannot reach the homeserver at ${this.#options.homeserverUrl} (${this.#safe(error).message}); trying again in ${delay / 1000} s`,
        );
        await abortableSleep(delay, this.#stop.signal);
        delay = Math.min(delay * 2, 60_000);
      }
    }
  }

  /** Stops syncing (sends keep working); what arrives meanwhile stays on the homeserver for the next start. */
  async stopReceiving(): Promise<void> {
    if (!this.#receiving) return;
    this.#receiving = false;
    this.#stop.abort();
    this.#client.stopClient();
    await this.#pending;
  }

  async disconnect(): Promise<void> {
    await this.stopReceiving();
    this.#typing.stopAll();
    this.#client.stopClient();
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    const roomId = source.chatId;
    if (!roomId)
      throw new InvalidInputError("matrix: the session source has no chatId (room id) to send to; pass the source of a Matrix room.", {
        field: "source.chatId",
      });
    try {
      if (this.#encrypted.has(roomId)) {
        throw new PlatformError(
          this.platform,
          `matrix: room ${roomId} is end-to-end encrypted; Threadline does not send there (encrypted rooms are not supported). Use an unencrypted room for the bot.`,
        );
      }
      const replyTo = message.inReplyTo.find((id) => id.startsWith("$")) ?? null;
      const replyToUser = replyTo !== null && source.userId?.startsWith("@") && source.userId !== this.#userId ? source.userId : null;
      const contents = matrixMessageContents(message.text, { kind: message.kind, replyTo, threadId: source.threadId ?? null, replyToUser });
      let first: string | null = null;
      for (const content of contents) {
        const eventId = await this.#sendEvent(roomId, content);
        this.#botEvents.add(eventId);
        first ??= eventId;
      }
      if (source.threadId) await this.#rememberThread(source.threadId);
      return { messageId: first };
    } catch (error) {
      throw this.#sendError(error, roomId);
    } finally {
      if (message.kind !== "notice") this.#stopTyping(roomId);
    }
  }

  /**
   * Starts a thread in the room of `source` for a handoff: a root notice (`🧵 <title>`) whose
   * event id is the thread's `threadId`.
   */
  async createThread(source: SessionSource, title: string): Promise<SessionSource> {
    const roomId = source.chatId;
    if (!roomId)
      throw new InvalidInputError(
        "matrix: the home channel has no chatId (room id); set homeChannels.matrix.chatId to a room id (!…:server), or send /sethome in that room.",
        { field: "source.chatId" },
      );
    try {
      if (this.#encrypted.has(roomId))
        throw new PlatformError(
          this.platform,
          `matrix: room ${roomId} is end-to-end encrypted; Threadline does not send there (encrypted rooms are not supported). Use an unencrypted room for the bot.`,
        );
      const [content] = matrixMessageContents(`🧵 ${title.trim() || "Threadline"}`, { kind: "notice", replyTo: null, threadId: null });
      const root = await this.#sendEvent(roomId, content!);
      this.#botEvents.add(root);
      await this.#rememberThread(root);
      const dm = source.chatType === "dm";
      return {
        platform: this.platform,
        chatType: dm ? "dm" : "thread",
        chatId: roomId,
        chatName: source.chatName ?? null,
        threadId: root,
        ...(dm ? {} : { parentChatId: roomId }),
      };
    } catch (error) {
      throw this.#sendError(error, roomId);
    }
  }

  /** Edits a message the bot sent (`m.replace`). */
  async editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    const roomId = source.chatId;
    if (!roomId)
      throw new InvalidInputError("matrix: the session source has no chatId (room id) of the message to edit; pass the source the message was sent to.", {
        field: "source.chatId",
      });
    try {
      await this.#sendEvent(roomId, matrixEditContent(messageId, text));
    } catch (error) {
      throw this.#sendError(error, roomId);
    }
  }

  /**
   * `PUT /rooms/{roomId}/send/m.room.message/{txnId}` with one transaction id for all its
   * attempts (the homeserver answers a repeat with the first event, so a retried send after a
   * lost response posts nothing twice). Rate limits are waited out (`retry_after_ms`, at most
   * 60 s a time), 5xx answers and connection errors retried after 1, 2, 4 and 8 s; anything
   * else, or a fifth failure, is thrown.
   */
  async #sendEvent(roomId: string, content: object): Promise<string> {
    const txnId = `tl.${randomUUID()}`;
    const path = `/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${encodeURIComponent(txnId)}`;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const sent = await this.#client.http.authedRequest<{ event_id: string }>(
          this.#sdk.Method.Put,
          path,
          undefined,
          content as Record<string, unknown>,
          timeoutOpts(),
        );
        return sent.event_id;
      } catch (error) {
        const wait = this.#retryWait(error, attempt);
        if (wait === null) throw error;
        const e = error as MatrixError;
        this.#log.warn(
          { platform: this.platform, roomId, status: e.httpStatus ?? null, errcode: e.errcode ?? null, retryInMs: wait, attempt },
          e.errcode === "M_LIMIT_EXCEEDED" || e.httpStatus === 429
            ? `matrix: rate limited by the homeserver; sending again in ${wait} ms`
            : `matrix: sending failed (${this.#safe(error).message}); sending again in ${wait} ms`,
        );
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** How long to wait before sending again after `error`, or `null` to give up. */
  #retryWait(error: unknown, attempt: number): number | null {
    if (attempt > 4) return null;
    const e = error as MatrixError;
    if (e.errcode === "M_LIMIT_EXCEEDED" || e.httpStatus === 429) {
      let after: number | null = null;
      try {
        after = e.getRetryAfterMs?.() ?? null;
      } catch {
        after = null;
      }
      const wait = after ?? 1000 * 2 ** attempt;
      return wait > MAX_RETRY_WAIT_MS ? null : Math.max(0, wait);
    }
    if ((e.httpStatus !== undefined && e.httpStatus >= 500) || error instanceof this.#sdk.ConnectionError || isTimeout(error)) return 1000 * 2 ** (attempt - 1);
    return null;
  }

  // --- inbound -----------------------------------------------------------------------

  /** Every event the SDK emits while it processes a sync batch (in order). */
  #onEvent(event: MatrixEvent): void {
    const type = event.getType();
    const roomId = event.getRoomId();
    if (roomId === undefined) return;
    if (event.isState()) {
      if (type === "m.room.encryption") this.#markEncrypted(roomId);
      if (type === "m.room.member" || type === "m.room.name" || type === "m.room.topic" || type === "m.room.canonical_alias") this.#rooms.delete(roomId);
      if (type === "m.room.member" && event.getStateKey() === this.#userId && event.getContent()["membership"] === "invite") {
        const raw = event.event as MatrixRawEvent;
        this.#enqueue(() => this.#onInvite(roomId, raw));
      }
      return;
    }
    if (type === "m.room.encrypted") {
      this.#markEncrypted(roomId);
      return;
    }
    if (type !== "m.room.message") return;
    const raw = { ...(event.event as MatrixRawEvent), room_id: roomId };
    if (raw.sender === this.#userId) {
      this.#botEvents.add(raw.event_id);
      const thread = matrixRelations(raw.content).threadRoot;
      if (thread !== null) this.#enqueue(() => this.#rememberThread(thread));
      return;
    }
    if (this.#skipHistory || !this.#receiving) return;
    this.#enqueue(() => this.#receive(raw));
  }

  #enqueue(work: () => Promise<void>): void {
    this.#pending = this.#pending
      .then(work)
      .catch((error: unknown) => this.#log.error({ err: this.#safe(error), platform: this.platform }, "matrix: handling an event failed"));
  }

  async #receive(event: MatrixRawEvent): Promise<void> {
    const handler = this.#handler;
    const me = this.#userId;
    if (handler === null || !this.#receiving || me === null) return;
    if (!this.#seen.add(event.event_id)) return;
    const roomId = event.room_id!;
    if (this.#encrypted.has(roomId)) return;
    let info: RoomInfo;
    try {
      info = await this.#roomInfo(roomId);
    } catch (error) {
      // Answer anyway, with what is known (a DM from m.direct or its invite, else a group).
      this.#log.warn(
        { err: this.#safe(error), platform: this.platform, roomId },
        `matrix: could not read the state of room ${roomId} (${this.#safe(error).message})`,
      );
      info = { name: null, topic: null, members: new Map(), encrypted: false };
    }
    if (info.encrypted) return;
    const room: MatrixRoomFacts = { roomId, name: info.name, topic: info.topic, direct: this.#isDirect(roomId, info), members: info.members };
    const bot = { userId: me, displayName: info.members.get(me) ?? null };
    let relations = { repliesToBot: false, inBotThread: false };
    let mapped = mapMatrixEvent(event, room, bot, relations);
    if (mapped === null) return;
    let decision = decideAnswer(mapped.candidate, this.#rules);
    if (!decision.answer && decision.reason === "not-addressed") {
      // Only now look up whom the message replies to and whose thread it is in (may ask the homeserver).
      relations = await this.#relationsOf(roomId, event);
      mapped = mapMatrixEvent(event, room, bot, relations)!;
      decision = decideAnswer(mapped.candidate, this.#rules);
    }
    if (!decision.answer) {
      this.#log.debug?.({ platform: this.platform, reason: decision.reason }, "matrix: message not answered");
      return;
    }
    const { inbound } = mapped;
    this.#typing.start(roomId);
    try {
      const ack = await handler(inbound);
      if (ack.status !== "accepted" && ack.status !== "queued") this.#stopTyping(roomId);
      if (ack.status === "rejected") {
        this.#log.warn({ platform: this.platform, key: ack.sessionKey, reason: ack.reason }, "matrix: message refused by the gateway");
        // The sync position moves on: say why it was not taken.
        await this.send(inbound.source, { text: ack.reason, kind: "notice", inReplyTo: [event.event_id] }).catch(() => {});
      }
    } catch (error) {
      this.#stopTyping(roomId);
      this.#seen.delete(event.event_id);
      this.#log.error({ err: this.#safe(error), platform: this.platform }, "matrix: the gateway could not take a message");
      await this.send(inbound.source, {
        text: "Sorry, your message could not be stored. Please send it again.",
        kind: "error",
        inReplyTo: [event.event_id],
      }).catch(() => {});
    }
  }

  /** Whether the event replies to the bot and whether its thread is the bot's (looked up when not known). */
  async #relationsOf(roomId: string, event: MatrixRawEvent): Promise<{ repliesToBot: boolean; inBotThread: boolean }> {
    const rel = matrixRelations(event.content);
    let repliesToBot = false;
    if (rel.replyTo !== null && !rel.replyIsFallback) {
      const body = typeof event.content["body"] === "string" ? event.content["body"] : "";
      // The reply fallback names the author of the message replied to.
      const fallbackNamesBot = body !== stripReplyFallback(body) && body.startsWith(`> <${this.#userId}>`);
      repliesToBot = fallbackNamesBot || (await this.#sentByBot(roomId, rel.replyTo));
    }
    let inBotThread = false;
    if (rel.threadRoot !== null) inBotThread = this.#botThreads.includes(rel.threadRoot) || (await this.#sentByBot(roomId, rel.threadRoot));
    return { repliesToBot, inBotThread };
  }

  async #sentByBot(roomId: string, eventId: string): Promise<boolean> {
    if (this.#botEvents.has(eventId)) return true;
    try {
      const event = await this.#client.fetchRoomEvent(roomId, eventId);
      if (event.sender === this.#userId) this.#botEvents.add(eventId);
      return event.sender === this.#userId;
    } catch (error) {
      this.#log.debug?.({ err: this.#safe(error), platform: this.platform }, "matrix: could not look up a related event");
      return false;
    }
  }

  async #onInvite(roomId: string, event: MatrixRawEvent): Promise<void> {
    const room = this.#client.getRoom(roomId);
    if (room !== null && room.getMyMembership() !== "invite") return;
    const inviter = event.sender;
    const direct = event.content["is_direct"] === true;
    const fields = { platform: this.platform, roomId, inviter, direct };
    if (this.#options.autoJoin === false) {
      this.#log.info(fields, `matrix: invited to ${roomId} by ${inviter}; not joining (adapters.matrix.autoJoin is false)`);
      return;
    }
    if (this.#rules.allowedUsers.length > 0 && !this.#rules.allowedUsers.includes(inviter)) {
      this.#log.info(fields, `matrix: invited to ${roomId} by ${inviter}, who is not in adapters.matrix.allowedUsers; not joining`);
      return;
    }
    if (this.#rules.allowedChats.length > 0 && !this.#rules.allowedChats.includes(roomId)) {
      this.#log.info(fields, `matrix: invited to ${roomId}, which is not in adapters.matrix.allowedChats; not joining`);
      return;
    }
    try {
      await this.#client.joinRoom(roomId);
      if (direct) await this.#recordDirect(roomId, inviter);
      this.#rooms.delete(roomId);
      this.#log.info(fields, `matrix: joined ${roomId} (invited by ${inviter})`);
    } catch (error) {
      this.#log.warn({ ...fields, err: this.#safe(error) }, `matrix: could not join ${roomId}: ${this.#safe(error).message}`);
    }
  }

  // --- rooms -------------------------------------------------------------------------

  /**
   * A direct room: at most two joined members (the bot and one person), and listed in
   * `m.direct`, joined from an `is_direct` invite, or of exactly two members. A room with more
   * than two members is a group whatever `m.direct` says: a newcomer to a grown DM must not
   * land in its creator's DM session (and search with the creator's DM scope).
   */
  #isDirect(roomId: string, info: RoomInfo): boolean {
    if (info.members.size > 2) return false;
    return this.#direct.has(roomId) || info.members.size === 2;
  }

  #readDirect(content: Record<string, unknown>): void {
    const kept: Record<string, string[]> = {};
    for (const [userId, rooms] of Object.entries(content)) {
      if (!Array.isArray(rooms)) continue;
      kept[userId] = rooms.filter((id): id is string => typeof id === "string");
      for (const id of kept[userId]) this.#direct.add(id);
    }
    this.#directContent = kept;
  }

  /** Records a room joined from a DM invite in the bot's `m.direct`, as the spec asks of the invitee's client. */
  async #recordDirect(roomId: string, inviter: string): Promise<void> {
    this.#direct.add(roomId);
    const rooms = this.#directContent[inviter] ?? [];
    if (rooms.includes(roomId)) return;
    const content = { ...this.#directContent, [inviter]: [...rooms, roomId] };
    this.#directContent = content;
    try {
      await this.#client.setAccountData(this.#sdk.EventType.Direct, content);
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: this.platform, roomId }, "matrix: could not record the new DM in the m.direct account data");
    }
  }

  #roomInfo(roomId: string): Promise<RoomInfo> {
    let info = this.#rooms.get(roomId);
    if (info === undefined) {
      info = this.#loadRoom(roomId);
      this.#rooms.set(roomId, info);
      info.catch(() => this.#rooms.delete(roomId));
      if (this.#rooms.size > ROOMS_CACHED) this.#rooms.delete(this.#rooms.keys().next().value!);
    }
    return info;
  }

  /** A room's facts: from the SDK's room state when it has the full state (it saw the room's creation state), else `GET /rooms/{id}/state`. */
  async #loadRoom(roomId: string): Promise<RoomInfo> {
    const room = this.#client.getRoom(roomId);
    let info: RoomInfo;
    if (room !== null && room.currentState.getStateEvents("m.room.create", "") !== null) {
      const content = (type: string): Record<string, unknown> => room.currentState.getStateEvents(type, "")?.getContent() ?? {};
      const members = new Map<string, string | null>();
      for (const member of room.getJoinedMembers()) members.set(member.userId, member.events.member?.getContent()["displayname"] ?? null);
      info = {
        name: str(content("m.room.name")["name"]) ?? str(content("m.room.canonical_alias")["alias"]),
        topic: str(content("m.room.topic")["topic"]),
        members,
        encrypted: room.hasEncryptionStateEvent(),
      };
    } else {
      const events = await this.#client.roomState(roomId);
      const members = new Map<string, string | null>();
      let name: string | null = null;
      let alias: string | null = null;
      let topic: string | null = null;
      let encrypted = false;
      for (const event of events) {
        const content = (event.content ?? {}) as Record<string, unknown>;
        if (event.type === "m.room.member" && content["membership"] === "join" && event.state_key) members.set(event.state_key, str(content["displayname"]));
        else if (event.type === "m.room.name") name = str(content["name"]);
        else if (event.type === "m.room.canonical_alias") alias = str(content["alias"]);
        else if (event.type === "m.room.topic") topic = str(content["topic"]);
        else if (event.type === "m.room.encryption") encrypted = true;
      }
      info = { name: name ?? alias, topic, members, encrypted };
    }
    if (info.encrypted) this.#markEncrypted(roomId);
    return info;
  }

  /** Startup: warns about every joined room that is encrypted (in the background). */
  async #checkJoinedRooms(): Promise<void> {
    try {
      const { joined_rooms: rooms } = await this.#client.getJoinedRooms();
      for (const roomId of rooms) {
        if (!this.#receiving) return;
        await this.#roomInfo(roomId).catch((error: unknown) =>
          this.#log.debug?.({ err: this.#safe(error), platform: this.platform, roomId }, "matrix: could not read a room's state"),
        );
      }
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: this.platform }, "matrix: could not list the joined rooms");
    }
  }

  #markEncrypted(roomId: string): void {
    this.#encrypted.add(roomId);
    if (this.#warnedEncrypted.has(roomId)) return;
    this.#warnedEncrypted.add(roomId);
    this.#log.warn(
      { platform: this.platform, roomId, encrypted: true },
      `matrix: room ${roomId} is end-to-end encrypted; Threadline cannot read or send there (encrypted rooms are not supported) — use an unencrypted room`,
    );
  }

  // --- sync position and bot threads -------------------------------------------------

  #syncTokenKey(): string {
    return `sync_token:${this.#userId ?? "unknown"}`;
  }

  async #loadSyncToken(): Promise<string | null> {
    let token: string | null = null;
    try {
      token = (await this.#state?.get(this.#syncTokenKey())) ?? null;
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: this.platform }, "matrix: could not read the saved sync token; starting with an initial sync");
    }
    this.#skipHistory = token === null;
    if (token === null)
      this.#log.info({ platform: this.platform }, "matrix: no saved sync position: the messages already in the rooms are not answered, only new ones");
    return token;
  }

  /** After each processed batch: once its messages are with the gateway, save where the next run continues. */
  async #synced(nextBatch: string): Promise<void> {
    await this.#pending;
    if (!this.#receiving) return;
    this.#skipHistory = false;
    try {
      await this.#state?.set(this.#syncTokenKey(), nextBatch);
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: this.platform }, "matrix: could not save the sync position");
    }
  }

  async #loadBotThreads(): Promise<void> {
    try {
      const saved = await this.#state?.get(`bot_threads:${this.#userId}`);
      const parsed: unknown = saved ? JSON.parse(saved) : [];
      if (Array.isArray(parsed)) this.#botThreads = parsed.filter((id): id is string => typeof id === "string").slice(-BOT_THREADS_KEPT);
    } catch (error) {
      this.#log.warn({ err: this.#safe(error), platform: this.platform }, "matrix: could not read the bot's threads");
    }
  }

  async #rememberThread(root: string): Promise<void> {
    if (this.#botThreads.includes(root)) return;
    this.#botThreads = [...this.#botThreads, root].slice(-BOT_THREADS_KEPT);
    if (this.#userId === null) return;
    await this.#state
      ?.set(`bot_threads:${this.#userId}`, JSON.stringify(this.#botThreads))
      .catch((error: unknown) => this.#log.warn({ err: this.#safe(error), platform: this.platform }, "matrix: could not save the bot's threads"));
  }

  // --- helpers -----------------------------------------------------------------------

  #onSyncState(state: string, error: Error | null): void {
    const { SyncState } = this.#sdk;
    if ((state === SyncState.Error || state === SyncState.Reconnecting) && this.#receiving) {
      if ((error as MatrixError | null)?.errcode === "M_UNKNOWN_TOKEN") {
        this.#log.error(
          { platform: this.platform, errcode: "M_UNKNOWN_TOKEN" },
          "matrix: the homeserver no longer accepts the access token (its session was logged out); syncing stopped. Put a new token in adapters.matrix.accessToken or MATRIX_ACCESS_TOKEN and restart.",
        );
        return;
      }
      if (!this.#syncTrouble) {
        this.#syncTrouble = true;
        this.#log.warn(
          { err: error === null ? undefined : this.#safe(error), platform: this.platform },
          `matrix: syncing with the homeserver failed${error === null ? "" : ` (${this.#safe(error).message})`}; the SDK keeps retrying`,
        );
      }
    } else if (state === SyncState.Syncing && this.#syncTrouble) {
      this.#syncTrouble = false;
      this.#log.info({ platform: this.platform }, "matrix: homeserver reachable again; syncing resumed");
    }
  }

  #stopTyping(roomId: string): void {
    if (!this.#typing.active.includes(roomId)) return;
    this.#typing.stop(roomId);
    this.#client
      .sendTyping(roomId, false, 0)
      .catch((error: unknown) => this.#log.debug?.({ err: this.#safe(error), platform: this.platform }, "matrix: turning typing off failed"));
  }

  /** The SDK's per-client logger (`MatrixClient.logger`): warn and error lines only, token removed. */
  #sdkLogger(prefix: string): import("matrix-js-sdk/lib/logger.js").Logger {
    const line =
      (level: "warn" | "error") =>
      (...args: unknown[]) =>
        this.#log[level]({ platform: MATRIX_PLATFORM }, `matrix-js-sdk: ${prefix}${redactText(format(...args), [this.#options.accessToken])}`);
    const noop = (): void => {};
    return { trace: noop, debug: noop, info: noop, warn: line("warn"), error: line("error"), getChild: (name: string) => this.#sdkLogger(`${prefix}${name} `) };
  }

  #connectError(error: unknown): ThreadlineError {
    if (error instanceof ThreadlineError) return error;
    const safe = this.#safe(error);
    if (!(error as MatrixError).errcode && /^matrix: /u.test(safe.message)) return new PlatformError(this.platform, safe.message, { cause: safe });
    const status = (error as MatrixError).httpStatus;
    const errcode = (error as MatrixError).errcode;
    const url = this.#options.homeserverUrl;
    const why =
      errcode === "M_UNKNOWN_TOKEN" || errcode === "M_MISSING_TOKEN" || status === 401
        ? `the homeserver at ${url} refused the access token (${errcode ?? status}): check adapters.matrix.accessToken or MATRIX_ACCESS_TOKEN (a token stops working when its session is logged out; log in as the bot again for a new one)`
        : status === 404
          ? `${url} does not answer the Matrix Client-Server API (GET /_matrix/client/v3/account/whoami: 404): adapters.matrix.homeserverUrl must be the homeserver's base URL, the part before /_matrix`
          : status !== undefined
            ? `the homeserver at ${url} refused the login (${status}${errcode ? ` ${errcode}` : ""}: ${this.#reason(error)})`
            : `could not reach the homeserver at ${url}: ${safe.message}`;
    return new PlatformError(this.platform, `matrix: ${why}`, { platformCode: errcode ?? null, cause: safe });
  }

  #sendError(error: unknown, roomId: string): ThreadlineError {
    if (error instanceof ThreadlineError) return error;
    const safe = this.#safe(error);
    if (/^matrix: /u.test(safe.message)) return new PlatformError(this.platform, safe.message, { cause: safe });
    const status = (error as MatrixError).httpStatus;
    const errcode = (error as MatrixError).errcode;
    const hint =
      errcode === "M_FORBIDDEN"
        ? " — the bot is not in the room (it was kicked, or left) or may not post there"
        : errcode === "M_LIMIT_EXCEEDED"
          ? " — still rate limited after waiting"
          : /configured to use encryption/u.test(safe.message)
            ? " — the room is end-to-end encrypted, which Threadline does not support"
            : "";
    return new PlatformError(
      this.platform,
      status !== undefined
        ? `matrix: the homeserver refused the message to room ${roomId} (${status}${errcode ? ` ${errcode}` : ""}: ${this.#reason(error)})${hint}`
        : `matrix: sending to room ${roomId} failed: ${safe.message}${hint}`,
      // The homeserver's answer is quoted already; other failures keep what caused them.
      { platformCode: errcode ?? null, ...(status === undefined ? { cause: safe } : {}) },
    );
  }

  /** The homeserver's own words (`error` of the error body), else the error's message; token removed. */
  #reason(error: unknown): string {
    const said = (error as MatrixError).data?.error;
    return typeof said === "string" && said !== "" ? redactText(said, [this.#options.accessToken]) : this.#safe(error).message;
  }

  #safe(error: unknown): Error {
    return redactError(error, [this.#options.accessToken]);
  }
}

/** Request options that abort after {@link REQUEST_TIMEOUT_MS} (an unref'd timer). */
function timeoutOpts(): Parameters<MatrixClient["http"]["authedRequest"]>[4] {
  // `priority` (from the DOM's RequestInit) is optional at run time.
  return { abortSignal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) } as Parameters<MatrixClient["http"]["authedRequest"]>[4];
}

/** A request that ran out of time (our abort signal). */
function isTimeout(error: unknown): boolean {
  const name = (error as Error | null)?.name;
  return name === "AbortError" || name === "TimeoutError";
}

function str(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
