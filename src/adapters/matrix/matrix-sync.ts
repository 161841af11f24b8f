/**
 * The Matrix sync loop ({@link MatrixSync}): the login (`GET /account/whoami`: a refused
 * token stops the start with a clear error; an unreachable homeserver is retried with growing
 * pauses), then the SDK's sync loop (`startClient`: versions, capabilities, push rules, a
 * filter, then `/sync` long polls, with its own reconnects and back-off), the events of each
 * batch in order (messages to the adapter, invites and encryption to {@link MatrixRooms}),
 * and the sync position: the `next_batch` token is saved in the gateway's database after each
 * batch's messages were handed to the gateway ({@link createSyncTokenStore}), so a restart
 * continues where the last run stopped. On the very first start (no token saved) the history
 * the initial sync returns is not answered.
 *
 * @module
 */
import type { MatrixClient, MatrixError, MatrixEvent } from "matrix-js-sdk";
import type { AdapterStateStore, GatewayLogger } from "../../gateway/index.js";
import { PlatformError, ThreadlineError } from "../../store/index.js";
import { Backoff, abortableSleep, type AnswerRules } from "../chat/index.js";
import type { MatrixBotPosts } from "./matrix-bot-posts.js";
import type { MatrixRooms } from "./matrix-rooms.js";
import { homeserverReason, isTimeout, timeoutOpts } from "./matrix-send.js";
import { MATRIX_PLATFORM, matrixRelations, type MatrixRawEvent } from "./matrix-source.js";

type MatrixSdk = typeof import("matrix-js-sdk");

/**
 * The most messages of one room a sync batch carries (the homeserver's default is about 10):
 * after a long stop, what is older in a room than this is not delivered (a `limited` batch).
 */
const SYNC_TIMELINE_LIMIT = 50;

/** What {@link MatrixSync} works with. */
export interface MatrixSyncOptions {
  client: MatrixClient;
  sdk: MatrixSdk;
  log: GatewayLogger;
  state: AdapterStateStore | null;
  homeserverUrl: string;
  accessToken: string;
  /** The expected user id; the start fails when the token belongs to someone else. */
  userId: string | null;
  /** The `/sync` long-poll timeout, in ms. */
  pollTimeoutMs: number;
  /** Accept invitations. */
  autoJoin: boolean;
  rules: AnswerRules;
  rooms: MatrixRooms;
  botPosts: MatrixBotPosts;
  /** The error with the access token removed. */
  safe(error: unknown): Error;
  /** A message event of someone else, in sync order (awaited before the batch's position is saved). */
  receive(event: MatrixRawEvent): Promise<void>;
}

/** The login and the `/sync` loop of the bot account. */
export class MatrixSync {
  readonly #client: MatrixClient;
  readonly #sdk: MatrixSdk;
  readonly #log: GatewayLogger;
  readonly #options: MatrixSyncOptions;
  #stop = new AbortController();
  #receiving = false;
  #userId: string | null;
  /** The chain of inbound work of the current sync batch, in event order. */
  #pending: Promise<void> = Promise.resolve();
  /** No token was saved: the first batch is history, not answered. */
  #skipHistory = false;
  #syncTrouble = false;

  constructor(options: MatrixSyncOptions) {
    this.#options = options;
    this.#client = options.client;
    this.#sdk = options.sdk;
    this.#log = options.log;
    this.#userId = options.userId;
    const { ClientEvent } = options.sdk;
    this.#client.on(ClientEvent.Event, (event) => this.#onEvent(event));
    this.#client.on(ClientEvent.AccountData, (event) => {
      if (event.getType() === "m.direct") options.rooms.readDirect(event.getContent());
    });
    this.#client.on(ClientEvent.Sync, (state, _previous, data) => this.#onSyncState(state, data?.error ?? null));
  }

  /** Whether the loop runs (or is starting). */
  get receiving(): boolean {
    return this.#receiving;
  }

  /** The bot's user id once logged in (`null` before, unless configured). */
  get userId(): string | null {
    return this.#userId;
  }

  /**
   * Logs in and starts the sync loop (without waiting for the first batch, whose messages the
   * gateway takes only once it has started). Again after {@link stop}: starts again.
   */
  async start(): Promise<void> {
    this.#receiving = true;
    this.#stop = new AbortController();
    const who = await this.#login();
    if (!this.#receiving) return;
    this.#userId = who.user_id;
    this.#client.credentials.userId = who.user_id;
    if (who.device_id) this.#client.deviceId = who.device_id;
    await this.#options.botPosts.loadThreads();
    await this.#options.rooms.loadDirect();
    // The first batch may hold messages the gateway only takes once it has started, so the
    // start does not wait for it: "connected" is logged when the first sync is processed.
    const { ClientEvent, SyncState } = this.#sdk;
    const onSync = (state: string): void => {
      if (state !== SyncState.Prepared) return;
      this.#client.off(ClientEvent.Sync, onSync);
      this.#log.info(
        { platform: MATRIX_PLATFORM, mode: "sync", bot: this.#userId, homeserverUrl: this.#options.homeserverUrl },
        `matrix adapter connected as ${this.#userId} (sync)`,
      );
      void this.#options.rooms.checkJoinedRooms();
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
      pollTimeout: this.#options.pollTimeoutMs,
    });
  }

  /** `whoami`, retried with growing pauses (1 s doubling to 60 s) while the homeserver cannot be reached. */
  async #login(): Promise<{ user_id: string; device_id?: string }> {
    const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
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
            MATRIX_PLATFORM,
            `matrix: the access token belongs to ${who.user_id}, not to adapters.matrix.userId ${expected}: use the bot account's token, or correct (or remove) adapters.matrix.userId`,
          );
        }
        return who;
      } catch (error) {
        const status = (error as MatrixError).httpStatus;
        if (status !== undefined && status !== 429 && status < 500) throw this.#connectError(error);
        if (status === undefined && !(error instanceof this.#sdk.ConnectionError) && !isTimeout(error)) throw error;
        if (!this.#receiving) throw this.#connectError(error);
        const safe = this.#options.safe(error);
        const delay = backoff.next();
        this.#log.warn(
          { err: safe, platform: MATRIX_PLATFORM, retryInSeconds: delay / 1000 },
          `matrix: cannot reach the homeserver at ${this.#options.homeserverUrl} (${safe.message}); trying again in ${delay / 1000} s`,
        );
        await abortableSleep(delay, this.#stop.signal);
      }
    }
  }

  /** Stops syncing (sends keep working); what arrives meanwhile stays on the homeserver for the next start. */
  async stop(): Promise<void> {
    if (!this.#receiving) return;
    this.#receiving = false;
    this.#stop.abort();
    this.#client.stopClient();
    await this.#pending;
  }

  // --- the events of a batch -----------------------------------------------------------

  /** Every event the SDK emits while it processes a sync batch (in order). */
  #onEvent(event: MatrixEvent): void {
    const type = event.getType();
    const roomId = event.getRoomId();
    if (roomId === undefined) return;
    const { rooms, botPosts } = this.#options;
    if (event.isState()) {
      if (type === "m.room.encryption") rooms.markEncrypted(roomId);
      if (type === "m.room.member" || type === "m.room.name" || type === "m.room.topic" || type === "m.room.canonical_alias") rooms.forget(roomId);
      if (type === "m.room.member" && event.getStateKey() === this.#userId && event.getContent()["membership"] === "invite") {
        const raw = event.event as MatrixRawEvent;
        this.#enqueue(() => rooms.onInvite(roomId, raw, this.#options.rules, this.#options.autoJoin));
      }
      return;
    }
    if (type === "m.room.encrypted") {
      rooms.markEncrypted(roomId);
      return;
    }
    if (type !== "m.room.message") return;
    const raw = { ...(event.event as MatrixRawEvent), room_id: roomId };
    if (raw.sender === this.#userId) {
      botPosts.addEvent(raw.event_id);
      const thread = matrixRelations(raw.content).threadRoot;
      if (thread !== null) this.#enqueue(() => botPosts.rememberThread(thread));
      return;
    }
    if (this.#skipHistory || !this.#receiving) return;
    this.#enqueue(() => this.#options.receive(raw));
  }

  #enqueue(work: () => Promise<void>): void {
    this.#pending = this.#pending
      .then(work)
      .catch((error: unknown) => this.#log.error({ err: this.#options.safe(error), platform: MATRIX_PLATFORM }, "matrix: handling an event failed"));
  }

  // --- sync position -------------------------------------------------------------------

  #syncTokenKey(): string {
    return `sync_token:${this.#userId ?? "unknown"}`;
  }

  /** The sync token saved by the last run (`null`: none; the first batch is then history, not answered). */
  async loadSyncToken(): Promise<string | null> {
    let token: string | null = null;
    try {
      token = (await this.#options.state?.get(this.#syncTokenKey())) ?? null;
    } catch (error) {
      this.#log.warn(
        { err: this.#options.safe(error), platform: MATRIX_PLATFORM },
        "matrix: could not read the saved sync token; starting with an initial sync",
      );
    }
    this.#skipHistory = token === null;
    if (token === null)
      this.#log.info({ platform: MATRIX_PLATFORM }, "matrix: no saved sync position: the messages already in the rooms are not answered, only new ones");
    return token;
  }

  /** After each processed batch: once its messages are with the gateway, save where the next run continues. */
  async synced(nextBatch: string): Promise<void> {
    await this.#pending;
    if (!this.#receiving) return;
    this.#skipHistory = false;
    try {
      await this.#options.state?.set(this.#syncTokenKey(), nextBatch);
    } catch (error) {
      this.#log.warn({ err: this.#options.safe(error), platform: MATRIX_PLATFORM }, "matrix: could not save the sync position");
    }
  }

  #onSyncState(state: string, error: Error | null): void {
    const { SyncState } = this.#sdk;
    if ((state === SyncState.Error || state === SyncState.Reconnecting) && this.#receiving) {
      if ((error as MatrixError | null)?.errcode === "M_UNKNOWN_TOKEN") {
        this.#log.error(
          { platform: MATRIX_PLATFORM, errcode: "M_UNKNOWN_TOKEN" },
          "matrix: the homeserver no longer accepts the access token (its session was logged out); syncing stopped. Put a new token in adapters.matrix.accessToken or MATRIX_ACCESS_TOKEN and restart.",
        );
        return;
      }
      if (!this.#syncTrouble) {
        this.#syncTrouble = true;
        this.#log.warn(
          { err: error === null ? undefined : this.#options.safe(error), platform: MATRIX_PLATFORM },
          `matrix: syncing with the homeserver failed${error === null ? "" : ` (${this.#options.safe(error).message})`}; the SDK keeps retrying`,
        );
      }
    } else if (state === SyncState.Syncing && this.#syncTrouble) {
      this.#syncTrouble = false;
      this.#log.info({ platform: MATRIX_PLATFORM }, "matrix: homeserver reachable again; syncing resumed");
    }
  }

  #connectError(error: unknown): ThreadlineError {
    if (error instanceof ThreadlineError) return error;
    const safe = this.#options.safe(error);
    if (!(error as MatrixError).errcode && /^matrix: /u.test(safe.message)) return new PlatformError(MATRIX_PLATFORM, safe.message, { cause: safe });
    const status = (error as MatrixError).httpStatus;
    const errcode = (error as MatrixError).errcode;
    const url = this.#options.homeserverUrl;
    const why =
      errcode === "M_UNKNOWN_TOKEN" || errcode === "M_MISSING_TOKEN" || status === 401
        ? `the homeserver at ${url} refused the access token (${errcode ?? status}): check adapters.matrix.accessToken or MATRIX_ACCESS_TOKEN (a token stops working when its session is logged out; log in as the bot again for a new one)`
        : status === 404
          ? `${url} does not answer the Matrix Client-Server API (GET /_matrix/client/v3/account/whoami: 404): adapters.matrix.homeserverUrl must be the homeserver's base URL, the part before /_matrix`
          : status !== undefined
            ? `the homeserver at ${url} refused the login (${status}${errcode ? ` ${errcode}` : ""}: ${homeserverReason(error, this.#options.accessToken)})`
            : `could not reach the homeserver at ${url}: ${safe.message}`;
    return new PlatformError(MATRIX_PLATFORM, `matrix: ${why}`, { platformCode: errcode ?? null, cause: safe });
  }
}
