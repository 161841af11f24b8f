/**
 * A local fake of a Matrix homeserver for tests: one real HTTP server on 127.0.0.1 (random
 * port) answering the subset of the Client-Server API (spec v1.11) a bot uses, with the
 * documented JSON bodies (./fixtures). The REAL matrix-js-sdk talks to it as
 * `adapters.matrix.homeserverUrl`.
 *
 * Served (under `/_matrix/client/v3`, `r0` too): `GET /account/whoami`, `GET /capabilities`,
 * `GET /pushrules/`, `POST /user/{userId}/filter` (and `GET …/filter/{id}`), `GET /sync`,
 * `POST /join/{roomIdOrAlias}` and `POST /rooms/{roomId}/join`, `PUT
 * /rooms/{roomId}/send/{eventType}/{txnId}`, `PUT /rooms/{roomId}/typing/{userId}`, `GET
 * /rooms/{roomId}/joined_members`, `GET /rooms/{roomId}/state` (and `…/state/{type}/{key}`),
 * `GET /rooms/{roomId}/event/{eventId}`, `GET /joined_rooms`, `GET|PUT
 * /user/{userId}/account_data/{type}`; `GET /_matrix/client/versions` without a token.
 * Media (spec v1.11, "Content repository"): `GET
 * /_matrix/client/v1/media/download/{serverName}/{mediaId}` (authenticated: the token as for
 * any call) and the legacy unauthenticated `GET /_matrix/media/v3/download/{serverName}/{mediaId}`
 * serve what {@link FakeMatrixHomeserver.setMedia} stored (`Content-Type`, `Content-Length`,
 * `Content-Disposition`); an unknown file is 404 `M_NOT_FOUND`. With `authenticatedMedia:
 * false` the homeserver predates v1.11: the v1 endpoint answers 404 `M_UNRECOGNIZED`.
 * Anything else answers 404 `M_UNRECOGNIZED`, as a homeserver does.
 *
 * Behaviour as on a homeserver: a missing token gets 401 `M_MISSING_TOKEN`, a wrong one 401
 * `M_UNKNOWN_TOKEN`; every room event gets a stream position, and `/sync` answers what
 * happened after `since` (`next_batch` is the position as a string), long-polling up to
 * `timeout` ms when nothing is new. Without `since` it is an initial sync: the full state of
 * the joined rooms, their last `filter.room.timeline.limit` messages, pending invites and the
 * account data. A room the bot joined after `since` comes with its full state. Sending is
 * idempotent on the transaction id (the same `txnId` answers the first event id again) and
 * refused with 403 `M_FORBIDDEN` in a room the bot is not joined to (e.g. after
 * {@link FakeMatrixHomeserver.kick}); the bot's own events come back in `/sync` with
 * `unsigned.transaction_id`. Queued failures ({@link FakeMatrixHomeserver.failNext}) answer
 * first; one marked `apply` lets the request take effect and only replaces the answer (a lost
 * response).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitFor } from "../../support/wait-for.js";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture from ./fixtures (parsed JSON; a fresh copy each call). */
export function matrixFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), "utf8")) as T;
}

/** The ids of the seeded world. */
export const MATRIX_IDS = Object.freeze({
  server: "example.org",
  bot: "@threadline:example.org",
  alice: "@alice:example.org",
  bob: "@bob:example.org",
  carol: "@carol:example.org",
  /** A direct room of the bot and Alice (listed in the bot's `m.direct`). */
  dm: "!dm-alice:example.org",
  /** A group room "General" of the bot, Alice, Bob and Carol. */
  general: "!general:example.org",
  /** An end-to-end encrypted room of the bot, Alice and Bob. */
  secret: "!secret:example.org",
});

/** Display names of the seeded users. */
export const MATRIX_NAMES: Readonly<Record<string, string>> = Object.freeze({
  [MATRIX_IDS.bot]: "Threadline",
  [MATRIX_IDS.alice]: "Alice",
  [MATRIX_IDS.bob]: "Bob",
  [MATRIX_IDS.carol]: "Carol",
});

/** A room event as stored and served. */
export interface MatrixEvent {
  event_id: string;
  type: string;
  sender: string;
  room_id: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
  state_key?: string;
  unsigned?: Record<string, unknown>;
}

/** One API call the client made. */
export interface MatrixCall {
  method: string;
  /** The path after `/_matrix/client/v3` (decoded), or the full path for other prefixes. */
  path: string;
  query: URLSearchParams;
  body: Record<string, unknown> | null;
  status: number;
}

/** An event the bot sent (a successful PUT …/send/…). */
export interface SentMatrixEvent {
  roomId: string;
  eventId: string;
  txnId: string;
  type: string;
  content: Record<string, unknown>;
}

/** A failure to answer the next matching call(s) with. */
export interface MatrixFailure {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Let the request take effect first, then answer the failure (a lost response). */
  apply?: boolean;
}

/** Options of {@link startFakeMatrixHomeserver}. */
export interface FakeMatrixOptions {
  /** The access token it accepts (default a fixed fake token). */
  token?: string;
  /** The longest long-poll of `/sync`, in ms (default 30,000). */
  maxPollMs?: number;
  /** Whether the authenticated media API (v1.11) is served (default true). */
  authenticatedMedia?: boolean;
}

/** A request for a file's bytes. */
export interface MatrixMediaDownload {
  /** `v1`: the authenticated media API; `v3`: the legacy one. */
  api: "v1" | "v3";
  serverName: string;
  mediaId: string;
  /** Whether it came with the right access token. */
  authorized: boolean;
  status: number;
}

/** A running fake. */
export interface FakeMatrixHomeserver {
  /** The base URL to configure (`adapters.matrix.homeserverUrl`). */
  readonly url: string;
  readonly token: string;
  /** Every call, oldest first (a live array). */
  readonly calls: MatrixCall[];
  /** Every request for a file's bytes, oldest first (a live array). */
  readonly mediaDownloads: MatrixMediaDownload[];
  /** Stores a file served for `mxc://<server>/<mediaId>` (server default `example.org`); returns that URI. */
  setMedia(mediaId: string, bytes: Buffer, contentType: string, options?: { serverName?: string; fileName?: string }): string;
  /** Every event the bot sent, oldest first (a live array; a repeated txnId is not added again). */
  readonly sent: SentMatrixEvent[];
  /** Typing notifications: room, on/off and timeout (a live array). */
  readonly typing: Array<{ roomId: string; typing: boolean; timeout: number | null }>;
  /** The current stream position. */
  readonly position: number;
  /** Adds a message (`m.room.message`) from `sender`; `content` is merged over an `m.text` body. Returns its event id. */
  pushMessage(roomId: string, sender: string, content: Record<string, unknown> | string): string;
  /** Adds any room event (a state event when `state_key` is given). Returns its event id. */
  pushEvent(roomId: string, event: { type: string; sender: string; content: Record<string, unknown>; state_key?: string }): string;
  /** Creates a room with `members` joined (the first is the creator); the bot is joined only when listed. */
  createRoom(roomId: string, options: { name?: string; members: string[]; encrypted?: boolean }): void;
  /** Invites the bot to a new room created by `inviter` (`isDirect`: a DM invite). */
  invite(roomId: string, inviter: string, options?: { isDirect?: boolean; name?: string; members?: string[] }): void;
  /** `userId` (default the bot) leaves the room by a kick from `by`. */
  kick(roomId: string, by: string, userId?: string): void;
  /** Whether the bot is joined to the room. */
  joined(roomId: string): boolean;
  /** The content of the bot's account data of `type`, or null. */
  accountData(type: string): Record<string, unknown> | null;
  /** The next `count` calls of `method` whose path matches `path` fail with `failure`. */
  failNext(method: string, path: RegExp, failure: MatrixFailure, count?: number): void;
  callsOf(method: string, path: RegExp): MatrixCall[];
  /** Events the bot sent to one room, in order. */
  sentTo(roomId: string): SentMatrixEvent[];
  /** The `since` of every `/sync` call so far (null: an initial sync). */
  syncSinces(): Array<string | null>;
  waitFor<T>(check: () => T | null | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

interface Room {
  id: string;
  /** `type\u0000stateKey` → event. */
  state: Map<string, MatrixEvent>;
  /** Positions of the room's events, in order. */
  events: Array<{ pos: number; event: MatrixEvent }>;
}

interface Invite {
  pos: number;
  roomId: string;
  stripped: Array<Record<string, unknown>>;
}

const STATE_ONLY = new Set(["m.room.create", "m.room.member", "m.room.name", "m.room.encryption", "m.room.topic", "m.room.canonical_alias"]);

/** Starts a fake homeserver on 127.0.0.1 with the seeded rooms of {@link MATRIX_IDS}. */
export async function startFakeMatrixHomeserver(options: FakeMatrixOptions = {}): Promise<FakeMatrixHomeserver> {
  const token = options.token ?? "syt_dGhyZWFkbGluZQ_fakeMatrixAccessToken0123_4F2d9a";
  const maxPollMs = options.maxPollMs ?? 30_000;
  const calls: MatrixCall[] = [];
  const sent: SentMatrixEvent[] = [];
  const typing: Array<{ roomId: string; typing: boolean; timeout: number | null }> = [];
  const failures: Array<{ method: string; path: RegExp; failure: MatrixFailure }> = [];
  const rooms = new Map<string, Room>();
  const invites = new Map<string, Invite>();
  const accountData = new Map<string, { pos: number; event: Record<string, unknown> }>();
  const txns = new Map<string, string>();
  const filters = new Map<string, Record<string, unknown>>();
  const events = new Map<string, MatrixEvent>();
  let pos = 0;
  let eventCounter = 0;
  let waiters: Array<() => void> = [];
  let closed = false;
  const sockets = new Set<import("node:net").Socket>();
  const media = new Map<string, { bytes: Buffer; contentType: string; fileName: string | null }>();
  const mediaDownloads: MatrixMediaDownload[] = [];

  const bump = (): number => {
    pos += 1;
    const current = waiters;
    waiters = [];
    for (const wake of current) wake();
    return pos;
  };

  const room = (roomId: string): Room => {
    const found = rooms.get(roomId);
    if (found === undefined) throw new Error(`fake matrix: no room ${roomId}`);
    return found;
  };

  const membership = (roomId: string, userId: string): string | null => {
    const member = rooms.get(roomId)?.state.get(`m.room.member\u0000${userId}`);
    return (member?.content["membership"] as string | undefined) ?? null;
  };

  const addEvent = (
    roomId: string,
    partial: { type: string; sender: string; content: Record<string, unknown>; state_key?: string; unsigned?: Record<string, unknown> },
  ): MatrixEvent => {
    const target = room(roomId);
    eventCounter += 1;
    const event: MatrixEvent = {
      event_id: `$ev${eventCounter}-${Math.random().toString(36).slice(2, 8)}:${MATRIX_IDS.server}`,
      type: partial.type,
      sender: partial.sender,
      room_id: roomId,
      origin_server_ts: Date.now(),
      content: partial.content,
      ...(partial.state_key !== undefined ? { state_key: partial.state_key } : {}),
      unsigned: { age: 0, ...(partial.unsigned ?? {}) },
    };
    const p = bump();
    target.events.push({ pos: p, event });
    events.set(event.event_id, event);
    if (partial.state_key !== undefined) target.state.set(`${partial.type}\u0000${partial.state_key}`, event);
    return event;
  };

  const member = (roomId: string, userId: string, membershipValue: string, sender = userId, extra: Record<string, unknown> = {}): MatrixEvent => {
    const template = matrixFixture<Record<string, unknown>>("state-room-member");
    const content: Record<string, unknown> = { membership: membershipValue, ...extra };
    if (membershipValue === "join") content["displayname"] = MATRIX_NAMES[userId] ?? userId.slice(1).split(":")[0];
    return addEvent(roomId, { type: template["type"] as string, sender, content, state_key: userId });
  };

  const createRoom = (roomId: string, spec: { name?: string; members: string[]; encrypted?: boolean }): void => {
    if (rooms.has(roomId)) throw new Error(`fake matrix: room ${roomId} exists`);
    rooms.set(roomId, { id: roomId, state: new Map(), events: [] });
    const creator = spec.members[0] ?? MATRIX_IDS.alice;
    const create = matrixFixture<MatrixEvent>("state-room-create");
    addEvent(roomId, { type: create.type, sender: creator, content: { ...create.content, creator }, state_key: "" });
    for (const userId of spec.members) member(roomId, userId, "join");
    if (spec.name !== undefined) addEvent(roomId, { type: "m.room.name", sender: creator, content: { name: spec.name }, state_key: "" });
    if (spec.encrypted === true) {
      const encryption = matrixFixture<MatrixEvent>("state-room-encryption");
      addEvent(roomId, { type: encryption.type, sender: creator, content: encryption.content, state_key: "" });
    }
  };

  // The seeded world.
  createRoom(MATRIX_IDS.dm, { members: [MATRIX_IDS.alice, MATRIX_IDS.bot] });
  createRoom(MATRIX_IDS.general, { name: "General", members: [MATRIX_IDS.alice, MATRIX_IDS.bot, MATRIX_IDS.bob, MATRIX_IDS.carol] });
  const direct = matrixFixture<{ type: string; content: Record<string, unknown> }>("account-data-direct");
  accountData.set(direct.type, { pos: bump(), event: { type: direct.type, content: { [MATRIX_IDS.alice]: [MATRIX_IDS.dm] } } });

  const joinedRooms = (): string[] => [...rooms.keys()].filter((id) => membership(id, MATRIX_IDS.bot) === "join");

  const stripped = (event: MatrixEvent): Record<string, unknown> => ({
    type: event.type,
    state_key: event.state_key,
    sender: event.sender,
    content: event.content,
  });

  /** The position of the bot's latest membership change in a room. */
  const botMembershipPos = (target: Room): number => {
    for (let i = target.events.length - 1; i >= 0; i -= 1) {
      const { pos: p, event } = target.events[i]!;
      if (event.type === "m.room.member" && event.state_key === MATRIX_IDS.bot) return p;
    }
    return 0;
  };

  const timelineLimit = (filterParam: string | null): number => {
    if (filterParam === null) return 10;
    let filter: Record<string, unknown> | undefined;
    if (filterParam.startsWith("{")) {
      try {
        filter = JSON.parse(filterParam) as Record<string, unknown>;
      } catch {
        filter = undefined;
      }
    } else {
      filter = filters.get(filterParam);
    }
    const limit = ((filter?.["room"] as Record<string, unknown> | undefined)?.["timeline"] as Record<string, unknown> | undefined)?.["limit"];
    return typeof limit === "number" ? limit : 10;
  };

  const syncResponse = (since: number | null, limit: number): Record<string, unknown> => {
    const response = matrixFixture<Record<string, unknown>>("sync-empty");
    response["next_batch"] = String(pos);
    const roomsOut = response["rooms"] as Record<string, Record<string, unknown>>;
    for (const roomId of joinedRooms()) {
      const target = room(roomId);
      const joinedAt = botMembershipPos(target);
      const fresh = since === null || joinedAt > since;
      const after = target.events.filter((e) => since === null || e.pos > since);
      let timeline: MatrixEvent[];
      let limited = false;
      if (fresh) {
        const messages = target.events.filter((e) => e.event.state_key === undefined && !STATE_ONLY.has(e.event.type) && (since === null || e.pos > since));
        timeline = messages.slice(Math.max(0, messages.length - limit)).map((e) => e.event);
        limited = messages.length > timeline.length;
      } else {
        timeline = after.map((e) => e.event);
      }
      if (!fresh && timeline.length === 0) continue;
      const state = fresh ? [...target.state.values()] : [];
      roomsOut["join"]![roomId] = {
        account_data: { events: [] },
        ephemeral: { events: [] },
        state: { events: state },
        summary: {},
        timeline: { events: timeline, limited, prev_batch: `p${since ?? 0}` },
        unread_notifications: { highlight_count: 0, notification_count: 0 },
      };
    }
    for (const invite of invites.values()) {
      if (membership(invite.roomId, MATRIX_IDS.bot) !== "invite") continue;
      if (since !== null && invite.pos <= since) continue;
      roomsOut["invite"]![invite.roomId] = { invite_state: { events: invite.stripped } };
    }
    for (const target of rooms.values()) {
      const state = membership(target.id, MATRIX_IDS.bot);
      if (since === null || (state !== "leave" && state !== "ban")) continue;
      if (botMembershipPos(target) <= since) continue;
      roomsOut["leave"]![target.id] = {
        state: { events: [] },
        timeline: { events: target.events.filter((e) => e.pos > since).map((e) => e.event), limited: false },
      };
    }
    const data = [...accountData.values()].filter((a) => since === null || a.pos > since).map((a) => a.event);
    (response["account_data"] as { events: unknown[] }).events = data;
    return response;
  };

  const hasNews = (since: number): boolean => since < pos;

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };

  const http = createServer((req, res) => void handle(req, res));
  http.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://x");
    const match = /^\/_matrix\/client\/(?:v3|r0)(\/.*)$/u.exec(url.pathname);
    const rawPath = match?.[1] ?? url.pathname;
    const segments = rawPath.split("/").map((s) => decodeURIComponent(s));
    const path = segments.join("/");
    let body: Record<string, unknown> | null = null;
    if (text !== "") {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { raw: text };
      }
    }
    const call: MatrixCall = { method, path, query: url.searchParams, body, status: 0 };
    calls.push(call);
    const answer = (status: number, payload: unknown, headers?: Record<string, string>): void => {
      call.status = status;
      reply(res, status, payload, headers);
    };
    if (method === "GET" && url.pathname === "/_matrix/client/versions") return answer(200, matrixFixture("versions"));
    const auth = req.headers.authorization;
    const given = auth?.startsWith("Bearer ") ? auth.slice(7) : url.searchParams.get("access_token");
    const download = /^\/_matrix\/(client\/v1\/media|media\/v3)\/download\/([^/]+)\/([^/]+)(?:\/[^/]+)?$/u.exec(url.pathname);
    if (method === "GET" && download !== null) {
      const api = download[1] === "media/v3" ? "v3" : "v1";
      const record = (status: number): void => {
        mediaDownloads.push({
          api,
          serverName: decodeURIComponent(download[2]!),
          mediaId: decodeURIComponent(download[3]!),
          authorized: given === token,
          status,
        });
      };
      if (api === "v1" && options.authenticatedMedia === false) {
        record(404);
        return answer(404, matrixFixture("error-unrecognized"));
      }
      if (api === "v1" && (given === null || given === undefined || given !== token)) {
        record(401);
        return answer(401, matrixFixture(given ? "error-unknown-token" : "error-missing-token"));
      }
      const file = media.get(`${decodeURIComponent(download[2]!)}/${decodeURIComponent(download[3]!)}`);
      if (file === undefined) {
        record(404);
        return answer(404, matrixFixture("error-media-not-found"));
      }
      record(200);
      call.status = 200;
      res
        .writeHead(200, {
          "content-type": file.contentType,
          "content-length": String(file.bytes.length),
          "content-disposition": file.fileName === null ? "inline" : `inline; filename=${encodeURIComponent(file.fileName)}`,
          "content-security-policy":
            "sandbox; default-src 'none'; script-src 'none'; plugin-types application/pdf; style-src 'unsafe-inline'; object-src 'self';",
        })
        .end(file.bytes);
      return;
    }
    if (match === null) return answer(404, matrixFixture("error-unrecognized"));
    if (given === null || given === undefined) return answer(401, matrixFixture("error-missing-token"));
    if (given !== token) return answer(401, matrixFixture("error-unknown-token"));

    const failureIndex = failures.findIndex((f) => f.method === method && f.path.test(path));
    let lateFailure: MatrixFailure | null = null;
    if (failureIndex >= 0) {
      const { failure } = failures.splice(failureIndex, 1)[0]!;
      if (failure.apply === true) lateFailure = failure;
      else return answer(failure.status, failure.body, failure.headers);
    }
    const respond = (status: number, payload: unknown, headers?: Record<string, string>): void => {
      if (lateFailure !== null) answer(lateFailure.status, lateFailure.body, lateFailure.headers);
      else answer(status, payload, headers);
    };
    const notInRoom = (roomId: string): boolean => membership(roomId, MATRIX_IDS.bot) !== "join";
    const forbidden = (roomId: string): void =>
      respond(403, { ...matrixFixture<Record<string, unknown>>("error-forbidden"), error: `User ${MATRIX_IDS.bot} not in room ${roomId}` });
    let m: RegExpExecArray | null;

    if (method === "GET" && path === "/account/whoami") return respond(200, { ...matrixFixture<Record<string, unknown>>("whoami"), user_id: MATRIX_IDS.bot });
    if (method === "GET" && path === "/capabilities") return respond(200, matrixFixture("capabilities"));
    if (method === "GET" && (path === "/pushrules/" || path === "/pushrules")) return respond(200, matrixFixture("pushrules"));
    if ((m = /^\/user\/([^/]+)\/filter(?:\/([^/]+))?$/u.exec(path)) !== null) {
      if (m[1] !== MATRIX_IDS.bot) return respond(403, { errcode: "M_FORBIDDEN", error: "Cannot create filters for other users" });
      if (method === "POST" && m[2] === undefined) {
        const id = String(filters.size + 1);
        filters.set(id, body ?? {});
        return respond(200, { ...matrixFixture<Record<string, unknown>>("filter-created"), filter_id: id });
      }
      if (method === "GET" && m[2] !== undefined) {
        const filter = filters.get(m[2]);
        return filter === undefined ? respond(404, { errcode: "M_NOT_FOUND", error: "No such filter" }) : respond(200, filter);
      }
    }
    if ((m = /^\/user\/([^/]+)\/account_data\/([^/]+)$/u.exec(path)) !== null) {
      if (m[1] !== MATRIX_IDS.bot) return respond(403, { errcode: "M_FORBIDDEN", error: "Cannot access other users' account data" });
      if (method === "GET") {
        const data = accountData.get(m[2]!);
        return data === undefined ? respond(404, { errcode: "M_NOT_FOUND", error: "Account data not found" }) : respond(200, data.event["content"]);
      }
      if (method === "PUT") {
        accountData.set(m[2]!, { pos: bump(), event: { type: m[2], content: body ?? {} } });
        return respond(200, {});
      }
    }
    if (method === "GET" && path === "/sync") {
      const sinceParam = url.searchParams.get("since");
      const since = sinceParam === null ? null : Number(sinceParam);
      if (since !== null && !Number.isSafeInteger(since)) return respond(400, { errcode: "M_INVALID_PARAM", error: "Invalid since token" });
      const timeout = Math.min(Number(url.searchParams.get("timeout") ?? "0") || 0, maxPollMs);
      if (since !== null && !hasNews(since) && timeout > 0 && !closed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeout);
          const wake = (): void => {
            clearTimeout(timer);
            resolve();
          };
          waiters.push(wake);
          res.once("close", wake);
        });
      }
      if (res.destroyed) return;
      return respond(200, syncResponse(since, timelineLimit(url.searchParams.get("filter"))));
    }
    if (method === "GET" && path === "/joined_rooms")
      return respond(200, { ...matrixFixture<Record<string, unknown>>("joined-rooms"), joined_rooms: joinedRooms() });
    if (method === "POST" && ((m = /^\/join\/([^/]+)$/u.exec(path)) !== null || (m = /^\/rooms\/([^/]+)\/join$/u.exec(path)) !== null)) {
      const roomId = m[1]!;
      const state = rooms.has(roomId) ? membership(roomId, MATRIX_IDS.bot) : null;
      if (state === "join") return respond(200, { ...matrixFixture<Record<string, unknown>>("join-response"), room_id: roomId });
      if (state !== "invite") return respond(403, { errcode: "M_FORBIDDEN", error: "You are not invited to this room." });
      member(roomId, MATRIX_IDS.bot, "join");
      return respond(200, { ...matrixFixture<Record<string, unknown>>("join-response"), room_id: roomId });
    }
    if (method === "PUT" && (m = /^\/rooms\/([^/]+)\/send\/([^/]+)\/([^/]+)$/u.exec(path)) !== null) {
      const [, roomId, type, txnId] = m as unknown as [string, string, string, string];
      const previous = txns.get(txnId);
      if (previous !== undefined) return respond(200, { event_id: previous });
      if (!rooms.has(roomId) || notInRoom(roomId)) return forbidden(roomId);
      const event = addEvent(roomId, { type, sender: MATRIX_IDS.bot, content: body ?? {}, unsigned: { transaction_id: txnId } });
      txns.set(txnId, event.event_id);
      sent.push({ roomId, eventId: event.event_id, txnId, type, content: body ?? {} });
      return respond(200, { ...matrixFixture<Record<string, unknown>>("send-response"), event_id: event.event_id });
    }
    if (method === "PUT" && (m = /^\/rooms\/([^/]+)\/typing\/([^/]+)$/u.exec(path)) !== null) {
      const roomId = m[1]!;
      if (m[2] !== MATRIX_IDS.bot) return respond(403, { errcode: "M_FORBIDDEN", error: "Cannot set another user's typing state" });
      if (!rooms.has(roomId) || notInRoom(roomId)) return forbidden(roomId);
      typing.push({ roomId, typing: body?.["typing"] === true, timeout: typeof body?.["timeout"] === "number" ? (body["timeout"] as number) : null });
      return respond(200, {});
    }
    if (method === "GET" && (m = /^\/rooms\/([^/]+)\/joined_members$/u.exec(path)) !== null) {
      const roomId = m[1]!;
      if (!rooms.has(roomId) || notInRoom(roomId)) return forbidden(roomId);
      const joined: Record<string, unknown> = {};
      for (const event of room(roomId).state.values()) {
        if (event.type === "m.room.member" && event.content["membership"] === "join")
          joined[event.state_key!] = { display_name: event.content["displayname"] ?? null, avatar_url: null };
      }
      return respond(200, { joined });
    }
    if (method === "GET" && (m = /^\/rooms\/([^/]+)\/state(?:\/([^/]+)(?:\/([^/]*))?)?$/u.exec(path)) !== null) {
      const roomId = m[1]!;
      if (!rooms.has(roomId) || notInRoom(roomId)) return forbidden(roomId);
      const target = room(roomId);
      if (m[2] === undefined) return respond(200, [...target.state.values()]);
      const event = target.state.get(`${m[2]}\u0000${m[3] ?? ""}`);
      return event === undefined ? respond(404, { errcode: "M_NOT_FOUND", error: "Event not found." }) : respond(200, event.content);
    }
    if (method === "GET" && (m = /^\/rooms\/([^/]+)\/event\/([^/]+)$/u.exec(path)) !== null) {
      const roomId = m[1]!;
      if (!rooms.has(roomId) || notInRoom(roomId)) return forbidden(roomId);
      const event = events.get(m[2]!);
      return event === undefined || event.room_id !== roomId ? respond(404, matrixFixture("error-not-found")) : respond(200, event);
    }
    respond(404, matrixFixture("error-unrecognized"));
  }

  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  return {
    url: base,
    token,
    calls,
    sent,
    typing,
    mediaDownloads,
    setMedia(mediaId, bytes, contentType, spec = {}) {
      const serverName = spec.serverName ?? MATRIX_IDS.server;
      media.set(`${serverName}/${mediaId}`, { bytes, contentType, fileName: spec.fileName ?? null });
      return `mxc://${serverName}/${mediaId}`;
    },
    get position() {
      return pos;
    },
    pushMessage(roomId, sender, content) {
      const template = matrixFixture<MatrixEvent>("event-message-text");
      const { format: _format, formatted_body: _html, ...plain } = template.content;
      return addEvent(roomId, { type: template.type, sender, content: { ...plain, ...(typeof content === "string" ? { body: content } : content) } }).event_id;
    },
    pushEvent(roomId, event) {
      return addEvent(roomId, event).event_id;
    },
    createRoom,
    invite(roomId, inviter, spec = {}) {
      if (!rooms.has(roomId)) createRoom(roomId, { members: spec.members ?? [inviter], ...(spec.name !== undefined ? { name: spec.name } : {}) });
      const template = matrixFixture<Record<string, unknown>>("invite-state-member");
      const extra: Record<string, unknown> = spec.isDirect === true ? { is_direct: true } : {};
      const event = member(roomId, MATRIX_IDS.bot, "invite", inviter, { ...(template["content"] as object), ...extra, membership: "invite" });
      if (spec.isDirect !== true) delete event.content["is_direct"];
      const target = room(roomId);
      const strippedState = [...target.state.values()].filter((e) => e.type !== "m.room.member" || e.state_key === inviter).map(stripped);
      strippedState.push(stripped(event));
      invites.set(roomId, { pos, roomId, stripped: strippedState });
    },
    kick(roomId, by, userId = MATRIX_IDS.bot) {
      member(roomId, userId, "leave", by, { reason: "kicked by a test" });
    },
    joined(roomId) {
      return membership(roomId, MATRIX_IDS.bot) === "join";
    },
    accountData(type) {
      return (accountData.get(type)?.event["content"] as Record<string, unknown> | undefined) ?? null;
    },
    failNext(method, path, failure, count = 1) {
      for (let i = 0; i < count; i += 1) failures.push({ method, path, failure });
    },
    callsOf(method, path) {
      return calls.filter((c) => c.method === method && path.test(c.path));
    },
    sentTo(roomId) {
      return sent.filter((s) => s.roomId === roomId);
    },
    syncSinces() {
      return calls.filter((c) => c.method === "GET" && c.path === "/sync").map((c) => c.query.get("since"));
    },
    waitFor(check, what, timeoutMs = 20_000) {
      return waitFor(check, {
        what,
        timeoutMs,
        describe: () => `fake matrix: calls: ${JSON.stringify(calls.slice(-40).map((c) => `${c.method} ${c.path} ${c.status}`))}`,
      });
    },
    async close() {
      closed = true;
      for (const wake of waiters) wake();
      waiters = [];
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
