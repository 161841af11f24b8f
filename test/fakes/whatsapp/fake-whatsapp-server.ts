/**
 * A local fake of the WhatsApp Cloud API's Graph endpoints for tests: a real HTTP server on
 * 127.0.0.1 (random port, `node:http`) answering with the documented JSON bodies (see
 * ./fixtures). The adapter talks to it through `adapters.whatsapp.apiUrl`
 * (`http://127.0.0.1:<port>`; the version segment `/v<N>.<M>/` is taken as sent).
 *
 * Endpoints:
 * - `GET /<version>/<phone-number-id>?fields=…` — the business number (`phone-number`);
 *   another id gets the documented 100/33 error.
 * - `POST /<version>/<phone-number-id>/messages` — a text message (`to` or `recipient`,
 *   `recipient_type`, `text.body` of at most 4,096 characters, optional
 *   `context.message_id`): recorded and answered with a fresh `wamid`; or `status: "read"`
 *   (with `typing_indicator`): recorded as a read receipt, `{ success: true }`.
 *
 * - `GET /<version>/<media-id>?phone_number_id=…` — a media file registered with
 *   {@link FakeWhatsAppServer.setMedia} (`media-url`: `url`, `mime_type`, `sha256`, `file_size`,
 *   `id`); an unknown id gets the documented 100/33 error. The `url` is on the fake's own origin
 *   (`/whatsapp_business/attachments/?mid=…`, the path Meta's media host uses) unless the test
 *   names another one.
 * - `GET /whatsapp_business/attachments/?mid=<media-id>&…` — the file's bytes, with its
 *   `Content-Type` and `Content-Length` (recorded in {@link FakeWhatsAppServer.downloads}).
 *
 * The access token must come as `Authorization: Bearer …` (the file download too); a wrong or
 * missing one gets HTTP 401 with the documented 190 error. {@link FakeWhatsAppServer.failNext} queues failures of the next sends
 * (an error fixture with its HTTP status, e.g. 131047 → 400, or a 429 with `Retry-After`).
 * Webhooks go the other way: see `./whatsapp-webhooks.ts`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitFor } from "../../support/wait-for.js";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture from ./fixtures (parsed JSON; a fresh copy each call). */
export function whatsappFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), "utf8")) as T;
}

/** The business number the fake serves (Meta's example values). */
export const FAKE_PHONE_NUMBER_ID = "106540352242922";
export const FAKE_BUSINESS_NUMBER = "15550783881";

/** One Graph API call the adapter made. */
export interface WhatsAppCall {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
  /** The HTTP status answered. */
  status: number;
  /** The Graph error code of an error answer. */
  code: number | null;
}

/** A text message the adapter sent (and the fake accepted). */
export interface SentWhatsAppMessage {
  wamid: string;
  /** `to` as sent (a phone number or a group id), or null. */
  to: string | null;
  /** `recipient` as sent (a BSUID), or null. */
  recipient: string | null;
  recipientType: string;
  body: string;
  /** `context.message_id`: the message it quotes. */
  replyTo: string | null;
}

/** A read receipt (with or without a typing indicator). */
export interface WhatsAppRead {
  messageId: string;
  typing: boolean;
}

/** A failure for the next send(s): an error fixture (or body) with its HTTP status, optionally with `Retry-After`. */
export interface WhatsAppFailure {
  status: number;
  /** A fixture name (`error-131047`) or an error body. */
  body: string | Record<string, unknown>;
  retryAfter?: number;
}

/** A media file the fake serves (see {@link FakeWhatsAppServer.setMedia}). */
export interface FakeWhatsAppMedia {
  bytes: Buffer;
  mimeType: string;
  /** The `file_size` the media endpoint declares (default: the bytes' length). */
  fileSize?: number;
  /** The `url` the media endpoint names (default: the fake's own download path). */
  url?: string;
  /** The download answers `302 Found` with this `Location` instead of the bytes. */
  redirectTo?: string;
}

/** A request for a media file's bytes. */
export interface WhatsAppMediaDownload {
  mediaId: string;
  /** Whether it came with the access token. */
  authorized: boolean;
  status: number;
}

/** A running fake. */
export interface FakeWhatsAppServer {
  /** The base URL to configure (`adapters.whatsapp.apiUrl`). */
  readonly url: string;
  /** The access token it accepts. */
  readonly accessToken: string;
  readonly phoneNumberId: string;
  readonly calls: WhatsAppCall[];
  readonly sent: SentWhatsAppMessage[];
  readonly reads: WhatsAppRead[];
  /** Every request for a media file's bytes (a live array). */
  readonly downloads: WhatsAppMediaDownload[];
  failNext(failure: WhatsAppFailure, count?: number): void;
  /** Registers a media file under `mediaId` (what an inbound webhook's `image.id`, `audio.id`, … names). */
  setMedia(mediaId: string, media: FakeWhatsAppMedia): void;
  /** Messages sent to a phone number (`to`, digits), a BSUID (`recipient`) or a group id, in order. */
  sentTo(id: string): SentWhatsAppMessage[];
  waitFor<T>(check: () => T | null | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  if (raw === "") return null;
  return JSON.parse(raw) as Record<string, unknown>;
}

function graphError(code: number, message: string, status = 400): { status: number; body: Record<string, unknown> } {
  return { status, body: { error: { message: `(#${code}) ${message}`, type: "OAuthException", code, fbtrace_id: "AFakeTraceId0000000000" } } };
}

/** Starts the fake. */
export async function startFakeWhatsAppServer(options: { accessToken?: string } = {}): Promise<FakeWhatsAppServer> {
  const accessToken = options.accessToken ?? "EAAFakeWhatsAppAccessTokenForTests0123456789abcdefZZ";
  const calls: WhatsAppCall[] = [];
  const sent: SentWhatsAppMessage[] = [];
  const reads: WhatsAppRead[] = [];
  const failures: WhatsAppFailure[] = [];
  const media = new Map<string, FakeWhatsAppMedia>();
  const downloads: WhatsAppMediaDownload[] = [];
  let base = "";
  let counter = 0;

  function mediaInfo(mediaId: string, query: URLSearchParams): { status: number; body: Record<string, unknown> } {
    const file = media.get(mediaId);
    const owner = query.get("phone_number_id");
    if (file === undefined || (owner !== null && owner !== FAKE_PHONE_NUMBER_ID)) {
      const error = whatsappFixture<{ error: { message: string } }>("error-100-unknown-id");
      error.error.message = error.error.message.replace("999999999999999", mediaId);
      return { status: 400, body: error };
    }
    const info = whatsappFixture<Record<string, unknown>>("media-url");
    const ext = Math.floor(Date.now() / 1000) + 300;
    info["url"] = file.url ?? `${base}/whatsapp_business/attachments/?mid=${mediaId}&ext=${ext}&hash=ATfake${mediaId}`;
    info["mime_type"] = file.mimeType;
    info["sha256"] = createHash("sha256").update(file.bytes).digest("base64");
    info["file_size"] = file.fileSize ?? file.bytes.length;
    info["id"] = mediaId;
    return { status: 200, body: info };
  }

  function send(body: Record<string, unknown>): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } {
    if (body["messaging_product"] !== "whatsapp") return graphError(100, "The parameter messaging_product is required.");
    if (body["status"] === "read") {
      if (typeof body["message_id"] !== "string" || !body["message_id"].startsWith("wamid.")) return graphError(100, "Invalid parameter message_id");
      const typing = body["typing_indicator"] as { type?: string } | undefined;
      if (typing !== undefined && typing.type !== "text") return graphError(100, "Invalid parameter typing_indicator.type");
      reads.push({ messageId: body["message_id"], typing: typing !== undefined });
      return { status: 200, body: whatsappFixture("mark-read-response") };
    }
    const failure = failures.shift();
    if (failure !== undefined) {
      const errorBody = typeof failure.body === "string" ? whatsappFixture(failure.body) : failure.body;
      return {
        status: failure.status,
        body: errorBody,
        ...(failure.retryAfter !== undefined ? { headers: { "retry-after": String(failure.retryAfter) } } : {}),
      };
    }
    const to = typeof body["to"] === "string" ? body["to"] : null;
    const recipient = typeof body["recipient"] === "string" ? body["recipient"] : null;
    const recipientType = typeof body["recipient_type"] === "string" ? body["recipient_type"] : "individual";
    if (to === null && recipient === null) return graphError(100, "The parameter to is required.");
    if (body["type"] !== "text") return graphError(100, "Only text messages are served by this fake.");
    const text = (body["text"] as { body?: unknown } | undefined)?.body;
    if (typeof text !== "string" || text === "") return graphError(100, "The parameter text['body'] is required.");
    if (text.length > 4096) return { status: 400, body: whatsappFixture("error-100-body-too-long") };
    const replyTo = (body["context"] as { message_id?: unknown } | undefined)?.message_id;
    counter += 1;
    const wamid = `wamid.FAKE${String(counter).padStart(8, "0")}${Buffer.from(String(Date.now())).toString("base64url")}`;
    sent.push({ wamid, to, recipient, recipientType, body: text, replyTo: typeof replyTo === "string" ? replyTo : null });
    const fixture =
      recipientType === "group" ? "send-message-response-group" : recipient !== null && to === null ? "send-message-response-bsuid" : "send-message-response";
    const answer = whatsappFixture<{ contacts: Array<Record<string, unknown>>; messages: Array<{ id: string }> }>(fixture);
    answer.contacts = [to !== null ? { input: to, ...(recipientType === "group" ? {} : { wa_id: to }) } : { input: recipient, user_id: recipient }];
    answer.messages[0]!.id = wamid;
    return { status: 200, body: answer };
  }

  function answer(
    method: string,
    path: string,
    query: URLSearchParams,
    body: Record<string, unknown> | null,
  ): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } {
    const match = /^\/v\d+\.\d+\/(\d+)(\/messages)?$/u.exec(path);
    if (match === null) return graphError(100, "Unknown path components", 400);
    const [, id, messages] = match;
    if (messages === undefined && method === "GET" && id !== FAKE_PHONE_NUMBER_ID) return mediaInfo(id!, query);
    if (id !== FAKE_PHONE_NUMBER_ID) {
      const error = whatsappFixture<{ error: { message: string } }>("error-100-unknown-id");
      error.error.message = error.error.message.replace("999999999999999", id!);
      return { status: 400, body: error };
    }
    if (messages === undefined && method === "GET") {
      const phone = whatsappFixture<Record<string, unknown>>("phone-number");
      const fields = (query.get("fields") ?? "").split(",").filter(Boolean);
      return { status: 200, body: Object.fromEntries(Object.entries(phone).filter(([k]) => k === "id" || fields.length === 0 || fields.includes(k))) };
    }
    if (messages !== undefined && method === "POST") return send(body ?? {});
    return graphError(100, "Unsupported request", 400);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      let result: { status: number; body: Record<string, unknown>; headers?: Record<string, string> };
      let body: Record<string, unknown> | null = null;
      const header = String(req.headers["authorization"] ?? "");
      if (req.method === "GET" && url.pathname === "/whatsapp_business/attachments/") {
        const mediaId = url.searchParams.get("mid") ?? "";
        const file = media.get(mediaId);
        const authorized = header === `Bearer ${accessToken}`;
        const status = !authorized ? 401 : file === undefined ? 404 : 200;
        downloads.push({ mediaId, authorized, status });
        calls.push({ method: "GET", path: url.pathname, body: null, status, code: status === 401 ? 190 : null });
        if (status === 200 && file!.redirectTo !== undefined) {
          res.writeHead(302, { location: file!.redirectTo }).end();
          return;
        }
        if (status !== 200) {
          const error = status === 401 ? whatsappFixture("error-media-download-401") : graphError(100, "The media file does not exist.", 404).body;
          res.writeHead(status, { "content-type": "application/json; charset=UTF-8" }).end(JSON.stringify(error));
          return;
        }
        res.writeHead(200, { "content-type": file!.mimeType, "content-length": String(file!.bytes.length) }).end(file!.bytes);
        return;
      }
      try {
        body = await readBody(req);
        result =
          header !== `Bearer ${accessToken}`
            ? { status: 401, body: whatsappFixture("error-190") }
            : answer(req.method ?? "GET", url.pathname, url.searchParams, body);
      } catch (error) {
        result = graphError(100, `Malformed request: ${(error as Error).message}`);
      }
      const code = (result.body["error"] as { code?: number } | undefined)?.code ?? null;
      calls.push({ method: req.method ?? "GET", path: url.pathname, body, status: result.status, code });
      if (!res.destroyed)
        res.writeHead(result.status, { "content-type": "application/json; charset=UTF-8", ...(result.headers ?? {}) }).end(JSON.stringify(result.body));
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    accessToken,
    phoneNumberId: FAKE_PHONE_NUMBER_ID,
    calls,
    sent,
    reads,
    downloads,
    failNext(failure, count = 1) {
      for (let i = 0; i < count; i++) failures.push(failure);
    },
    setMedia(mediaId, file) {
      media.set(mediaId, file);
    },
    sentTo: (id) => sent.filter((m) => m.to === id || m.recipient === id),
    waitFor(check, what, timeoutMs = 20_000) {
      return waitFor(() => check() || null, {
        what,
        timeoutMs,
        describe: () =>
          `calls so far: ${JSON.stringify(calls.map((c) => [c.method, c.path, c.status, c.code]))}; sent: ${JSON.stringify(sent.map((m) => [m.to ?? m.recipient, m.body.slice(0, 80)]))}`,
      });
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
