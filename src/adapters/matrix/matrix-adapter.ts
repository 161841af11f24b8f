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
import type { MatrixClient } from "matrix-js-sdk";
import {
  noopLogger,
  type Adapter,
  type AdapterStateStore,
  type GatewayLogger,
  type InboundHandler,
  type OutboundMessage,
  type SessionSource,
} from "../../gateway/index.js";
import {
  DEFAULT_ANSWER_RULES,
  SeenMessageIds,
  TypingIndicator,
  connectInBackground,
  decideAnswer,
  loadSdk,
  redactError,
  type AnswerRules,
} from "../chat/index.js";
import { MatrixBotPosts } from "./matrix-bot-posts.js";
import { MatrixRooms, type RoomInfo } from "./matrix-rooms.js";
import { clientSdkLogger, routeSdkLogs, setSdkLogSink, type SdkLoggerModule } from "./matrix-sdk-log.js";
import { MatrixSender } from "./matrix-send.js";
import { MATRIX_PLATFORM, mapMatrixEvent, type MatrixRawEvent, type MatrixRoomFacts } from "./matrix-source.js";
import { MatrixSync } from "./matrix-sync.js";
import { createSyncTokenStore } from "./matrix-sync-store.js";

type MatrixSdk = typeof import("matrix-js-sdk");

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

/** The Matrix platform adapter. Create it with {@link MatrixAdapter.create}. */
export class MatrixAdapter implements Adapter {
  readonly platform = MATRIX_PLATFORM;
  readonly #client: MatrixClient;
  readonly #options: MatrixAdapterOptions;
  readonly #rules: AnswerRules;
  readonly #log: GatewayLogger;
  readonly #seen = new SeenMessageIds(10_000);
  readonly #typing: TypingIndicator;
  readonly #rooms: MatrixRooms;
  readonly #botPosts: MatrixBotPosts;
  readonly #sender: MatrixSender;
  readonly #sync: MatrixSync;
  #handler: InboundHandler | null = null;

  private constructor(options: MatrixAdapterOptions, sdk: MatrixSdk) {
    this.#options = options;
    this.#rules = options.rules ?? DEFAULT_ANSWER_RULES;
    this.#log = options.logger ?? noopLogger;
    const safe = (error: unknown): Error => this.#safe(error);
    const store = createSyncTokenStore(sdk.MemoryStore, {
      load: () => this.#sync.loadSyncToken(),
      synced: (nextBatch) => this.#sync.synced(nextBatch),
    });
    this.#client = sdk.createClient({
      baseUrl: options.homeserverUrl,
      accessToken: options.accessToken,
      userId: options.userId ?? undefined,
      store,
      logger: clientSdkLogger(this.#log, options.accessToken),
      timelineSupport: false,
      useAuthorizationHeader: true,
    });
    const client = this.#client;
    const log = this.#log;
    const userId = (): string | null => this.#sync.userId;
    this.#typing = new TypingIndicator({
      send: (room) => client.sendTyping(room, true, TYPING_TIMEOUT_MS),
      intervalMs: options.typingIntervalMs ?? 20_000,
      onError: (error) => log.warn({ err: safe(error), platform: this.platform }, "matrix: the typing notification failed"),
    });
    this.#rooms = new MatrixRooms({ client, sdk, log, safe, receiving: () => this.#sync.receiving });
    this.#botPosts = new MatrixBotPosts({ client, state: options.state ?? null, log, safe, userId });
    this.#sender = new MatrixSender({ client, sdk, log, accessToken: options.accessToken, rooms: this.#rooms, botPosts: this.#botPosts, userId });
    this.#sync = new MatrixSync({
      client,
      sdk,
      log,
      state: options.state ?? null,
      homeserverUrl: options.homeserverUrl,
      accessToken: options.accessToken,
      userId: options.userId ?? null,
      pollTimeoutMs: options.pollTimeoutMs ?? 30_000,
      autoJoin: options.autoJoin !== false,
      rules: this.#rules,
      rooms: this.#rooms,
      botPosts: this.#botPosts,
      safe,
      receive: (event) => this.#receive(event),
    });
  }

  /** Loads matrix-js-sdk (and quiets its logger) and makes the adapter (nothing is sent yet). */
  static async create(options: MatrixAdapterOptions): Promise<MatrixAdapter> {
    const sdk = await loadSdk<MatrixSdk>("matrix-js-sdk", MATRIX_PLATFORM, () => import("matrix-js-sdk"));
    routeSdkLogs(await loadSdk<SdkLoggerModule>("matrix-js-sdk", MATRIX_PLATFORM, () => import("matrix-js-sdk/lib/logger.js")));
    const adapter = new MatrixAdapter(options, sdk);
    setSdkLogSink(adapter.#log, [options.accessToken]);
    return adapter;
  }

  /** `sync` (the Client-Server API's long-polled `/sync`). */
  get mode(): "sync" {
    return "sync";
  }

  /** The bot's user id once logged in (`null` before, unless configured). */
  get userId(): string | null {
    return this.#sync.userId;
  }

  /**
   * Logs in (`whoami`) and starts the sync loop (without waiting for the first batch, whose
   * messages the gateway takes only once it has started). A refused token or a user id that
   * does not match fails at once; a homeserver that does not answer does not hold the
   * gateway's start: after `connectTimeoutMs` the adapter keeps trying in the background.
   */
  async connect(handler: InboundHandler): Promise<void> {
    this.#handler = handler;
    await connectInBackground(this.#sync.start(), {
      timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
      onTimeout: () =>
        this.#log.warn(
          { platform: this.platform, homeserverUrl: this.#options.homeserverUrl },
          "matrix: the homeserver does not answer yet; still connecting in the background",
        ),
      onBackgroundFailure: (error) => this.#log.error({ err: this.#safe(error), platform: this.platform }, "matrix: connecting failed"),
    });
  }

  /** Stops syncing (sends keep working); what arrives meanwhile stays on the homeserver for the next start. */
  async stopReceiving(): Promise<void> {
    await this.#sync.stop();
  }

  async disconnect(): Promise<void> {
    await this.stopReceiving();
    this.#typing.stopAll();
    this.#client.stopClient();
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    try {
      return await this.#sender.send(source, message);
    } finally {
      if (message.kind !== "notice" && source.chatId) this.#stopTyping(source.chatId);
    }
  }

  /**
   * Starts a thread in the room of `source` for a handoff: a root notice (`🧵 <title>`) whose
   * event id is the thread's `threadId`.
   */
  createThread(source: SessionSource, title: string): Promise<SessionSource> {
    return this.#sender.createThread(source, title);
  }

  /** Edits a message the bot sent (`m.replace`). */
  editMessage(source: SessionSource, messageId: string, text: string): Promise<void> {
    return this.#sender.editMessage(source, messageId, text);
  }

  // --- inbound -----------------------------------------------------------------------

  async #receive(event: MatrixRawEvent): Promise<void> {
    const handler = this.#handler;
    const me = this.#sync.userId;
    if (handler === null || !this.#sync.receiving || me === null) return;
    if (!this.#seen.add(event.event_id)) return;
    const roomId = event.room_id!;
    if (this.#rooms.isEncrypted(roomId)) return;
    let info: RoomInfo;
    try {
      info = await this.#rooms.info(roomId);
    } catch (error) {
      // Answer anyway, with what is known (a DM from m.direct or its invite, else a group).
      this.#log.warn(
        { err: this.#safe(error), platform: this.platform, roomId },
        `matrix: could not read the state of room ${roomId} (${this.#safe(error).message})`,
      );
      info = { name: null, topic: null, members: new Map(), encrypted: false };
    }
    if (info.encrypted) return;
    const room: MatrixRoomFacts = { roomId, name: info.name, topic: info.topic, direct: this.#rooms.isDirect(roomId, info), members: info.members };
    const bot = { userId: me, displayName: info.members.get(me) ?? null };
    let relations = { repliesToBot: false, inBotThread: false };
    let mapped = mapMatrixEvent(event, room, bot, relations);
    if (mapped === null) return;
    let decision = decideAnswer(mapped.candidate, this.#rules);
    if (!decision.answer && decision.reason === "not-addressed") {
      // Only now look up whom the message replies to and whose thread it is in (may ask the homeserver).
      relations = await this.#botPosts.relationsOf(roomId, event);
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

  #stopTyping(roomId: string): void {
    if (!this.#typing.active.includes(roomId)) return;
    this.#typing.stop(roomId);
    this.#client
      .sendTyping(roomId, false, 0)
      .catch((error: unknown) => this.#log.debug?.({ err: this.#safe(error), platform: this.platform }, "matrix: turning typing off failed"));
  }

  #safe(error: unknown): Error {
    return redactError(error, [this.#options.accessToken]);
  }
}
