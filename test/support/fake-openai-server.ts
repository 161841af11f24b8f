/**
 * A deterministic OpenAI-compatible chat-completions server for tests: a real HTTP
 * server on 127.0.0.1 (random port) built on `node:http`, so the code under test uses
 * its real `fetch` path.
 *
 * Routes (under the base URL `http://127.0.0.1:<port>/v1`):
 * - `POST /v1/chat/completions`: answered, in this order of precedence, by
 *   1. the bearer-key check (`apiKey` option): 401 with an OpenAI-style error body;
 *   1b. with `contextWindow`, the window check: a request over the window (counted with
 *      `tokenCounterFor(model)`) gets OpenAI's 400 `context_length_exceeded`;
 *   2. the script (`script` option / `setScript`), when it returns a reply;
 *   3. the model check (`models` option): 404 `model_not_found` for other models;
 *   4. the fixed title (`title` option), when the request is a title request;
 *   5. the queue (`replies` option / `enqueue`), one reply per request;
 *   6. the default reply: `Reply to: <last user text>`, with `usage.prompt_tokens` = number
 *      of whitespace-separated words in every message's text, `completion_tokens` = words
 *      in the reply.
 *   A request with `stream: true` gets a successful JSON completion as SSE chunks (then
 *   `data: [DONE]`), with a usage chunk when `stream_options.include_usage` is set. With
 *   `streamTokens` the text goes out one word per chunk, `tokenDelayMs` apart; a reply's
 *   `holdLastToken` promise keeps the last word (and the end of the stream) back until it
 *   settles, so a test can look at what a client received mid-stream.
 *   With `rejectTools`, a request that carries `tools` is refused (before the script) the way
 *   a server without tool support refuses it: Ollama, vLLM or llama.cpp wording.
 *   With `rejectImages`, a request whose messages carry an `image_url` part is refused (before
 *   the script and the tool check) the way a server whose model cannot take images refuses it:
 *   OpenAI, vLLM, Ollama, llama.cpp or LM Studio wording (see `FAKE_IMAGE_REJECTIONS`).
 * - `POST /v1/audio/transcriptions` (kind `"transcription"`): the multipart/form-data upload
 *   (`file`, `model`, optional `response_format`, `language`) is parsed with the platform's
 *   `Request.formData()` and recorded in `server.transcriptions` (`{ model, fileName, mimeType,
 *   bytes }`, also on the request as `upload`) before any check; after the key check and the
 *   script, it is answered `{ "text": … }` (plain text with `response_format=text`) from the
 *   `transcript` option (a string or a function of the upload; default `Transcript of <n> bytes`).
 *   A body without a `file` or without a `model` gets OpenAI's 400.
 * - `GET /v1/models`: the `models` option (or `["fake-model"]`) as a model list.
 * - anything else: 404 with an OpenAI-style error body.
 *
 * Delays (`delayMs` option or per reply) end early when the client disconnects or the
 * server closes, so a closed server never keeps the process alive.
 *
 * @example
 * const server = await startFakeOpenAiServer({ apiKey: "sk-test" });
 * try {
 *   server.enqueue(fakeToolCallReply([{ name: "search", arguments: { q: "x" } }]));
 *   const agent = new OpenAiCompatibleAgent({ baseUrl: server.url, apiKey: "sk-test", model: "fake-model" });
 *   // … run turns, then inspect server.requests[0].body.messages
 * } finally {
 *   await server.close();
 * }
 *
 * @module
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tokenCounterFor } from "../../src/context/token-count.js";
import type { ConversationMessage } from "../../src/store/index.js";
import {
  defaultTranscript,
  FAKE_IMAGE_REJECTIONS,
  type FakeImageRejection,
  type FakeTranscription,
  hasImagePart,
  imageRefusalBody,
  parseTranscriptionUpload,
} from "./fake-openai-media.js";

export { FAKE_IMAGE_REJECTIONS, type FakeImageRejection, type FakeTranscription } from "./fake-openai-media.js";

/** A message as received in a chat-completions request. */
export interface FakeChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
  [key: string]: unknown;
}

/** A chat-completions request body as received (other fields kept as sent). */
export interface FakeChatBody {
  model?: string;
  messages?: FakeChatMessage[];
  max_tokens?: number;
  temperature?: number;
  stream?: boolean;
  [key: string]: unknown;
}

/** One request the server received (recorded before any check, so rejected requests are there too). */
export interface FakeOpenAiRequest {
  method: string;
  /** The path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Lower-cased header names, as Node gives them. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or `null` when the body was empty or not a JSON object. */
  body: FakeChatBody | null;
  rawBody: string;
  /**
   * `"title"` for a title request, `"chat"` for other chat completions, `"transcription"` for
   * `POST /v1/audio/transcriptions`, `"other"` for the rest.
   */
  kind: "chat" | "title" | "transcription" | "other";
  /** A transcription request's parsed upload (`null` when its body was not a multipart upload with a `file`). */
  upload?: FakeTranscription | null;
  /** 0-based position among every request received. */
  index: number;
  /**
   * With `contextWindow`: the request's tokens as the window check counted them (messages,
   * tools, `max_tokens`), for chat and title requests; otherwise undefined.
   */
  tokens?: number;
  /** With `contextWindow`: the request was refused as over the window (400 `context_length_exceeded`). */
  overWindow?: boolean;
}

/** A reply to send. With neither `json` nor `text`, the default reply for the request is sent with `status`. */
export interface FakeReply {
  /** HTTP status (default 200). */
  status?: number;
  /** A JSON body. */
  json?: unknown;
  /** A raw body, sent as is (wins over `json`), e.g. malformed JSON or HTML. */
  text?: string;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Wait this long before replying, in milliseconds (replaces the server-wide `delayMs`). */
  delayMs?: number;
  /** Streamed replies: the last word and the end of the stream wait until this settles. */
  holdLastToken?: Promise<unknown>;
  /**
   * Close the connection without answering, as a server does when it drops an idle keep-alive
   * connection just as a client reuses it (the client sees ECONNRESET / "other side closed").
   */
  resetConnection?: boolean;
}

/** How a server without tool support words its refusal (see {@link FAKE_TOOL_REJECTIONS}). */
export type FakeToolRejection = "ollama" | "vllm" | "llamacpp";

/** The refusals of real servers without tool support: status and message, as they send them. */
export const FAKE_TOOL_REJECTIONS: Record<FakeToolRejection, { status: number; message: (model: string) => string }> = {
  // Ollama: `registry.ollama.ai/library/<model> does not support tools` (400).
  ollama: { status: 400, message: (model) => `registry.ollama.ai/library/${model} does not support tools` },
  // vLLM started without --enable-auto-tool-choice (400).
  vllm: { status: 400, message: () => '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' },
  // llama.cpp's server started without --jinja (500).
  llamacpp: { status: 500, message: () => "tools param requires --jinja flag" },
};

/** Decides the reply to a request; return `null`/`undefined` to let the server answer normally. */
export type FakeScript = (request: FakeOpenAiRequest) => FakeReply | null | undefined | Promise<FakeReply | null | undefined>;

/** Options of {@link startFakeOpenAiServer}. */
export interface FakeOpenAiServerOptions {
  /** Require `Authorization: Bearer <apiKey>` (401 with an OpenAI-style error otherwise). */
  apiKey?: string;
  /** Delay every reply by this many milliseconds (default 0). */
  delayMs?: number;
  /** The answer to title requests (default `"Fake Conversation Title"`); `null` answers them like any chat. */
  title?: string | null;
  /** Decides whether a request is a title request (default: a system message asks to write/give/… a title). */
  isTitleRequest?: (body: FakeChatBody) => boolean;
  /** Known models; when set, a request for another model gets 404 `model_not_found`. */
  models?: string[];
  /** Replies for the next chat requests, in order (title requests do not consume them). */
  replies?: FakeReply[];
  /** See {@link FakeScript}. */
  script?: FakeScript;
  /** Stream replies one word per chunk (default: the whole text in one chunk). */
  streamTokens?: boolean;
  /** Milliseconds between streamed word chunks (default 0). */
  tokenDelayMs?: number;
  /** Refuse every request that carries `tools`, worded like this server (see {@link FAKE_TOOL_REJECTIONS}). */
  rejectTools?: FakeToolRejection;
  /** Refuse every chat request that carries an image part, worded like this server (see {@link FAKE_IMAGE_REJECTIONS}). */
  rejectImages?: FakeImageRejection;
  /** The answer to transcription uploads: a text, or a function of the upload (default `Transcript of <n> bytes`). */
  transcript?: string | ((upload: FakeTranscription) => string);
  /** The `model` of every completion (the model that answered); default: the requested one. */
  servedModel?: string;
  /**
   * The model's context window in tokens: every chat-completions request (title requests too) is
   * counted with `tokenCounterFor(model)` (src/context/token-count.ts: messages, plus the tools
   * as JSON text, plus `max_tokens`) and refused the way OpenAI refuses it, 400 with code
   * `context_length_exceeded`, when the count is over the window. See {@link FakeOpenAiServer.window}.
   */
  contextWindow?: number;
  /** Called with every request and the reply decided for it (before any delay), refused ones too. */
  onReply?: (request: FakeOpenAiRequest, reply: FakeReply) => void;
}

/** What the window check saw (see {@link FakeOpenAiServerOptions.contextWindow}). */
export interface FakeWindowStats {
  /** The window, in tokens. */
  window: number;
  /** Requests counted. */
  counted: number;
  /** The largest request counted, in tokens (0 before any). */
  maxTokens: number;
  /** Requests refused as over the window. */
  refusals: number;
}

/** A running fake server. */
export interface FakeOpenAiServer {
  /** The base URL to configure, `http://127.0.0.1:<port>/v1` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Every request received, oldest first (a live array). */
  readonly requests: FakeOpenAiRequest[];
  /** Every transcription upload received (parsed), oldest first (a live array; refused ones too). */
  readonly transcriptions: FakeTranscription[];
  /** The chat-completions requests that were not title requests. */
  chatRequests(): FakeOpenAiRequest[];
  /** Replaces the script (`null` removes it). */
  setScript(script: FakeScript | null): void;
  /** Queues replies for the next chat requests. */
  enqueue(...replies: FakeReply[]): void;
  /** Clears the recorded requests (and transcriptions), the queue and the script. */
  reset(): void;
  /** The window check's figures; `null` without `contextWindow`. */
  window(): FakeWindowStats | null;
  /** Stops the server, ending pending delays and open connections. Safe to call twice. */
  close(): Promise<void>;
}

/** The default answer to title requests. */
export const FAKE_TITLE = "Fake Conversation Title";

const TITLE_ASK = /\b(?:write|give|generate|propose|suggest|create|make)\b[^\n.]*\btitle\b/iu;

/**
 * Starts a fake OpenAI-compatible server on 127.0.0.1 with a random port.
 *
 * @example
 * const server = await startFakeOpenAiServer();
 * const response = await fetch(`${server.url}/chat/completions`, {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi there" }] }),
 * });
 * (await response.json()).choices[0].message.content; // "Reply to: hi there"
 * await server.close();
 */
export async function startFakeOpenAiServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const {
    apiKey,
    delayMs = 0,
    title = FAKE_TITLE,
    models,
    streamTokens = false,
    tokenDelayMs = 0,
    rejectTools,
    rejectImages,
    servedModel,
    contextWindow,
    onReply,
  } = options;
  const transcriptOf =
    typeof options.transcript === "function"
      ? options.transcript
      : (upload: FakeTranscription) => (options.transcript as string | undefined) ?? defaultTranscript(upload);
  const windowStats: FakeWindowStats | null = contextWindow === undefined ? null : { window: contextWindow, counted: 0, maxTokens: 0, refusals: 0 };
  const isTitleRequest = options.isTitleRequest ?? defaultIsTitleRequest;
  const requests: FakeOpenAiRequest[] = [];
  const transcriptions: FakeTranscription[] = [];
  const queue: FakeReply[] = [...(options.replies ?? [])];
  let script: FakeScript | null = options.script ?? null;
  let completions = 0;
  const closing = new AbortController();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const bytes = await readBody(req);
    const rawBody = bytes.toString("utf8");
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const method = req.method ?? "GET";
    const isTranscription = method === "POST" && path === "/v1/audio/transcriptions";
    const body = isTranscription ? null : parseBody(rawBody);
    const isChat = method === "POST" && path === "/v1/chat/completions";
    const kind: FakeOpenAiRequest["kind"] = isTranscription
      ? "transcription"
      : isChat && body !== null && title !== null && isTitleRequest(body)
        ? "title"
        : isChat
          ? "chat"
          : "other";
    const request: FakeOpenAiRequest = { method, path, headers: req.headers, body, rawBody, kind, index: requests.length };
    if (isTranscription) {
      request.upload = await parseTranscriptionUpload(bytes, req.headers["content-type"]);
      if (request.upload !== null) transcriptions.push(request.upload);
    }
    requests.push(request);

    // The client going away (or the server closing) ends any delay.
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) gone.abort();
    });
    const signal = AbortSignal.any([gone.signal, closing.signal]);

    const reply = await decide(request);
    onReply?.(request, reply);
    if (reply.resetConnection === true) {
      req.socket.destroy();
      return;
    }
    const wait = reply.delayMs ?? delayMs;
    if (wait > 0 && !(await delay(wait, signal))) {
      res.destroy();
      return;
    }
    if (signal.aborted) return;
    await send(res, request, reply, signal);
  };

  const decide = async (request: FakeOpenAiRequest): Promise<FakeReply> => {
    const { path, method, body } = request;
    if (apiKey !== undefined && request.headers.authorization !== `Bearer ${apiKey}`) {
      const given = request.headers.authorization === undefined ? "You didn't provide an API key." : "Incorrect API key provided.";
      return fakeErrorReply(401, given, { type: "invalid_request_error", code: "invalid_api_key" });
    }
    if (rejectImages !== undefined && request.kind !== "other" && hasImagePart(body?.messages)) {
      return { status: FAKE_IMAGE_REJECTIONS[rejectImages].status, json: imageRefusalBody(rejectImages, String(body?.model)) };
    }
    if (rejectTools !== undefined && Array.isArray(body?.tools) && body.tools.length > 0) {
      const rejection = FAKE_TOOL_REJECTIONS[rejectTools];
      return fakeErrorReply(rejection.status, rejection.message(String(body.model)));
    }
    if (windowStats !== null && request.kind !== "other" && body !== null && Array.isArray(body.messages)) {
      const refusal = await checkWindow(request, body, windowStats);
      if (refusal !== null) return refusal;
    }
    if (script !== null) {
      const scripted = await script(request);
      if (scripted !== null && scripted !== undefined) return withDefaultBody(scripted, request);
    }
    if (method === "GET" && path === "/v1/models") {
      return {
        json: {
          object: "list",
          data: (models ?? ["fake-model"]).map((id) => ({ id, object: "model", created: 0, owned_by: "fake" })),
        },
      };
    }
    if (request.kind === "transcription") return transcriptionReply(request.upload ?? null);
    if (request.kind === "other") {
      return fakeErrorReply(404, `Unknown request URL: ${method} ${path}.`, { code: "unknown_url" });
    }
    if (body === null || !Array.isArray(body.messages)) {
      return fakeErrorReply(400, "'messages' is a required property and must be an array.");
    }
    if (models !== undefined && !models.includes(String(body.model))) {
      return fakeErrorReply(404, `The model \`${String(body.model)}\` does not exist or you do not have access to it.`, {
        code: "model_not_found",
      });
    }
    if (request.kind === "title" && title !== null) return fakeTextReply(title, { messages: body.messages });
    const queued = queue.shift();
    if (queued !== undefined) return withDefaultBody(queued, request);
    return defaultReply(body);
  };

  const send = async (res: ServerResponse, request: FakeOpenAiRequest, reply: FakeReply, signal: AbortSignal): Promise<void> => {
    const status = reply.status ?? 200;
    const headers: Record<string, string> = { ...reply.headers };
    if (reply.text !== undefined) {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...headers });
      res.end(reply.text);
      return;
    }
    const json = servedModel !== undefined && isCompletion(reply.json) ? { ...reply.json, model: servedModel } : (reply.json ?? {});
    if (request.body?.stream === true && status === 200 && isCompletion(json)) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
      res.flushHeaders();
      const includeUsage = (request.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
      const chunks = toChunks(json, includeUsage, streamTokens);
      for (let i = 0; i < chunks.length; i++) {
        const chunk = chunks[i]!;
        if (i > 0 && chunk.token && tokenDelayMs > 0 && !(await delay(tokenDelayMs, signal))) {
          res.destroy();
          return;
        }
        if (chunk.last && reply.holdLastToken !== undefined) {
          const released = await Promise.race([
            reply.holdLastToken.then(
              () => true,
              () => true,
            ),
            new Promise<boolean>((resolve) => {
              if (signal.aborted) resolve(false);
              signal.addEventListener("abort", () => resolve(false), { once: true });
            }),
          ]);
          if (!released) {
            res.destroy();
            return;
          }
        }
        res.write(`data: ${JSON.stringify(chunk.body)}\n\n`);
      }
      res.end("data: [DONE]\n\n");
      return;
    }
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(json));
  };

  const transcriptionReply = (upload: FakeTranscription | null): FakeReply => {
    if (upload === null) return fakeErrorReply(400, "Could not parse multipart form", { code: null });
    if (upload.model === "") return fakeErrorReply(400, "you must provide a model parameter");
    const text = transcriptOf(upload);
    if (upload.responseFormat === "text") return { text };
    return { json: { text } };
  };

  const withDefaultBody = (reply: FakeReply, request: FakeOpenAiRequest): FakeReply => {
    if (reply.json !== undefined || reply.text !== undefined) return reply;
    if (request.kind === "transcription") return { ...transcriptionReply(request.upload ?? null), ...reply };
    const fallback = request.body !== null && Array.isArray(request.body.messages) ? defaultReply(request.body) : {};
    return { ...fallback, ...reply };
  };

  const defaultReply = (body: FakeChatBody): FakeReply => {
    const messages = body.messages ?? [];
    const lastUser = [...messages].reverse().find((message) => message.role === "user");
    const content = `Reply to: ${lastUser === undefined ? "" : messageText(lastUser.content)}`;
    return fakeTextReply(content, { messages, model: body.model, id: `chatcmpl-fake-${++completions}` });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `Fake server failure: ${String(error)}`, type: "server_error" } }));
      } else {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | null = null;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    transcriptions,
    chatRequests: () => requests.filter((request) => request.kind === "chat"),
    setScript(next) {
      script = next;
    },
    enqueue(...replies) {
      queue.push(...replies);
    },
    reset() {
      requests.length = 0;
      transcriptions.length = 0;
      queue.length = 0;
      script = null;
    },
    window: () => (windowStats === null ? null : { ...windowStats }),
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** A tool call to put in a fake reply; `arguments` objects are JSON-encoded. */
export interface FakeToolCallSpec {
  name: string;
  arguments?: string | Record<string, unknown>;
  /** Default `call_<n>` (1-based within the reply). */
  id?: string;
}

/** Extra fields of {@link fakeCompletion}. */
export interface FakeCompletionFields {
  content?: string | null;
  toolCalls?: FakeToolCallSpec[];
  finishReason?: string;
  reasoning?: string;
  /** Raw `usage` object (default: word counts when `messages` is given, else none). */
  usage?: Record<string, unknown>;
  /** The request messages, to compute word-count usage. */
  messages?: FakeChatMessage[];
  model?: string | undefined;
  id?: string;
}

/**
 * A chat-completion response body.
 *
 * @example
 * fakeCompletion({ content: "Hi", usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } })
 */
export function fakeCompletion(fields: FakeCompletionFields = {}): Record<string, unknown> {
  const content = fields.content === undefined ? (fields.toolCalls ? null : "") : fields.content;
  const message: Record<string, unknown> = { role: "assistant", content };
  if (fields.toolCalls !== undefined && fields.toolCalls.length > 0) {
    message.tool_calls = fields.toolCalls.map((call, index) => ({
      id: call.id ?? `call_${index + 1}`,
      type: "function",
      function: {
        name: call.name,
        arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
      },
    }));
  }
  if (fields.reasoning !== undefined) message.reasoning = fields.reasoning;
  const finishReason = fields.finishReason ?? (message.tool_calls ? "tool_calls" : "stop");
  const body: Record<string, unknown> = {
    id: fields.id ?? "chatcmpl-fake",
    object: "chat.completion",
    created: 0,
    model: fields.model ?? "fake-model",
    choices: [{ index: 0, message, finish_reason: finishReason }],
  };
  if (fields.usage !== undefined) {
    body.usage = fields.usage;
  } else if (fields.messages !== undefined) {
    const promptTokens = fields.messages.reduce((sum, m) => sum + countWords(messageText(m.content)), 0);
    const completionTokens = countWords(typeof content === "string" ? content : "");
    body.usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  }
  return body;
}

/** A 200 reply with a text assistant message (`usage` by word count when `messages` is given). */
export function fakeTextReply(content: string, fields: Omit<FakeCompletionFields, "content"> = {}): FakeReply {
  return { json: fakeCompletion({ ...fields, content }) };
}

/**
 * A 200 reply whose assistant message calls tools (`finish_reason: "tool_calls"`).
 *
 * @example
 * server.enqueue(fakeToolCallReply([{ name: "get_weather", arguments: { city: "Oslo" } }]));
 */
export function fakeToolCallReply(calls: FakeToolCallSpec[], fields: Omit<FakeCompletionFields, "toolCalls"> = {}): FakeReply {
  return { json: fakeCompletion({ ...fields, toolCalls: calls }) };
}

/**
 * An error reply with an OpenAI-style body `{ error: { message, type, code } }`.
 *
 * @example
 * server.enqueue(fakeErrorReply(429, "Rate limit reached", { headers: { "retry-after": "2" } }));
 */
export function fakeErrorReply(
  status: number,
  message: string,
  options: { type?: string; code?: string | null; headers?: Record<string, string> } = {},
): FakeReply {
  const type = options.type ?? (status >= 500 ? "server_error" : "invalid_request_error");
  const reply: FakeReply = { status, json: { error: { message, type, param: null, code: options.code ?? null } } };
  if (options.headers !== undefined) reply.headers = options.headers;
  return reply;
}

/** The text of a message content (string, or the `text` of its parts joined with spaces). */
export function messageText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
      )
      .filter((text) => text !== "")
      .join(" ");
  }
  return "";
}

/** Whitespace-separated words in `text` (the fake server's token count). */
export function countWords(text: string): number {
  return text.split(/\s+/u).filter((word) => word !== "").length;
}

/**
 * Counts a request against the window (messages with `tokenCounterFor(model)`, tools as their
 * JSON text, `max_tokens`), records it, and returns OpenAI's refusal when it is over.
 */
async function checkWindow(request: FakeOpenAiRequest, body: FakeChatBody, stats: FakeWindowStats): Promise<FakeReply | null> {
  const counter = await tokenCounterFor(typeof body.model === "string" ? body.model : null);
  const messages = counter.countMessages((body.messages ?? []) as unknown as ConversationMessage[]);
  const functions = Array.isArray(body.tools) && body.tools.length > 0 ? counter.count(JSON.stringify(body.tools)) : 0;
  const completion = typeof body.max_tokens === "number" ? body.max_tokens : 0;
  const tokens = messages + functions + completion;
  request.tokens = tokens;
  stats.counted += 1;
  stats.maxTokens = Math.max(stats.maxTokens, tokens);
  if (tokens <= stats.window) return null;
  request.overWindow = true;
  stats.refusals += 1;
  // OpenAI's wording: with a completion or functions the parts are named.
  const parts = [
    `${messages} in the messages`,
    ...(functions > 0 ? [`${functions} in the functions`] : []),
    ...(completion > 0 ? [`${completion} in the completion`] : []),
  ];
  const message =
    parts.length === 1
      ? `This model's maximum context length is ${stats.window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`
      : `This model's maximum context length is ${stats.window} tokens. However, you requested ${tokens} tokens (${parts.join(", ")}). Please reduce the length of the messages${completion > 0 ? " or completion" : ""}.`;
  return { status: 400, json: { error: { message, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } };
}

function defaultIsTitleRequest(body: FakeChatBody): boolean {
  return (body.messages ?? []).some((message) => message.role === "system" && TITLE_ASK.test(messageText(message.content)));
}

function parseBody(raw: string): FakeChatBody | null {
  if (raw.trim() === "") return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as FakeChatBody) : null;
  } catch {
    return null;
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Resolves `true` after `ms`, `false` as soon as `signal` aborts. */
function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function isCompletion(json: unknown): json is { choices: Array<Record<string, unknown>> } & Record<string, unknown> {
  return typeof json === "object" && json !== null && Array.isArray((json as { choices?: unknown }).choices);
}

interface StreamChunk {
  body: unknown;
  /** A word of the text (spaced by `tokenDelayMs`). */
  token: boolean;
  /** The last word (held back by `holdLastToken`); with no text, the finishing chunk. */
  last: boolean;
}

function toChunks(completion: { choices: Array<Record<string, unknown>> } & Record<string, unknown>, includeUsage: boolean, byWord: boolean): StreamChunk[] {
  const base = { id: completion.id, object: "chat.completion.chunk", created: completion.created, model: completion.model };
  const choice = completion.choices[0] ?? {};
  const message = (choice.message ?? {}) as Record<string, unknown>;
  const content = message.content ?? null;
  const pieces = byWord && typeof content === "string" && content !== "" ? (content.match(/\S+\s*|\s+/gu) ?? [content]) : [content];
  const chunks: StreamChunk[] = pieces.map((piece, index) => {
    const delta: Record<string, unknown> = index === 0 ? { role: "assistant", content: piece } : { content: piece };
    return { body: { ...base, choices: [{ index: 0, delta, finish_reason: null }] }, token: true, last: false };
  });
  if (Array.isArray(message.tool_calls)) {
    const delta = { tool_calls: message.tool_calls.map((call: unknown, index: number) => ({ index, ...(call as object) })) };
    chunks.push({ body: { ...base, choices: [{ index: 0, delta, finish_reason: null }] }, token: false, last: false });
  }
  const lastText = chunks.filter((chunk) => chunk.token).at(-1);
  const finish = { body: { ...base, choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason ?? "stop" }] }, token: false, last: false };
  chunks.push(finish);
  (typeof content === "string" && content !== "" && lastText !== undefined ? lastText : finish).last = true;
  if (includeUsage && completion.usage !== undefined) chunks.push({ body: { ...base, choices: [], usage: completion.usage }, token: false, last: false });
  return chunks;
}
