/**
 * A local fake of Discord for tests: one real HTTP server on 127.0.0.1 (random port) that
 * answers the REST API v10 under `/api/v10/…` with the documented JSON bodies, and a gateway
 * WebSocket (the `ws` package) at `/gateway`, speaking the documented opcodes with JSON
 * encoding and no compression (what discord.js asks for when `zlib-sync` is not installed;
 * a connection asking for `compress` or another encoding is closed with 4002 Decode error).
 * The REAL discord.js talks to it through `rest.api` (`adapters.discord.apiUrl`); its
 * `GET /gateway/bot` names the fake's gateway (or `advertisedGatewayUrl`).
 *
 * REST: GET /gateway/bot, GET /users/@me, GET /applications/@me, GET /channels/{id},
 * POST /channels/{id}/messages (content ≤ 2,000 characters, else 400 50035), PATCH
 * /channels/{id}/messages/{id}, POST /channels/{id}/typing, POST /channels/{id}/threads and
 * /channels/{id}/messages/{id}/threads. A wrong `Authorization: Bot <token>` gets 401; queued
 * failures ({@link FakeDiscordServer.failNext}, e.g. 429 with `Retry-After`) answer first.
 *
 * CDN: `GET /attachments/{channel}/{attachment}/{filename}?ex=…&is=…&hm=…` serves the bytes of
 * an attachment the test registered ({@link FakeDiscordServer.addAttachment}); like Discord's
 * CDN it needs no token, and a URL without the right signature (`hm`) is 404 "This content is
 * no longer available.". Configure `adapters.discord.cdnUrl` as {@link FakeDiscordServer.cdnUrl}.
 *
 * Gateway: HELLO (op 10) → IDENTIFY (op 2, token and intents checked: 4004 for a wrong token,
 * 4014 for the Message Content intent when the application lacks it) → READY and GUILD_CREATE
 * dispatches; HEARTBEAT (op 1) → HEARTBEAT_ACK (op 11); dispatches carry increasing sequence
 * numbers and are kept per session; after {@link FakeDiscordServer.dropConnection} a RESUME
 * (op 6) replays every event after the client's `seq`, then RESUMED. Without the Message
 * Content intent, guild messages that do not mention the bot arrive with empty content, as on
 * Discord. Messages the bot sends are dispatched back to it as MESSAGE_CREATE, as Discord does.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { waitFor } from "../../support/wait-for.js";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture from ./fixtures (parsed JSON; a fresh copy each call). */
export function discordFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), "utf8")) as T;
}

/** The ids of the fixtures. */
export const DISCORD_IDS = Object.freeze({
  bot: "1100000000000000001",
  guild: "1200000000000000001",
  general: "1200000000000000010",
  thread: "1200000000000000020",
  dm: "1300000000000000001",
  alice: "1400000000000000001",
  dan: "1400000000000000002",
  otherBot: "1400000000000000009",
});

/** The Message Content intent bit of IDENTIFY's `intents`. */
const MESSAGE_CONTENT_INTENT = 1 << 15;

/**
 * A MESSAGE_CREATE payload from a fixture with fields replaced: `id`, `content`, `author`
 * (merged), `channel_id`, and any other top-level fields. A content that no longer mentions
 * the bot drops the bot from `mentions`.
 */
export function discordMessage(
  fixture: string,
  overrides: { id?: string; content?: string; author?: Record<string, unknown>; [field: string]: unknown } = {},
): Record<string, unknown> {
  const message = discordFixture(fixture);
  const { author, ...rest } = overrides;
  if (author !== undefined) message["author"] = { ...(message["author"] as object), ...author };
  Object.assign(message, rest);
  if (typeof overrides.content === "string" && !overrides.content.includes(`<@${DISCORD_IDS.bot}>`) && overrides["mentions"] === undefined) {
    message["mentions"] = (message["mentions"] as Array<{ id: string }>).filter((m) => m.id !== DISCORD_IDS.bot);
  }
  return message;
}

/** One REST call the bot made. */
export interface DiscordCall {
  method: string;
  /** The path after `/api/v10`. */
  path: string;
  body: Record<string, unknown> | null;
  status: number;
}

/** A message the bot sent (a successful POST /channels/{id}/messages), with its current content. */
export interface SentDiscordMessage {
  id: string;
  channel_id: string;
  content: string;
  /** `message_reference.message_id`, or null. */
  reply_to: string | null;
  allowed_mentions: unknown;
}

/** One payload the client sent on the gateway. */
export interface GatewayOp {
  /** Which connection (1, 2, …). */
  connection: number;
  op: number;
  d: unknown;
}

/** A failure to answer the next matching call(s) with. */
export interface DiscordFailure {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Options of {@link startFakeDiscordServer}. */
export interface FakeDiscordOptions {
  /** The token it accepts (default a fixed fake token). */
  token?: string;
  /** Whether the application has the Message Content intent (default true). */
  messageContent?: boolean;
  /** HELLO's heartbeat interval in ms (default 41,250 as on Discord). */
  heartbeatIntervalMs?: number;
  /** The URL GET /gateway/bot names (default the fake's own gateway). */
  advertisedGatewayUrl?: string;
  /**
   * Keep every identified session of the token and send each event to all of them, as Discord
   * does for several connections of one bot (several gateway replicas). Default false: a new
   * connection replaces the previous one.
   */
  everySession?: boolean;
}

/** An attachment object (Discord's `attachment`), as it goes into a MESSAGE_CREATE's `attachments`. */
export type DiscordAttachmentObject = Record<string, unknown> & { id: string; filename: string; url: string; proxy_url: string; size: number };

/** A running fake. */
export interface FakeDiscordServer {
  /** The REST base to configure (`adapters.discord.apiUrl`), `http://127.0.0.1:<port>/api`. */
  readonly url: string;
  /** The gateway, `ws://127.0.0.1:<port>/gateway`. */
  readonly gatewayUrl: string;
  /** The CDN base to configure (`adapters.discord.cdnUrl`), `http://127.0.0.1:<port>`. */
  readonly cdnUrl: string;
  /**
   * Registers an attachment whose signed CDN URL (on this fake) serves exactly `bytes`; returns
   * the attachment object for a message's `attachments`. `voice`: a voice message's recording
   * (`duration_secs`, `waveform`; give the message `flags: 8192`).
   */
  addAttachment(
    bytes: Uint8Array,
    options?: { filename?: string; contentType?: string; channelId?: string; voice?: boolean; width?: number; height?: number },
  ): DiscordAttachmentObject;
  /** How many times an attachment's bytes were served. */
  downloads(attachmentId: string): number;
  readonly token: string;
  /** Every REST call, oldest first (a live array). */
  readonly calls: DiscordCall[];
  /** Every message the bot sent, oldest first (a live array). */
  readonly sent: SentDiscordMessage[];
  /** Every gateway payload the client sent (a live array). */
  readonly gatewayOps: GatewayOp[];
  /** The query strings the gateway connections were opened with. */
  readonly connectionQueries: URLSearchParams[];
  /** Whether a client is connected and identified or resumed. */
  readonly connected: boolean;
  /** With `everySession`: how many sessions have a connection now (otherwise 0 or 1). */
  readonly connectedSessions: number;
  /** Dispatches an event to the current session (kept for a RESUME when no connection is open); returns its sequence number. */
  dispatch(type: string, data: Record<string, unknown>): number;
  /** Dispatches MESSAGE_CREATE (built with {@link discordMessage}). */
  pushMessage(message: Record<string, unknown>): number;
  /** Drops the gateway connection without a close frame (the client sees 1006 and resumes). */
  dropConnection(): void;
  /** The next `count` calls of `method` whose path matches `path` fail with `failure`. */
  failNext(method: string, path: RegExp, failure: DiscordFailure, count?: number): void;
  callsOf(method: string, path: RegExp): DiscordCall[];
  /** Messages the bot sent to one channel, in order. */
  sentTo(channelId: string): SentDiscordMessage[];
  /** How many typing calls a channel got. */
  typingIn(channelId: string): number;
  /** Threads created by the bot (channel objects). */
  readonly threads: Array<Record<string, unknown>>;
  waitFor<T>(check: () => T | null | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

interface Session {
  id: string;
  seq: number;
  events: Array<{ s: number; t: string; d: Record<string, unknown> }>;
  intents: number;
}

/** Starts a fake Discord on 127.0.0.1. */
export async function startFakeDiscordServer(options: FakeDiscordOptions = {}): Promise<FakeDiscordServer> {
  const token = options.token ?? "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GfakeX.fake-discord-token_0123456789abcdefghij";
  const messageContent = options.messageContent ?? true;
  const me = discordFixture<Record<string, unknown>>("user-me");
  const calls: DiscordCall[] = [];
  const sent: SentDiscordMessage[] = [];
  const gatewayOps: GatewayOp[] = [];
  const connectionQueries: URLSearchParams[] = [];
  const threads: Array<Record<string, unknown>> = [];
  const failures: Array<{ method: string; path: RegExp; failure: DiscordFailure }> = [];
  const guild = discordFixture<Record<string, unknown>>("guild-create");
  const channels = new Map<string, Record<string, unknown>>();
  for (const c of [...(guild["channels"] as Array<Record<string, unknown>>), ...(guild["threads"] as Array<Record<string, unknown>>)]) {
    channels.set(String(c["id"]), { ...c, guild_id: guild["id"] });
  }
  channels.set(DISCORD_IDS.dm, {
    id: DISCORD_IDS.dm,
    type: 1,
    last_message_id: null,
    recipients: [discordFixture<Record<string, unknown>>("message-dm")["author"]],
  });
  let nextId = 1_700_000_000_000_000_000n;
  const snowflake = (): string => String((nextId += 1n));
  let session: Session | null = null;
  let socket: WebSocket | null = null;
  let ready = false;
  /** With `everySession`: every identified session and its connection (null while it has none). */
  const everySession = options.everySession === true;
  const links: Array<{ session: Session; ws: WebSocket | null }> = [];
  let connections = 0;
  let base = "";
  const attachments = new Map<string, { bytes: Uint8Array; contentType: string; path: string; hm: string; downloads: number }>();

  const send = (ws: WebSocket, payload: Record<string, unknown>): void => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(payload));
  };
  const dispatchTo = (link: { session: Session; ws: WebSocket | null }, t: string, d: Record<string, unknown>): number => {
    const s = ++link.session.seq;
    link.session.events.push({ s, t, d });
    if (link.ws !== null) send(link.ws, { op: 0, t, s, d });
    return s;
  };
  const dispatch = (t: string, d: Record<string, unknown>): number => {
    if (session === null) throw new Error("fake discord: no gateway session yet (the bot has not identified)");
    if (everySession) return Math.max(...links.map((link) => dispatchTo(link, t, d)));
    const s = ++session.seq;
    session.events.push({ s, t, d });
    if (socket !== null && ready) send(socket, { op: 0, t, s, d });
    return s;
  };
  const withoutContentIntent = (d: Record<string, unknown>): Record<string, unknown> => {
    if (session === null || (session.intents & MESSAGE_CONTENT_INTENT) !== 0 || d["guild_id"] === undefined) return d;
    const author = d["author"] as { id?: string } | undefined;
    const mentioned = (d["mentions"] as Array<{ id: string }> | undefined)?.some((m) => m.id === DISCORD_IDS.bot) ?? false;
    if (author?.id === DISCORD_IDS.bot || mentioned) return d;
    return { ...d, content: "", attachments: [], embeds: [] };
  };

  const http = createServer((req, res) => void handle(req, res));
  const wss = new WebSocketServer({ server: http, path: "/gateway" });
  wss.on("connection", (ws, req) => {
    connections += 1;
    const connection = connections;
    const query = new URL(req.url ?? "/", "http://x").searchParams;
    connectionQueries.push(query);
    if (query.get("encoding") !== "json" || query.has("compress") || query.get("v") !== "10") {
      ws.close(4002, "Decode error: the fake speaks v10 JSON without compression");
      return;
    }
    if (!everySession) socket?.terminate();
    socket = ws;
    ready = false;
    send(ws, { op: 10, d: { heartbeat_interval: options.heartbeatIntervalMs ?? 41_250 }, s: null, t: null });
    ws.on("message", (raw) => {
      const payload = JSON.parse(String(raw)) as { op: number; d: Record<string, unknown> & { seq?: number } };
      gatewayOps.push({ connection, op: payload.op, d: payload.d });
      if (payload.op === 1) {
        send(ws, { op: 11 });
      } else if (payload.op === 2) {
        const d = payload.d;
        if (d["token"] !== token) return ws.close(4004, "Authentication failed.");
        const intents = Number(d["intents"]);
        if ((intents & MESSAGE_CONTENT_INTENT) !== 0 && !messageContent) return ws.close(4014, "Disallowed intent(s).");
        session = { id: `fake-session-${connection}`, seq: 0, events: [], intents };
        ready = true;
        const readyPayload = discordFixture<Record<string, unknown>>("ready");
        readyPayload["session_id"] = session.id;
        readyPayload["resume_gateway_url"] = `${base.replace(/^http/u, "ws")}/gateway`;
        readyPayload["application"] = { id: DISCORD_IDS.bot, flags: messageContent ? 1 << 18 : 0 };
        if (everySession) {
          // READY and GUILD_CREATE go to the new session only.
          const link = { session, ws };
          links.push(link);
          dispatchTo(link, "READY", readyPayload);
          dispatchTo(link, "GUILD_CREATE", { ...guild, threads: [...(guild["threads"] as unknown[]), ...threads] });
          return;
        }
        dispatch("READY", readyPayload);
        dispatch("GUILD_CREATE", { ...guild, threads: [...(guild["threads"] as unknown[]), ...threads] });
      } else if (payload.op === 6) {
        const d = payload.d;
        if (d["token"] !== token) return ws.close(4004, "Authentication failed.");
        const link = everySession ? links.find((l) => l.session.id === d["session_id"]) : undefined;
        if (everySession) {
          if (link === undefined) return send(ws, { op: 9, d: false, s: null, t: null });
          link.ws = ws;
          ready = true;
          for (const event of link.session.events.filter((e) => e.s > Number(d["seq"] ?? 0))) send(ws, { op: 0, t: event.t, s: event.s, d: event.d });
          dispatchTo(link, "RESUMED", {});
          return;
        }
        if (session === null || d["session_id"] !== session.id) return send(ws, { op: 9, d: false, s: null, t: null });
        const from = Number(d["seq"] ?? 0);
        ready = true;
        for (const event of session.events.filter((e) => e.s > from)) send(ws, { op: 0, t: event.t, s: event.s, d: event.d });
        dispatch("RESUMED", {});
      }
    });
    ws.on("close", () => {
      for (const link of links) if (link.ws === ws) link.ws = null;
      if (socket === ws) {
        socket = null;
        ready = false;
      }
    });
  });

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(body === null ? undefined : JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname.startsWith("/attachments/")) {
      const m = /^\/attachments\/\d+\/(\d+)\/[^/]+$/u.exec(url.pathname);
      const stored = m === null ? undefined : attachments.get(m[1]!);
      if (stored === undefined || method !== "GET" || stored.path !== url.pathname || url.searchParams.get("hm") !== stored.hm) {
        res.writeHead(404, { "content-type": "text/plain" }).end("This content is no longer available.");
        return;
      }
      stored.downloads += 1;
      res.writeHead(200, { "content-type": stored.contentType, "content-length": String(stored.bytes.length) }).end(Buffer.from(stored.bytes));
      return;
    }
    const match = /^\/api\/v10(\/.*)$/u.exec(url.pathname);
    const path = match?.[1] ?? url.pathname;
    let body: Record<string, unknown> | null = null;
    if (text !== "") {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { raw: text };
      }
    }
    const record = (status: number): void => {
      calls.push({ method, path, body, status });
    };
    const answer = (status: number, payload: unknown, headers?: Record<string, string>): void => {
      record(status);
      reply(res, status, payload, headers);
    };
    if (match === null) return answer(404, { message: "404: Not Found", code: 0 });
    if (req.headers.authorization !== `Bot ${token}`) return answer(401, discordFixture("error-401"));
    const failureIndex = failures.findIndex((f) => f.method === method && f.path.test(path));
    if (failureIndex >= 0) {
      const { failure } = failures.splice(failureIndex, 1)[0]!;
      return answer(failure.status, failure.body, failure.headers);
    }
    let m: RegExpExecArray | null;
    if (method === "GET" && path === "/gateway/bot") {
      return answer(200, {
        ...discordFixture<Record<string, unknown>>("gateway-bot"),
        url: options.advertisedGatewayUrl ?? `${base.replace(/^http/u, "ws")}/gateway`,
      });
    }
    if (method === "GET" && path === "/users/@me") return answer(200, me);
    if (method === "GET" && path === "/applications/@me")
      return answer(200, { ...discordFixture<Record<string, unknown>>("application-me"), flags: messageContent ? 1 << 18 : 0 });
    if (method === "GET" && (m = /^\/channels\/(\d+)$/u.exec(path)) !== null) {
      const channel = channels.get(m[1]!);
      return channel === undefined ? answer(404, discordFixture("error-10003-unknown-channel")) : answer(200, channel);
    }
    if (method === "POST" && (m = /^\/channels\/(\d+)\/typing$/u.exec(path)) !== null) {
      return channels.has(m[1]!) ? answer(204, null) : answer(404, discordFixture("error-10003-unknown-channel"));
    }
    if (method === "POST" && (m = /^\/channels\/(\d+)\/messages$/u.exec(path)) !== null) {
      const channelId = m[1]!;
      const channel = channels.get(channelId);
      if (channel === undefined) return answer(404, discordFixture("error-10003-unknown-channel"));
      const content = typeof body?.["content"] === "string" ? (body["content"] as string) : "";
      if (content.length > 2000) return answer(400, discordFixture("error-50035-too-long"));
      if (content.trim() === "") return answer(400, { message: "Cannot send an empty message", code: 50006 });
      const reference = body?.["message_reference"] as { message_id?: string } | undefined;
      const id = snowflake();
      sent.push({ id, channel_id: channelId, content, reply_to: reference?.message_id ?? null, allowed_mentions: body?.["allowed_mentions"] ?? null });
      const message = {
        id,
        type: reference ? 19 : 0,
        channel_id: channelId,
        ...(channel["guild_id"] !== undefined ? { guild_id: channel["guild_id"] } : {}),
        author: me,
        content,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: [],
        mention_roles: [],
        attachments: [],
        embeds: [],
        pinned: false,
        flags: 0,
        ...(reference ? { message_reference: { message_id: reference.message_id, channel_id: channelId } } : {}),
      };
      answer(200, message);
      // Discord sends the bot its own messages too.
      if (session !== null) dispatch("MESSAGE_CREATE", message);
      return;
    }
    if (method === "PATCH" && (m = /^\/channels\/(\d+)\/messages\/(\d+)$/u.exec(path)) !== null) {
      const target = sent.find((s) => s.id === m![2] && s.channel_id === m![1]);
      if (target === undefined) return answer(404, { message: "Unknown Message", code: 10008 });
      target.content = String(body?.["content"] ?? "");
      return answer(200, { id: target.id, channel_id: target.channel_id, content: target.content, author: me });
    }
    if (method === "POST" && (m = /^\/channels\/(\d+)(?:\/messages\/(\d+))?\/threads$/u.exec(path)) !== null) {
      const parent = channels.get(m[1]!);
      if (parent === undefined || parent["guild_id"] === undefined) return answer(404, discordFixture("error-10003-unknown-channel"));
      const thread: Record<string, unknown> = {
        id: m[2] ?? snowflake(),
        type: Number(body?.["type"] ?? 11),
        guild_id: parent["guild_id"],
        parent_id: parent["id"],
        owner_id: DISCORD_IDS.bot,
        name: String(body?.["name"] ?? "thread"),
        last_message_id: null,
        rate_limit_per_user: 0,
        message_count: 0,
        member_count: 1,
        thread_metadata: {
          archived: false,
          auto_archive_duration: Number(body?.["auto_archive_duration"] ?? 1440),
          archive_timestamp: new Date().toISOString(),
          locked: false,
        },
      };
      channels.set(String(thread["id"]), thread);
      threads.push(thread);
      answer(201, thread);
      if (session !== null) dispatch("THREAD_CREATE", { ...thread, newly_created: true });
      return;
    }
    answer(404, { message: "404: Not Found", code: 0 });
  }

  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  return {
    url: `${base}/api`,
    gatewayUrl: `${base.replace(/^http/u, "ws")}/gateway`,
    cdnUrl: base,
    addAttachment(bytes, attachmentOptions = {}) {
      const id = snowflake();
      const channelId = attachmentOptions.channelId ?? DISCORD_IDS.dm;
      const filename = attachmentOptions.filename ?? (attachmentOptions.voice === true ? "voice-message.ogg" : "image.png");
      const contentType = attachmentOptions.contentType ?? (attachmentOptions.voice === true ? "audio/ogg" : "image/png");
      const path = `/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
      const hm = `${id.slice(-8)}a1b2c3d4`;
      attachments.set(id, { bytes, contentType, path, hm, downloads: 0 });
      const query = `?ex=6772d0c0&is=67717f40&hm=${hm}&`;
      const template =
        attachmentOptions.voice === true
          ? (discordFixture<{ attachments: Array<Record<string, unknown>> }>("message-voice").attachments[0] as Record<string, unknown>)
          : (discordFixture<{ attachments: Array<Record<string, unknown>> }>("message-attachment").attachments[0] as Record<string, unknown>);
      const attachment: DiscordAttachmentObject = {
        ...template,
        id,
        filename,
        size: bytes.length,
        url: `${base}${path}${query}`,
        proxy_url: `${base}${path}${query}`,
        content_type: contentType,
      };
      delete attachment["description"];
      if (attachmentOptions.width !== undefined) attachment["width"] = attachmentOptions.width;
      if (attachmentOptions.height !== undefined) attachment["height"] = attachmentOptions.height;
      return attachment;
    },
    downloads: (attachmentId) => attachments.get(attachmentId)?.downloads ?? 0,
    token,
    calls,
    sent,
    gatewayOps,
    connectionQueries,
    threads,
    get connected() {
      return everySession ? links.some((link) => link.ws !== null) : socket !== null && ready;
    },
    get connectedSessions() {
      return everySession ? links.filter((link) => link.ws !== null).length : socket !== null && ready ? 1 : 0;
    },
    dispatch,
    pushMessage(message) {
      return dispatch("MESSAGE_CREATE", withoutContentIntent(message));
    },
    dropConnection() {
      const current = socket;
      socket = null;
      ready = false;
      current?.terminate();
    },
    failNext(method, path, failure, count = 1) {
      for (let i = 0; i < count; i += 1) failures.push({ method, path, failure });
    },
    callsOf(method, path) {
      return calls.filter((c) => c.method === method && path.test(c.path));
    },
    sentTo(channelId) {
      return sent.filter((s) => s.channel_id === channelId);
    },
    typingIn(channelId) {
      return calls.filter((c) => c.method === "POST" && c.path === `/channels/${channelId}/typing` && c.status === 204).length;
    },
    waitFor(check, what, timeoutMs = 20_000) {
      return waitFor(check, {
        what,
        timeoutMs,
        describe: () => `fake discord: calls: ${JSON.stringify(calls.map((c) => `${c.method} ${c.path} ${c.status}`))}`,
      });
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
