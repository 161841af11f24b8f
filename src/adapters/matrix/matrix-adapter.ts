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
 *   and run through the shared {@link InboundFlow} in order (de-duplicated by event id, then
 *   the answer rules, with whom a message replies to looked up only when needed); while the
 *   turn runs the room shows "typing…" (`PUT /rooms/{id}/typing/{userId}`, 30 s, renewed
 *   every 20 s; turned off after the reply).
 * - Receiving: one replica at a time when the runner gives a receiver lease
 *   ({@link MatrixAdapter.exclusiveReceiver}); sending needs no sync loop.
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
 * - Media: `m.image`/`m.audio`/`m.video`/`m.file` carry their `mxc://` URI; the gateway fetches
 *   them in the turn through {@link MatrixAdapter.fetchMedia} (the homeserver's authenticated
 *   media API, {@link downloadMatrixMedia}; never an `http(s)` URL an event names).
 * - matrix-js-sdk's own log lines go to the gateway's logger at warn and error only (its
 *   unused call support is silenced). The access token never appears in anything this
 *   adapter logs or throws.
 *
 * @module
 */
import type { MatrixClient } from "matrix-js-sdk";
import {
  MediaUnavailableError,
  noopLogger,
  type Adapter,
  type AdapterEvents,
  type AdapterStateStore,
  type FetchedMedia,
  type GatewayLogger,
  type InboundHandler,
  type InboundMedia,
  type MediaFetchRequest,
  type OutboundMessage,
  type SessionSource,
} from "../../gateway/index.js";
import { DEFAULT_ANSWER_RULES, InboundFlow, connectInBackground, loadSdk, redactError, type AnswerRules, type MappedInbound } from "../chat/index.js";
import { PlatformError } from "../../store/index.js";
import { MatrixBotPosts } from "./matrix-bot-posts.js";
import { downloadMatrixMedia } from "./matrix-media.js";
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
  /** One sync loop per access token: with several replicas, one receives at a time (the receiver lease). */
  readonly exclusiveReceiver = true;
  readonly #client: MatrixClient;
  readonly #options: MatrixAdapterOptions;
  readonly #log: GatewayLogger;
  readonly #flow: InboundFlow;
  readonly #rooms: MatrixRooms;
  readonly #botPosts: MatrixBotPosts;
  readonly #sender: MatrixSender;
  readonly #sync: MatrixSync;

  private constructor(options: MatrixAdapterOptions, sdk: MatrixSdk) {
    this.#options = options;
    const rules = options.rules ?? DEFAULT_ANSWER_RULES;
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
    this.#flow = new InboundFlow({
      platform: MATRIX_PLATFORM,
      // The sync position moves on: what the gateway could not take is not delivered again.
      redelivers: false,
      send: (source, message) => this.send(source, message),
      redact: safe,
      rules,
      logger: log,
      typing: {
        send: (room) => client.sendTyping(room, true, TYPING_TIMEOUT_MS),
        end: (room) => client.sendTyping(room, false, 0),
        intervalMs: options.typingIntervalMs ?? 20_000,
        onError: (error) => log.warn({ err: safe(error), platform: MATRIX_PLATFORM }, "matrix: the typing notification failed"),
      },
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
      rules,
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
   * messages the gateway takes only once it has started) — at once, or, with a receiver lease
   * in `events`, once this replica holds it. A refused token or a user id that does not match
   * fails at once; a homeserver that does not answer does not hold the gateway's start: after
   * `connectTimeoutMs` the adapter keeps trying in the background.
   */
  async connect(handler: InboundHandler, events?: AdapterEvents): Promise<void> {
    this.#flow.connect(handler, events);
    await connectInBackground(this.#flow.receive({ start: () => this.#sync.start(), stop: () => this.#sync.stop() }), {
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
    await this.#flow.stopReceiving();
  }

  async disconnect(): Promise<void> {
    await this.#flow.close();
    this.#client.stopClient();
  }

  async send(source: SessionSource, message: OutboundMessage): Promise<{ messageId?: string | null }> {
    try {
      return await this.#sender.send(source, message);
    } finally {
      if (message.kind !== "notice") this.#flow.stopTyping(source.chatId);
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

  /**
   * The bytes of an inbound file: its `mxc://` URI through the configured homeserver's
   * authenticated media API with the access token (see {@link downloadMatrixMedia}). Errors
   * never carry the token.
   */
  async fetchMedia(media: InboundMedia, request: MediaFetchRequest): Promise<FetchedMedia> {
    try {
      return await downloadMatrixMedia(media, { homeserverUrl: this.#options.homeserverUrl, accessToken: this.#options.accessToken, signal: request.signal });
    } catch (error) {
      if (error instanceof MediaUnavailableError || error instanceof PlatformError || request.signal.aborted) throw error;
      const safe = this.#safe(error);
      throw new PlatformError(MATRIX_PLATFORM, `matrix: the media download failed: ${safe.message}`, { cause: safe });
    }
  }

  // --- inbound -----------------------------------------------------------------------

  async #receive(event: MatrixRawEvent): Promise<void> {
    if (!this.#sync.receiving) return;
    await this.#flow.take(event.event_id, () => this.#map(event));
  }

  /** The event as the flow takes it: the room's facts, and whom it replies to only when the rules ask. */
  async #map(event: MatrixRawEvent): Promise<MappedInbound | null> {
    const me = this.#sync.userId;
    const roomId = event.room_id!;
    if (me === null || this.#rooms.isEncrypted(roomId)) return null;
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
    if (info.encrypted) return null;
    const room: MatrixRoomFacts = { roomId, name: info.name, topic: info.topic, direct: this.#rooms.isDirect(roomId, info), members: info.members };
    const bot = { userId: me, displayName: info.members.get(me) ?? null };
    const mapped = mapMatrixEvent(event, room, bot, { repliesToBot: false, inBotThread: false });
    if (mapped === null) return null;
    return {
      ...mapped,
      typingKey: roomId,
      // Only now look up whom the message replies to and whose thread it is in (may ask the homeserver).
      moreFacts: async () => {
        const more = mapMatrixEvent(event, room, bot, await this.#botPosts.relationsOf(roomId, event));
        return more === null ? null : { ...more, typingKey: roomId };
      },
    };
  }

  #safe(error: unknown): Error {
    return redactError(error, [this.#options.accessToken]);
  }
}
