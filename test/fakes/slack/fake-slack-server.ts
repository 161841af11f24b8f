/**
 * A local fake of the Slack Web API for tests: a real HTTP server on 127.0.0.1 (random port,
 * `node:http`) answering `POST /api/<method>` with the documented JSON bodies (`{ ok: true, … }`
 * or `{ ok: false, error }`, HTTP 200; a rate limit is HTTP 429 with `Retry-After`; see
 * ./fixtures). The REAL `@slack/web-api` WebClient (inside Bolt) talks to it through
 * `adapters.slack.apiUrl` (its `slackApiUrl`).
 *
 * Methods: auth.test, users.info, conversations.info, chat.postMessage (checks `channel`, a
 * `text` or `blocks`, Slack's 40,000-character text cap → `msg_too_long`, a section block's
 * 3,000-character text limit → `invalid_blocks`), chat.update, assistant.threads.setStatus,
 * files.info (a file the test registered with {@link FakeSlackServer.addFile}, else
 * `file_not_found`). The token comes as `Authorization: Bearer …` (or a `token` field); a
 * wrong one gets `invalid_auth`.
 *
 * Files: the same server is the file host (`GET /files-pri/<team>-<file id>/<name>` and
 * `…/download/<name>`, the `url_private` and `url_private_download` of registered files). It
 * serves the bytes only with `Authorization: Bearer <bot token>`; without it, or with another
 * token, it redirects to its sign-in page (`/signin`, an HTML page), as Slack's file host does.
 *
 * The test reads what the bot sent ({@link FakeSlackServer.sent}, {@link FakeSlackServer.calls})
 * and queues failures ({@link FakeSlackServer.failNext}). Events go the other way: see
 * `./slack-events.ts`.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitFor } from "../../support/wait-for.js";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture from ./fixtures (parsed JSON; a fresh copy each call). */
export function slackFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), "utf8")) as T;
}

/** One Web API call the bot made. */
export interface SlackCall {
  method: string;
  params: Record<string, unknown>;
  /** The HTTP status answered. */
  status: number;
  /** `error` of an `ok: false` answer. */
  error: string | null;
}

/** A message the bot posted (chat.postMessage that succeeded), with its current text (after chat.update). */
export interface SentSlackMessage {
  channel: string;
  ts: string;
  thread_ts: string | null;
  text: string;
  /** `mrkdwn` as sent (`null`: not given, i.e. Slack's default true). */
  mrkdwn: boolean | null;
  blocks: Array<Record<string, unknown>> | null;
}

/** A failure for the next call(s) of a method: a 429 with `Retry-After` seconds, or an `ok: false` error. */
export type SlackFailure = { status: 429; retryAfter: number } | { error: string };

/** A Slack file object (`files.info`'s `file`, an event's `files[]` entry). */
export type SlackFileObject = Record<string, unknown> & { id: string; name: string; url_private: string; url_private_download: string; size: number };

/** A running fake. */
export interface FakeSlackServer {
  /** The Web API base URL to configure (`adapters.slack.apiUrl`), `http://127.0.0.1:<port>/api/`. */
  readonly url: string;
  /** The bot token it accepts. */
  readonly botToken: string;
  /** The bot (`auth.test`'s ids). */
  readonly me: { userId: string; botId: string; teamId: string };
  readonly calls: SlackCall[];
  readonly sent: SentSlackMessage[];
  /** Adds a user `users.info` knows (others get a generated name). */
  addUser(id: string, realName: string): void;
  failNext(method: string, failure: SlackFailure, count?: number): void;
  /**
   * Registers a file: `files.info` answers it and its `url_private`/`url_private_download` (on
   * this fake) serve exactly `bytes` to the bot token. `audioClip`: an audio clip recorded in
   * Slack (`subtype: "slack_audio"`). Returns the file object to put in an event's `files`.
   */
  addFile(bytes: Uint8Array, options?: { id?: string; name?: string; mimetype?: string; audioClip?: boolean }): SlackFileObject;
  /** Requests for a file's bytes: how many were served, and how many were refused (no or a wrong token). */
  fileRequests(id: string): { served: number; refused: number };
  callsOf(method: string): SlackCall[];
  /** Messages posted to one channel (optionally one thread: `null` = top level), in order. */
  sentTo(channel: string, threadTs?: string | null): SentSlackMessage[];
  waitFor<T>(check: () => T | null | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  const type = String(req.headers["content-type"] ?? "");
  if (raw === "") return {};
  if (type.includes("application/json")) return JSON.parse(raw) as Record<string, unknown>;
  if (type.includes("application/x-www-form-urlencoded")) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(raw)) {
      // The WebClient sends arrays and objects (blocks) as JSON strings.
      out[key] = /^[[{]/u.test(value) ? JSON.parse(value) : value === "true" ? true : value === "false" ? false : value;
    }
    return out;
  }
  throw new Error(`fake slack: unsupported content type ${type}`);
}

/** Starts the fake. */
export async function startFakeSlackServer(options: { botToken?: string } = {}): Promise<FakeSlackServer> {
  const botToken = options.botToken ?? "xoxb-1000000001-2000000002-FakeSlackBotTokenForTests";
  const auth = slackFixture<{ user_id: string; bot_id: string; team_id: string }>("auth-test");
  const calls: SlackCall[] = [];
  const sent: SentSlackMessage[] = [];
  const failures = new Map<string, SlackFailure[]>();
  const users = new Map<string, string>([["U0ALICE001", "Alice Doe"]]);
  const files = new Map<string, { file: SlackFileObject; bytes: Uint8Array; served: number; refused: number }>();
  let origin = "";
  let clock = 1_700_001_000;
  let counter = 0;
  const nextTs = (): string => {
    counter += 1;
    return `${clock + Math.floor(counter / 1000)}.${String(counter % 1000).padStart(6, "0")}`;
  };
  clock = Math.floor(Date.now() / 1000);

  function answer(method: string, params: Record<string, unknown>): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } {
    const queued = failures.get(method);
    if (queued !== undefined && queued.length > 0) {
      const failure = queued.shift()!;
      if ("status" in failure) return { status: 429, body: slackFixture("error-ratelimited"), headers: { "retry-after": String(failure.retryAfter) } };
      return { status: 200, body: { ok: false, error: failure.error } };
    }
    switch (method) {
      case "auth.test":
        return { status: 200, body: slackFixture("auth-test") };
      case "users.info": {
        const id = String(params["user"] ?? "");
        if (id === "") return { status: 200, body: { ok: false, error: "user_not_found" } };
        const body = slackFixture<{ ok: true; user: Record<string, unknown> & { profile: Record<string, unknown> } }>("users-info");
        const realName = users.get(id) ?? `User ${id}`;
        body.user["id"] = id;
        body.user["name"] = realName.split(" ")[0]!.toLowerCase();
        body.user["real_name"] = realName;
        body.user.profile["real_name"] = realName;
        body.user.profile["display_name"] = "";
        return { status: 200, body };
      }
      case "conversations.info": {
        const id = String(params["channel"] ?? "");
        if (id === "") return { status: 200, body: slackFixture("error-channel-not-found") };
        if (id.startsWith("D")) {
          const body = slackFixture<{ channel: Record<string, unknown> }>("conversations-info-im");
          body.channel["id"] = id;
          return { status: 200, body };
        }
        const body = slackFixture<{ channel: Record<string, unknown> }>("conversations-info-channel");
        body.channel["id"] = id;
        if (id !== "C0GENERAL1") body.channel["name"] = id.toLowerCase();
        if (id.startsWith("G")) Object.assign(body.channel, { is_channel: false, is_group: true, is_private: true });
        return { status: 200, body };
      }
      case "chat.postMessage": {
        const channel = String(params["channel"] ?? "");
        if (channel === "") return { status: 200, body: slackFixture("error-channel-not-found") };
        const text = typeof params["text"] === "string" ? params["text"] : "";
        const blocks = Array.isArray(params["blocks"]) ? (params["blocks"] as Array<Record<string, unknown>>) : null;
        if (text.trim() === "" && (blocks === null || blocks.length === 0)) return { status: 200, body: { ok: false, error: "no_text" } };
        if (text.length > 40_000) return { status: 200, body: { ok: false, error: "msg_too_long" } };
        for (const block of blocks ?? []) {
          const blockText = (block["text"] as { type?: string; text?: string } | undefined) ?? {};
          if (block["type"] !== "section" || (blockText.type !== "mrkdwn" && blockText.type !== "plain_text") || (blockText.text ?? "").length > 3000) {
            return { status: 200, body: slackFixture("error-invalid-blocks") };
          }
        }
        const ts = nextTs();
        const threadTs = typeof params["thread_ts"] === "string" ? params["thread_ts"] : null;
        sent.push({ channel, ts, thread_ts: threadTs, text, mrkdwn: typeof params["mrkdwn"] === "boolean" ? params["mrkdwn"] : null, blocks });
        const body = slackFixture<Record<string, unknown> & { message: Record<string, unknown> }>("chat-post-message");
        body["channel"] = channel;
        body["ts"] = ts;
        Object.assign(body.message, { text, ts, ...(threadTs !== null ? { thread_ts: threadTs } : {}) });
        return { status: 200, body };
      }
      case "chat.update": {
        const target = sent.find((m) => m.channel === params["channel"] && m.ts === params["ts"]);
        if (target === undefined) return { status: 200, body: { ok: false, error: "message_not_found" } };
        target.text = String(params["text"] ?? "");
        return { status: 200, body: { ok: true, channel: target.channel, ts: target.ts, text: target.text } };
      }
      case "files.info": {
        const stored = files.get(String(params["file"] ?? ""));
        if (stored === undefined) return { status: 200, body: slackFixture("error-file-not-found") };
        const body = slackFixture<Record<string, unknown>>("files-info");
        body["file"] = { ...stored.file };
        return { status: 200, body };
      }
      case "assistant.threads.setStatus":
        if (typeof params["channel_id"] !== "string" || typeof params["thread_ts"] !== "string")
          return { status: 200, body: { ok: false, error: "invalid_arguments" } };
        return { status: 200, body: { ok: true } };
      default:
        return { status: 200, body: { ok: false, error: "unknown_method" } };
    }
  }

  /** The file host: the bytes of a registered file to the bot token; to its sign-in page otherwise. */
  const serveFile = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    if (path === "/signin") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end("<!DOCTYPE html><html><body>Sign in to Slack</body></html>");
      return;
    }
    const match = /^\/files-pri\/[A-Z0-9]+-([A-Z0-9]+)\/(?:download\/)?[^/]+$/u.exec(path);
    const stored = match === null ? undefined : files.get(match[1]!);
    if (stored === undefined || req.method !== "GET") {
      res.writeHead(404, { "content-type": "text/plain" }).end("file not found");
      return;
    }
    if (req.headers.authorization !== `Bearer ${botToken}`) {
      stored.refused += 1;
      res.writeHead(302, { location: `${origin}/signin?redir=${encodeURIComponent(path)}` }).end();
      return;
    }
    stored.served += 1;
    res
      .writeHead(200, { "content-type": String(stored.file["mimetype"] ?? "application/octet-stream"), "content-length": String(stored.bytes.length) })
      .end(Buffer.from(stored.bytes));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (path.startsWith("/files-pri/") || path === "/signin") {
      serveFile(req, res, path);
      return;
    }
    void (async () => {
      const match = /^\/api\/([\w.]+)$/u.exec((req.url ?? "").split("?")[0]!);
      let result: { status: number; body: Record<string, unknown>; headers?: Record<string, string> };
      let method = "";
      let params: Record<string, unknown> = {};
      try {
        params = await readBody(req);
        if (match === null) result = { status: 404, body: { ok: false, error: "unknown_method" } };
        else {
          method = match[1]!;
          const header = String(req.headers["authorization"] ?? "");
          const given = header.startsWith("Bearer ") ? header.slice(7) : typeof params["token"] === "string" ? params["token"] : "";
          result = given !== botToken ? { status: 200, body: slackFixture("error-invalid-auth") } : answer(method, params);
        }
      } catch (error) {
        result = { status: 200, body: { ok: false, error: "invalid_form_data", detail: (error as Error).message } };
      }
      if (method !== "") calls.push({ method, params, status: result.status, error: result.body["ok"] === false ? String(result.body["error"]) : null });
      if (!res.destroyed)
        res.writeHead(result.status, { "content-type": "application/json; charset=utf-8", ...(result.headers ?? {}) }).end(JSON.stringify(result.body));
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}/api/`,
    botToken,
    me: { userId: auth.user_id, botId: auth.bot_id, teamId: auth.team_id },
    calls,
    sent,
    addUser: (id, realName) => void users.set(id, realName),
    failNext(method, failure, count = 1) {
      const list = failures.get(method) ?? [];
      for (let i = 0; i < count; i++) list.push(failure);
      failures.set(method, list);
    },
    addFile(bytes, fileOptions = {}) {
      const base = fileOptions.audioClip === true ? slackFixture("file-audio-clip") : slackFixture<{ file: Record<string, unknown> }>("files-info").file;
      const id = fileOptions.id ?? `F0FAKE${String(files.size + 1).padStart(4, "0")}`;
      const name = fileOptions.name ?? String(base["name"]);
      const file: SlackFileObject = {
        ...base,
        id,
        name,
        title: name,
        ...(fileOptions.mimetype !== undefined ? { mimetype: fileOptions.mimetype } : {}),
        size: bytes.length,
        url_private: `${origin}/files-pri/${auth.team_id}-${id}/${encodeURIComponent(name)}`,
        url_private_download: `${origin}/files-pri/${auth.team_id}-${id}/download/${encodeURIComponent(name)}`,
        permalink: `${origin}/files/U0ALICE001/${id}/${encodeURIComponent(name)}`,
      };
      files.set(id, { file, bytes, served: 0, refused: 0 });
      return { ...file };
    },
    fileRequests: (id) => ({ served: files.get(id)?.served ?? 0, refused: files.get(id)?.refused ?? 0 }),
    callsOf: (method) => calls.filter((c) => c.method === method),
    sentTo: (channel, threadTs) => sent.filter((m) => m.channel === channel && (threadTs === undefined || m.thread_ts === threadTs)),
    waitFor(check, what, timeoutMs = 20_000) {
      return waitFor(() => check() || null, {
        what,
        timeoutMs,
        describe: () =>
          `calls so far: ${JSON.stringify(calls.map((c) => [c.method, c.status, c.error]))}; sent: ${JSON.stringify(sent.map((m) => m.text.slice(0, 80)))}`,
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
