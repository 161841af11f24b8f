/**
 * A local fake of the Telegram Bot API for tests: a real HTTP server on 127.0.0.1 (random
 * port, `node:http`) answering `POST /bot<token>/<method>` with the documented JSON
 * envelopes (`{ ok: true, result }` or `{ ok: false, error_code, description, parameters }`,
 * see ./fixtures). The REAL grammY talks to it through its `apiRoot` client option.
 *
 * Methods: getMe, getUpdates (long polling: `offset` confirms and drops earlier updates,
 * `timeout` holds the request until an update arrives), setWebhook, deleteWebhook
 * (getUpdates answers 409 while a webhook is set, as Telegram does), getWebhookInfo,
 * sendMessage (HTML checked for supported, balanced tags → 400 "can't parse entities";
 * 4,096-character limit after parsing → 400 "message is too long"), sendChatAction,
 * editMessageText (the same checks), setMyCommands, createForumTopic, getFile (a `File` for a
 * file the test registered with {@link FakeTelegramServer.addFile}: its `file_path` and size;
 * 400 "invalid file_id" for an unknown id; 400 "file is too big" over 20 MB, as for bots), and
 * the file download `GET /file/bot<token>/<file_path>` (the registered bytes; 404 for a wrong
 * token or path, as Telegram answers). A wrong token
 * gets 401. Lengths are counted as Telegram counts them: the parsed text, in UTF-16 code units.
 * Every call's parameters are recorded ({@link FakeTelegramServer.calls}), e.g. to check
 * `link_preview_options`.
 *
 * The test pushes updates ({@link FakeTelegramServer.pushUpdate}, built with
 * {@link telegramUpdate} from the fixtures), reads what the bot sent
 * ({@link FakeTelegramServer.sent}, {@link FakeTelegramServer.calls}), and queues
 * failures ({@link FakeTelegramServer.failNext}, e.g. a 429 with `retry_after`).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { waitFor } from "../../support/wait-for.js";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** A fixture from ./fixtures (parsed JSON; a fresh copy each call). */
export function telegramFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), "utf8")) as T;
}

/** One API call the bot made (successful or not). */
export interface TelegramCall {
  method: string;
  params: Record<string, unknown>;
  /** The HTTP status answered. */
  status: number;
}

/** A message the bot sent (sendMessage that succeeded), with its current text (after edits). */
export interface SentTelegramMessage {
  message_id: number;
  chat_id: string;
  text: string;
  parse_mode: string | null;
  message_thread_id: number | null;
  /** `reply_parameters.message_id` (or the legacy `reply_to_message_id`). */
  reply_to: number | null;
  /** The text as Telegram would display it (tags removed, entities decoded, for HTML). */
  plain: string;
}

/** A failure to answer the next call(s) of a method with. */
export interface TelegramFailure {
  status: number;
  body: Record<string, unknown>;
}

/** A file the test registered ({@link FakeTelegramServer.addFile}). */
export interface FakeTelegramFile {
  /** The `file_id` to put in an update (`photo[].file_id`, `voice.file_id`, …). */
  fileId: string;
  fileUniqueId: string;
  /** The `file_path` getFile answers. */
  filePath: string;
  /** The declared size (`file_size`). */
  size: number;
}

/** A running fake. */
export interface FakeTelegramServer {
  /** The Bot API root to configure (`adapters.telegram.apiRoot`), `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The token it accepts. */
  readonly token: string;
  /** The bot (`getMe`'s result). */
  readonly me: { id: number; username: string };
  /** Every call, oldest first (a live array). */
  readonly calls: TelegramCall[];
  /** Every message sent, oldest first (a live array). */
  readonly sent: SentTelegramMessage[];
  /** The current webhook (`null`: none, so polling works). */
  readonly webhook: { url: string; secret: string | null } | null;
  /** Queues an update (its `update_id` is assigned here) and wakes a pending getUpdates; returns the id. */
  pushUpdate(update: Record<string, unknown>): number;
  /** Updates not yet confirmed by a getUpdates offset. */
  pendingUpdates(): number;
  /** The next `count` calls of `method` fail with `failure`. */
  failNext(method: string, failure: TelegramFailure, count?: number): void;
  /** The next call of `method` is not answered until the returned function is called (then as usual). */
  holdNext(method: string): () => void;
  /** Calls of one method. */
  callsOf(method: string): TelegramCall[];
  /** Messages sent to one chat (optionally one topic), in order. */
  sentTo(chatId: string | number, threadId?: number | null): SentTelegramMessage[];
  /** Waits until `check` returns a truthy value (bounded); throws with `what` and the calls so far. */
  waitFor<T>(check: () => T | null | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  /**
   * Registers a file the bot can download: getFile answers its `file_path`, and
   * `/file/bot<token>/<file_path>` serves exactly `bytes` (with `mimeType` as Content-Type).
   * `declaredSize` (default the length of `bytes`) is what getFile tells; over 20 MB getFile
   * answers "file is too big".
   */
  addFile(bytes: Uint8Array, options?: { fileId?: string; filePath?: string; mimeType?: string; declaredSize?: number }): FakeTelegramFile;
  /** Lets a file's download link lapse (Telegram keeps a `file_path` valid for an hour): getFile still answers, the download is 404. */
  expireFile(fileId: string): void;
  /** How many times a file was downloaded (`/file/bot<token>/…` answered 200). */
  downloads(fileId: string): number;
  /** Stops the server (pending long polls are answered with no updates). */
  close(): Promise<void>;
}

/** The most a bot may download (getFile refuses larger files). */
const BOT_DOWNLOAD_LIMIT = 20 * 1024 * 1024;

const ALLOWED_TAGS = new Set(["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "blockquote", "tg-spoiler", "span", "tg-emoji"]);

/** Checks Telegram HTML like the Bot API: known tags, properly nested, known entities. Returns the plain text or an error description. */
export function parseTelegramHtml(html: string): { plain: string } | { error: string } {
  const stack: string[] = [];
  let plain = "";
  let i = 0;
  while (i < html.length) {
    const c = html[i]!;
    if (c === "<") {
      const end = html.indexOf(">", i);
      if (end < 0) return { error: `Bad Request: can't parse entities: Unclosed start tag at byte offset ${i}` };
      const inner = html.slice(i + 1, end);
      const closing = inner.startsWith("/");
      const name = (closing ? inner.slice(1) : inner).trim().split(/[\s=]/u)[0]!.toLowerCase();
      if (!ALLOWED_TAGS.has(name)) return { error: `Bad Request: can't parse entities: Unsupported start tag "${name}" at byte offset ${i}` };
      if (closing) {
        if (stack.pop() !== name)
          return { error: `Bad Request: can't parse entities: Unmatched end tag at byte offset ${i}, expected "</${stack.at(-1) ?? ""}>", found "</${name}>"` };
      } else {
        stack.push(name);
      }
      i = end + 1;
    } else if (c === "&") {
      const end = html.indexOf(";", i);
      const entity = end < 0 ? "" : html.slice(i + 1, end);
      const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };
      if (named[entity] !== undefined) plain += named[entity];
      else if (/^#\d+$/u.test(entity)) plain += String.fromCodePoint(Number(entity.slice(1)));
      else if (/^#x[0-9a-f]+$/iu.test(entity)) plain += String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
      else return { error: `Bad Request: can't parse entities: Unsupported entity at byte offset ${i}` };
      i = end + 1;
    } else {
      plain += c;
      i += 1;
    }
  }
  if (stack.length > 0) return { error: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${stack.at(-1)}"` };
  return { plain };
}

/**
 * An update from a fixture with fields of its message replaced: `message_id`, `text`,
 * `chat` (merged), `from` (merged), and any other top-level message fields.
 */
export function telegramUpdate(
  fixture: string,
  overrides: { message_id?: number; text?: string; chat?: Record<string, unknown>; from?: Record<string, unknown>; [field: string]: unknown } = {},
): Record<string, unknown> {
  const update = telegramFixture(fixture);
  const kind = Object.keys(update).find((k) => k !== "update_id")!;
  const message = update[kind] as Record<string, unknown>;
  const { chat, from, ...rest } = overrides;
  if (chat !== undefined) message["chat"] = { ...(message["chat"] as object), ...chat };
  if (from !== undefined) message["from"] = { ...(message["from"] as object), ...from };
  Object.assign(message, rest);
  if (typeof overrides.text === "string" && Array.isArray(message["entities"])) {
    // Keep only entities that still fit the new text (a leading mention stays when the text keeps it).
    message["entities"] = (message["entities"] as Array<{ offset: number; length: number }>).filter((e) => e.offset + e.length <= overrides.text!.length);
  }
  return update;
}

function ok(result: unknown): { status: number; body: Record<string, unknown> } {
  return { status: 200, body: { ok: true, result } };
}

function fail(status: number, description: string, parameters?: Record<string, unknown>): { status: number; body: Record<string, unknown> } {
  return { status, body: { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) } };
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  const type = String(req.headers["content-type"] ?? "");
  if (raw === "") return {};
  if (type.includes("application/json")) return JSON.parse(raw) as Record<string, unknown>;
  if (type.includes("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(raw));
  throw new Error(`fake telegram: unsupported content type ${type}`);
}

/** Options of {@link startFakeTelegramServer}. */
export interface FakeTelegramOptions {
  token?: string;
  /** Listen on this port (e.g. the port of a fake that was closed to simulate an outage; default a free one). */
  port?: number;
  /** Called with every message the bot sends, as it is recorded (the gateway benchmark waits on it instead of polling `sent`). */
  onSent?: (message: SentTelegramMessage) => void;
}

/** Starts the fake. */
export async function startFakeTelegramServer(options: FakeTelegramOptions = {}): Promise<FakeTelegramServer> {
  const token = options.token ?? "7000000001:AAFakeTokenForTestsOnly_abcdefghijkl";
  const me = telegramFixture<{ id: number; username: string }>("get-me");
  const calls: TelegramCall[] = [];
  const sent: SentTelegramMessage[] = [];
  const updates: Array<Record<string, unknown> & { update_id: number }> = [];
  const failures = new Map<string, TelegramFailure[]>();
  const holds = new Map<string, Promise<void>>();
  const waiters = new Set<() => void>();
  const messageIds = new Map<string, number>();
  let nextUpdateId = 500_000;
  let nextTopic = 1000;
  const files = new Map<string, FakeTelegramFile & { bytes: Uint8Array; mimeType: string; downloads: number; expired: boolean }>();
  let webhook: { url: string; secret: string | null } | null = null;
  let closed = false;

  const wake = (): void => {
    for (const w of [...waiters]) w();
  };

  async function answer(method: string, params: Record<string, unknown>, req: IncomingMessage): Promise<{ status: number; body: Record<string, unknown> }> {
    const hold = holds.get(method);
    if (hold !== undefined) {
      holds.delete(method);
      await hold;
    }
    const queued = failures.get(method);
    if (queued !== undefined && queued.length > 0) {
      const failure = queued.shift()!;
      return { status: failure.status, body: failure.body };
    }
    switch (method) {
      case "getMe":
        return ok(telegramFixture("get-me"));
      case "getUpdates": {
        if (webhook !== null) return { status: 409, body: telegramFixture("error-409-webhook-active") };
        const offset = Number(params["offset"] ?? 0);
        const limit = Math.min(100, Math.max(1, Number(params["limit"] ?? 100)));
        const timeout = Math.min(50, Math.max(0, Number(params["timeout"] ?? 0)));
        // A positive offset confirms every update before it.
        if (offset > 0) while (updates.length > 0 && updates[0]!.update_id < offset) updates.shift();
        const pick = (): Array<Record<string, unknown>> => updates.filter((u) => u.update_id >= offset).slice(0, limit);
        let batch = pick();
        if (batch.length === 0 && timeout > 0 && !closed) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              waiters.delete(done);
              req.off("close", done);
              resolve();
            };
            const timer = setTimeout(done, timeout * 1000);
            waiters.add(done);
            req.on("close", done);
          });
          batch = pick();
        }
        return ok(batch);
      }
      case "setWebhook":
        webhook = { url: String(params["url"]), secret: typeof params["secret_token"] === "string" ? params["secret_token"] : null };
        wake();
        return ok(true);
      case "deleteWebhook":
        webhook = null;
        if (params["drop_pending_updates"] === true) updates.length = 0;
        return ok(true);
      case "getWebhookInfo":
        return ok({ url: webhook?.url ?? "", has_custom_certificate: false, pending_update_count: updates.length });
      case "sendMessage": {
        const chatId = String(params["chat_id"] ?? "");
        const text = typeof params["text"] === "string" ? params["text"] : "";
        if (chatId === "") return fail(400, "Bad Request: chat not found");
        const mode = typeof params["parse_mode"] === "string" ? params["parse_mode"] : null;
        let plain = text;
        if (mode === "HTML") {
          const parsed = parseTelegramHtml(text);
          if ("error" in parsed) return fail(400, parsed.error);
          plain = parsed.plain;
        }
        if (plain.trim() === "") return { status: 400, body: telegramFixture("error-400-empty") };
        if (plain.length > 4096) return { status: 400, body: telegramFixture("error-400-too-long") };
        const id = (messageIds.get(chatId) ?? 10_000) + 1;
        messageIds.set(chatId, id);
        const replyParameters = params["reply_parameters"] as { message_id?: number } | undefined;
        const threadId = typeof params["message_thread_id"] === "number" ? params["message_thread_id"] : null;
        const record: SentTelegramMessage = {
          message_id: id,
          chat_id: chatId,
          text,
          parse_mode: mode,
          message_thread_id: threadId,
          reply_to: replyParameters?.message_id ?? (typeof params["reply_to_message_id"] === "number" ? params["reply_to_message_id"] : null),
          plain,
        };
        sent.push(record);
        options.onSent?.(record);
        const chat =
          Number(chatId) > 0 ? { id: Number(chatId), type: "private", first_name: "User" } : { id: Number(chatId), type: "supergroup", title: "Group" };
        return ok({
          message_id: id,
          from: { id: me.id, is_bot: true, first_name: "Threadline Test", username: me.username },
          chat,
          date: Math.floor(Date.now() / 1000),
          text: plain,
          ...(threadId !== null ? { message_thread_id: threadId, is_topic_message: true } : {}),
        });
      }
      case "editMessageText": {
        const chatId = String(params["chat_id"] ?? "");
        const target = sent.find((m) => m.chat_id === chatId && m.message_id === Number(params["message_id"]));
        if (target === undefined) return fail(400, "Bad Request: message to edit not found");
        const text = String(params["text"] ?? "");
        const mode = typeof params["parse_mode"] === "string" ? params["parse_mode"] : null;
        let plain = text;
        if (mode === "HTML") {
          const parsed = parseTelegramHtml(text);
          if ("error" in parsed) return fail(400, parsed.error);
          plain = parsed.plain;
        }
        if (plain.trim() === "") return { status: 400, body: telegramFixture("error-400-empty") };
        if (plain.length > 4096) return { status: 400, body: telegramFixture("error-400-too-long") };
        target.text = text;
        target.parse_mode = mode;
        target.plain = plain;
        return ok({ message_id: target.message_id, chat: { id: Number(chatId), type: "private" }, date: Math.floor(Date.now() / 1000), text: target.text });
      }
      case "sendChatAction":
        if (params["chat_id"] === undefined || params["action"] === undefined) return fail(400, "Bad Request: chat_id and action are required");
        return ok(true);
      case "setMyCommands": {
        const commands = params["commands"];
        if (!Array.isArray(commands)) return fail(400, "Bad Request: commands must be an array");
        for (const c of commands as Array<{ command?: string; description?: string }>) {
          if (!/^[a-z0-9_]{1,32}$/u.test(c.command ?? "") || (c.description ?? "").length < 1 || (c.description ?? "").length > 256) {
            return fail(400, "Bad Request: BOT_COMMAND_INVALID");
          }
        }
        return ok(true);
      }
      case "createForumTopic": {
        const name = String(params["name"] ?? "");
        if (name.length < 1 || name.length > 128) return fail(400, "Bad Request: TOPIC_NAME_INVALID");
        if (!String(params["chat_id"] ?? "").startsWith("-100")) return fail(400, "Bad Request: the chat is not a forum");
        nextTopic += 1;
        return ok({ message_thread_id: nextTopic, name, icon_color: 7322096 });
      }
      case "getFile": {
        const file = files.get(String(params["file_id"] ?? ""));
        if (file === undefined) return { status: 400, body: telegramFixture("error-400-invalid-file-id") };
        if (file.size > BOT_DOWNLOAD_LIMIT) return { status: 400, body: telegramFixture("error-400-file-too-big") };
        const result = telegramFixture("get-file");
        Object.assign(result, { file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.size, file_path: file.filePath });
        return ok(result);
      }
      default:
        return fail(404, "Not Found");
    }
  }

  /** `GET /file/bot<token>/<file_path>`: the registered bytes (Telegram answers 404 for a wrong token or path). */
  const serveFile = (req: IncomingMessage, res: ServerResponse, path: string): void => {
    const match = /^\/file\/bot([^/]+)\/(.+)$/u.exec(path);
    const file =
      match !== null && decodeURIComponent(match[1]!) === token ? [...files.values()].find((f) => f.filePath === decodeURIComponent(match[2]!)) : undefined;
    if (file === undefined || file.expired || req.method !== "GET") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify(telegramFixture("error-404-file")));
      return;
    }
    file.downloads += 1;
    res.writeHead(200, { "content-type": file.mimeType, "content-length": String(file.bytes.length) }).end(Buffer.from(file.bytes));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "").split("?")[0]!;
    if (path.startsWith("/file/")) {
      serveFile(req, res, path);
      return;
    }
    void (async () => {
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/u.exec((req.url ?? "").split("?")[0]!);
      let result: { status: number; body: Record<string, unknown> };
      let method = "";
      let params: Record<string, unknown> = {};
      try {
        params = await readBody(req);
        if (match === null) result = fail(404, "Not Found");
        else {
          method = match[2]!;
          result = decodeURIComponent(match[1]!) !== token ? { status: 401, body: telegramFixture("error-401") } : await answer(method, params, req);
        }
      } catch (error) {
        result = fail(400, `Bad Request: ${(error as Error).message}`);
      }
      if (method !== "") calls.push({ method, params, status: result.status });
      if (!res.destroyed) res.writeHead(result.status, { "content-type": "application/json" }).end(JSON.stringify(result.body));
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | null = null;

  const fake: FakeTelegramServer = {
    url: `http://127.0.0.1:${port}`,
    token,
    me: { id: me.id, username: me.username },
    calls,
    sent,
    get webhook() {
      return webhook;
    },
    pushUpdate(update) {
      nextUpdateId += 1;
      updates.push({ ...update, update_id: nextUpdateId });
      wake();
      return nextUpdateId;
    },
    pendingUpdates: () => updates.length,
    holdNext(method) {
      let release: () => void = () => {};
      holds.set(method, new Promise<void>((resolve) => (release = resolve)));
      return () => release();
    },
    failNext(method, failure, count = 1) {
      const list = failures.get(method) ?? [];
      for (let i = 0; i < count; i++) list.push(failure);
      failures.set(method, list);
    },
    callsOf: (method) => calls.filter((c) => c.method === method),
    addFile(bytes, fileOptions = {}) {
      const n = files.size + 1;
      const fileId = fileOptions.fileId ?? `BQACAgQAAxkBAAIB${String(n).padStart(4, "0")}file`;
      const file = {
        fileId,
        fileUniqueId: `AgAD${String(n).padStart(4, "0")}`,
        filePath: fileOptions.filePath ?? `documents/file_${n}.bin`,
        size: fileOptions.declaredSize ?? bytes.length,
        bytes,
        mimeType: fileOptions.mimeType ?? "application/octet-stream",
        downloads: 0,
        expired: false,
      };
      files.set(fileId, file);
      return { fileId: file.fileId, fileUniqueId: file.fileUniqueId, filePath: file.filePath, size: file.size };
    },
    expireFile(fileId) {
      const file = files.get(fileId);
      if (file === undefined) throw new Error(`fake telegram: no file ${fileId} was added`);
      file.expired = true;
    },
    downloads: (fileId) => files.get(fileId)?.downloads ?? 0,
    sentTo: (chatId, threadId) => sent.filter((m) => m.chat_id === String(chatId) && (threadId === undefined || m.message_thread_id === threadId)),
    waitFor(check, what, timeoutMs = 20_000) {
      return waitFor(() => check() || null, {
        what,
        timeoutMs,
        describe: () =>
          `calls so far: ${JSON.stringify(calls.map((c) => [c.method, c.status]))}; sent: ${JSON.stringify(sent.map((m) => m.plain.slice(0, 80)))}`,
      });
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        wake();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
  return fake;
}
