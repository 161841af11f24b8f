/**
 * A local fake of the signal-cli REST API (bbernhard/signal-cli-rest-api) for tests: one real
 * HTTP server on 127.0.0.1 (random port) answering with the documented JSON bodies
 * (./fixtures), for one registered account.
 *
 * - `GET /v1/about` (the mode: `json-rpc` or `normal`), `GET /v1/accounts`, `GET /v1/health`.
 * - `GET /v1/receive/{number}`: in json-rpc mode a WebSocket (the `ws` package) that pushes
 *   each message `{ envelope, account }` as one text frame; a message pushed while no socket
 *   is open is lost, as on the real REST API (it hands messages to connected receivers only).
 *   A plain GET gets 400 there. In normal mode a plain GET answering the messages waiting
 *   (at once when there are some, else after `timeout` seconds, default 1) as a JSON array;
 *   a WebSocket upgrade is not answered as one.
 * - `POST /v2/send`: `number` must be the account, `recipients` one or more numbers, UUIDs or
 *   `group.<base64>` ids of a known group; records the message and answers 201
 *   `{ timestamp }`. Queued failures ({@link FakeSignalServer.failNext}, e.g. 400 with the
 *   documented `{ error }`) answer first.
 * - `PUT`/`DELETE /v1/typing-indicator/{number}`, `POST /v1/receipts/{number}` (recorded, 204),
 *   `GET /v1/groups/{number}`, `GET /v1/attachments/{id}` (what {@link FakeSignalServer.setAttachment} stored).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { waitFor } from "../../support/wait-for.js";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture from ./fixtures (parsed JSON; a fresh copy each call). */
export function signalFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), "utf8")) as T;
}

/** The ids of the fixtures. */
export const SIGNAL_IDS = Object.freeze({
  bot: "+4915100000000",
  botUuid: "6b1f4a70-3c2e-4d8b-9a51-0f2e7c9d1b00",
  alice: "+4915100000001",
  aliceUuid: "3f6c2a10-9b7e-4d21-a5c4-1e8f0b7d2a01",
  bob: "+4915100000002",
  bobUuid: "7d2e9c41-5a3b-4f60-b812-6c0a9e3f4b02",
  /** `groupInfo.groupId` of the group (the internal id). */
  groupInternalId: "Zy9LAVjDNjmkE3yKihP1EbV9LHplncHRS7zpzDUUjK8=",
  /** The sendable id of the group. */
  group: "group.Wnk5TEFWakROam1rRTN5S2loUDFFYlY5TEhwbG5jSFJTN3pwekRVVWpLOD0=",
});

/** A received message from a fixture with fields replaced. */
export function signalMessage(
  fixture: string,
  overrides: { timestamp?: number; message?: string; sender?: { number?: string | null; uuid?: string; name?: string }; data?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const received = signalFixture<{ envelope: Record<string, unknown>; account: string }>(fixture);
  const envelope = received.envelope;
  const data = (envelope["dataMessage"] ?? (envelope["editMessage"] as Record<string, unknown> | undefined)?.["dataMessage"]) as
    | Record<string, unknown>
    | undefined;
  if (overrides.timestamp !== undefined) {
    envelope["timestamp"] = overrides.timestamp;
    envelope["serverReceivedTimestamp"] = overrides.timestamp + 120;
    envelope["serverDeliveredTimestamp"] = overrides.timestamp + 180;
    if (data !== undefined) data["timestamp"] = overrides.timestamp;
  }
  if (overrides.message !== undefined && data !== undefined) data["message"] = overrides.message;
  if (overrides.data !== undefined && data !== undefined) Object.assign(data, overrides.data);
  const sender = overrides.sender;
  if (sender !== undefined) {
    if (sender.number !== undefined) envelope["sourceNumber"] = sender.number;
    if (sender.uuid !== undefined) envelope["sourceUuid"] = sender.uuid;
    if (sender.name !== undefined) envelope["sourceName"] = sender.name;
    envelope["source"] = envelope["sourceNumber"] ?? envelope["sourceUuid"];
  }
  return received;
}

/** One call the bot made. */
export interface SignalCall {
  method: string;
  /** The path, with the number decoded. */
  path: string;
  query: URLSearchParams;
  body: Record<string, unknown> | null;
  status: number;
}

/** A message the bot sent (a successful POST /v2/send). */
export interface SentSignalMessage {
  timestamp: number;
  recipients: string[];
  message: string;
  text_mode: string | null;
  quote_timestamp: number | null;
  quote_author: string | null;
}

/** A failure to answer the next matching call(s) with. */
export interface SignalFailure {
  status: number;
  body: unknown;
}

/** Options of {@link startFakeSignalServer}. */
export interface FakeSignalOptions {
  /** `json-rpc` (the receive WebSocket, the default) or `normal` (receive by polling). */
  mode?: "json-rpc" | "normal";
  /** The registered account (default {@link SIGNAL_IDS.bot}). */
  number?: string;
  /** The port on 127.0.0.1 (default: a free one). */
  port?: number;
}

/** A running fake. */
export interface FakeSignalServer {
  /** The base URL to configure (`adapters.signal.apiUrl`), `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly number: string;
  readonly mode: "json-rpc" | "normal";
  /** Every HTTP call, oldest first (a live array). */
  readonly calls: SignalCall[];
  /** Every message the bot sent, oldest first (a live array). */
  readonly sent: SentSignalMessage[];
  /** Typing indicator calls: `on` for PUT, off for DELETE (a live array). */
  readonly typing: Array<{ on: boolean; recipient: string }>;
  /** Receipts the bot sent (a live array). */
  readonly receipts: Array<{ recipient: string; receipt_type: string; timestamp: number }>;
  /** How many receive WebSockets were opened so far. */
  readonly connections: number;
  /** Whether a receive WebSocket is open. */
  readonly connected: boolean;
  /** Messages pushed while no receiver was there (lost, as on the REST API in json-rpc mode). */
  readonly lost: number;
  /** Messages waiting for the next poll (normal mode). */
  readonly waiting: number;
  /** Receive calls waiting for a message right now (normal mode). */
  readonly pendingPolls: number;
  /** Delivers a received message: to the open WebSockets (json-rpc), or to the next poll (normal). */
  push(message: Record<string, unknown>): void;
  /** Drops the receive WebSockets without a close frame (the client sees 1006). */
  dropConnection(): void;
  /** The next `count` calls of `method` whose path matches `path` fail with `failure`. */
  failNext(method: string, path: RegExp, failure: SignalFailure, count?: number): void;
  /**
   * Stores an attachment served at GET /v1/attachments/{id} with `contentType` (default
   * `application/octet-stream`; the REST API guesses the type from the bytes).
   */
  setAttachment(id: string, content: string | Buffer, contentType?: string): void;
  callsOf(method: string, path: RegExp): SignalCall[];
  /** Messages the bot sent to one recipient (number, UUID or group id), in order. */
  sentTo(recipient: string): SentSignalMessage[];
  waitFor<T>(check: () => T | null | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu;

/** Starts a fake signal-cli REST API on 127.0.0.1. */
export async function startFakeSignalServer(options: FakeSignalOptions = {}): Promise<FakeSignalServer> {
  const mode = options.mode ?? "json-rpc";
  const number = options.number ?? SIGNAL_IDS.bot;
  const calls: SignalCall[] = [];
  const sent: SentSignalMessage[] = [];
  const typing: Array<{ on: boolean; recipient: string }> = [];
  const receipts: Array<{ recipient: string; receipt_type: string; timestamp: number }> = [];
  const failures: Array<{ method: string; path: RegExp; failure: SignalFailure }> = [];
  const attachments = new Map<string, { content: Buffer; contentType: string }>();
  const groups = signalFixture<Array<{ id: string }>>("groups");
  const queue: Array<Record<string, unknown>> = [];
  const polls = new Set<() => void>();
  const sockets = new Set<WebSocket>();
  let connections = 0;
  let lost = 0;
  let clock = 1_767_300_000_000;

  const http = createServer((req, res) => void handle(req, res));
  const wss = new WebSocketServer({ noServer: true });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://x");
    const match = /^\/v1\/receive\/([^/]+)$/u.exec(url.pathname);
    if (match === null) {
      socket.end("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    if (mode !== "json-rpc") {
      // Normal mode runs the receive command and answers the messages as a plain JSON response.
      const body = JSON.stringify(queue.splice(0));
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      connections += 1;
      const account = decodeURIComponent(match[1]!);
      (ws as WebSocket & { account?: string }).account = account;
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      ws.on("error", () => sockets.delete(ws));
    });
  });

  const reply = (res: ServerResponse, status: number, body: unknown): void => {
    if (body === null) {
      res.writeHead(status).end();
      return;
    }
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname
      .split("/")
      .map((part) => decodeURIComponent(part))
      .join("/");
    let body: Record<string, unknown> | null = null;
    if (text !== "") {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        const call = { method, path, query: url.searchParams, body: { raw: text }, status: 400 };
        calls.push(call);
        return reply(res, 400, { error: "Couldn't process request - invalid request" });
      }
    }
    const call: SignalCall = { method, path, query: url.searchParams, body, status: 0 };
    calls.push(call);
    const answer = (status: number, payload: unknown): void => {
      call.status = status;
      reply(res, status, payload);
    };
    const failureIndex = failures.findIndex((f) => f.method === method && f.path.test(path));
    if (failureIndex >= 0) {
      const { failure } = failures.splice(failureIndex, 1)[0]!;
      return answer(failure.status, failure.body);
    }
    const ofAccount = (prefix: string): boolean => path === `${prefix}/${number}`;
    if (method === "GET" && path === "/v1/about") return answer(200, signalFixture(mode === "json-rpc" ? "about-json-rpc" : "about-normal"));
    if (method === "GET" && path === "/v1/health") return answer(204, null);
    if (method === "GET" && path === "/v1/accounts") return answer(200, [number]);
    if (method === "GET" && path.startsWith("/v1/receive/")) {
      if (mode === "json-rpc") return answer(400, signalFixture("error-400-receive-websocket-only"));
      if (!ofAccount("/v1/receive")) return answer(400, { error: `User ${path.slice("/v1/receive/".length)} is not registered.\n` });
      const timeout = Number(url.searchParams.get("timeout") ?? "1");
      if (!Number.isFinite(timeout)) return answer(400, { error: "Couldn't process request - timeout needs to be numeric!" });
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            polls.delete(done);
            resolve();
          };
          const timer = setTimeout(done, Math.max(0, timeout) * 1000);
          polls.add(done);
        });
      }
      return answer(200, queue.splice(0));
    }
    if (method === "POST" && path === "/v2/send") {
      const recipients = body?.["recipients"];
      const message = body?.["message"];
      if (!Array.isArray(recipients) || recipients.length === 0)
        return answer(400, { error: "Couldn't process request - please provide at least one recipient" });
      if (body?.["number"] !== number) return answer(400, signalFixture("error-400-account-not-registered"));
      if (typeof message !== "string") return answer(400, { error: "Couldn't process request - invalid request" });
      for (const recipient of recipients as unknown[]) {
        const r = String(recipient);
        if (r.startsWith("group.") ? !groups.some((g) => g.id === r) : !(/^\+\d+$/u.test(r) || UUID.test(r))) return answer(400, { error: "Invalid group id" });
      }
      clock += 1000;
      sent.push({
        timestamp: clock,
        recipients: (recipients as unknown[]).map(String),
        message,
        text_mode: typeof body?.["text_mode"] === "string" ? (body["text_mode"] as string) : null,
        quote_timestamp: typeof body?.["quote_timestamp"] === "number" ? (body["quote_timestamp"] as number) : null,
        quote_author: typeof body?.["quote_author"] === "string" ? (body["quote_author"] as string) : null,
      });
      return answer(201, { ...signalFixture<Record<string, unknown>>("send-response"), timestamp: String(clock) });
    }
    if ((method === "PUT" || method === "DELETE") && ofAccount("/v1/typing-indicator")) {
      if (typeof body?.["recipient"] !== "string") return answer(400, { error: "Couldn't process request - invalid request" });
      typing.push({ on: method === "PUT", recipient: body["recipient"] as string });
      return answer(204, null);
    }
    if (method === "POST" && ofAccount("/v1/receipts")) {
      if (typeof body?.["recipient"] !== "string" || !["read", "viewed"].includes(String(body["receipt_type"])) || !body["timestamp"]) {
        return answer(400, { error: "Couldn't process request - receipt type must be read or viewed" });
      }
      receipts.push({ recipient: body["recipient"] as string, receipt_type: body["receipt_type"] as string, timestamp: Number(body["timestamp"]) });
      return answer(204, null);
    }
    if (method === "GET" && ofAccount("/v1/groups")) return answer(200, groups);
    const attachment = /^\/v1\/attachments\/(.+)$/u.exec(path);
    if (method === "GET" && attachment !== null) {
      const stored = attachments.get(attachment[1]!);
      if (stored === undefined) return answer(404, { error: "No attachment with that name found" });
      call.status = 200;
      res.writeHead(200, { "content-type": stored.contentType, "content-length": String(stored.content.length) }).end(stored.content);
      return;
    }
    answer(404, { error: "404 page not found" });
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  return {
    url,
    number,
    mode,
    calls,
    sent,
    typing,
    receipts,
    get connections() {
      return connections;
    },
    get connected() {
      return sockets.size > 0;
    },
    get lost() {
      return lost;
    },
    get waiting() {
      return queue.length;
    },
    get pendingPolls() {
      return polls.size;
    },
    push(message) {
      if (mode === "normal") {
        queue.push(message);
        for (const done of [...polls]) done();
        return;
      }
      const open = [...sockets].filter((ws) => ws.readyState === ws.OPEN && (ws as WebSocket & { account?: string }).account === message["account"]);
      if (open.length === 0) lost += 1;
      for (const ws of open) ws.send(JSON.stringify(message));
    },
    dropConnection() {
      for (const ws of sockets) ws.terminate();
      sockets.clear();
    },
    failNext(method, path, failure, count = 1) {
      for (let i = 0; i < count; i += 1) failures.push({ method, path, failure });
    },
    setAttachment(id, content, contentType = "application/octet-stream") {
      attachments.set(id, { content: typeof content === "string" ? Buffer.from(content, "utf8") : content, contentType });
    },
    callsOf(method, path) {
      return calls.filter((c) => c.method === method && path.test(c.path));
    },
    sentTo(recipient) {
      return sent.filter((s) => s.recipients.includes(recipient));
    },
    waitFor(check, what, timeoutMs = 20_000) {
      return waitFor(check, {
        what,
        timeoutMs,
        describe: () => `fake signal: calls: ${JSON.stringify(calls.map((c) => `${c.method} ${c.path} ${c.status}`))}`,
      });
    },
    async close() {
      for (const done of [...polls]) done();
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
