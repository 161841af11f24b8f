/**
 * The HTTP transport of the OpenAI-compatible provider: one chat-completions call (timeout,
 * caller abort, streaming, a retry of a connection reset before any reply) and the
 * classification of its failures into {@link AgentError}s that say what to do, plus the
 * mapping of a reply to Threadline's message and usage shapes. Shared by the agent and the titler.
 * Also one speech-to-text call (`POST <baseUrl>/audio/transcriptions`, multipart), with the
 * same headers, timeout and failures ({@link postTranscription}).
 *
 * @module
 */
import { ThreadlineError } from "../store/index.js";
import type { ContentPart, NewMessage, ToolCall, UsageUpdate } from "../store/index.js";
import { AgentError, AgentInterruptedError } from "./agent.js";
import { readChatStream, StreamErrorChunk } from "./chat-stream.js";

/** The `fetch` function shape the provider uses (the global `fetch` by default). */
export type FetchFunction = typeof globalThis.fetch;

/** Where and how requests go: the chat-completions URL, headers, timeout and `fetch`. */
export interface Endpoint {
  /** The API root without trailing slashes (other routes are built from it). */
  baseUrl: string;
  url: string;
  /** The URL as shown in messages (no credentials). */
  shownUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  fetch: FetchFunction;
}

/** A message in the provider's wire shape. */
export interface WireMessage {
  role: string;
  content: string | ContentPart[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** One reply, mapped. */
export interface ParsedReply {
  message: NewMessage;
  usage: UsageUpdate;
  /** The reply's `model` (the model that answered), when it named one. */
  model?: string;
}

/** The endpoint of `<baseUrl>/chat/completions` with the default headers, the key and the extra headers. */
export function makeEndpoint(
  baseUrl: string,
  apiKey: string | undefined,
  timeoutMs: number,
  fetchFunction: FetchFunction | undefined,
  extraHeaders: Record<string, string> | undefined,
): Endpoint {
  const url = `${baseUrl}/chat/completions`;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (apiKey !== undefined && apiKey !== "") headers.authorization = `Bearer ${apiKey}`;
  for (const [name, value] of Object.entries(extraHeaders ?? {})) headers[name.toLowerCase()] = value;
  return { baseUrl, url, shownUrl: redactUrl(url), headers, timeoutMs, fetch: fetchFunction ?? globalThis.fetch };
}

/** The same endpoint for another route of the API root (`/audio/transcriptions`). */
export function routeOf(endpoint: Endpoint, route: string): Endpoint {
  const url = `${endpoint.baseUrl}${route}`;
  return { ...endpoint, url, shownUrl: redactUrl(url) };
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** A URL without trailing slashes. */
export function trimTrailingSlashes(url: string): string {
  return url.replace(/\/+$/u, "");
}

/**
 * One chat-completions call. Throws {@link AgentInterruptedError} (no partial) when
 * `callerSignal` aborts, {@link AgentError} for every other failure.
 */
export async function postChatCompletion(
  endpoint: Endpoint,
  body: Record<string, unknown>,
  callerSignal: AbortSignal | undefined,
  model: string,
  onDelta?: (text: string) => void,
): Promise<ParsedReply> {
  let status = 0;
  let text = "";
  let retryAfter: string | null = null;
  let streamed: Record<string, unknown> | null = null;
  await exchange(endpoint, callerSignal, async (signal) => {
    const headers = onDelta === undefined ? endpoint.headers : { ...endpoint.headers, accept: "text/event-stream, application/json" };
    const response = await fetchResettable(endpoint, { method: "POST", headers, body: JSON.stringify(body), signal });
    status = response.status;
    retryAfter = response.headers.get("retry-after");
    const type = response.headers.get("content-type") ?? "";
    try {
      if (onDelta !== undefined && status >= 200 && status <= 299 && type.includes("text/event-stream")) {
        streamed = await readChatStream(response.body, onDelta);
      } else {
        text = await response.text();
      }
    } catch (error) {
      if (error instanceof StreamErrorChunk) {
        throw new AgentError(
          `The model provider reported an error in the middle of its streamed reply (${endpoint.shownUrl}). Provider said: ${quoteExcerpt(error.providerMessage)}.`,
          { status, providerMessage: error.providerMessage },
        );
      }
      throw error;
    }
  });

  if (streamed !== null) return parseCompletion(endpoint, status, streamed);
  let json: unknown;
  let parsedJson = true;
  try {
    json = JSON.parse(text);
  } catch {
    parsedJson = false;
  }

  if (status < 200 || status > 299) throw statusError(endpoint, status, parsedJson ? json : text, model, retryAfter);
  if (!parsedJson) {
    throw new AgentError(
      `The model provider's reply is not JSON (HTTP ${status} from ${endpoint.shownUrl}): ${quoteExcerpt(text)}. ` +
        `Check that the base URL points at an OpenAI-compatible API root (usually ending in /v1).`,
      { status },
    );
  }
  const parsed = parseCompletion(endpoint, status, json);
  // A provider that ignored `stream: true` answered in one piece: hand that piece on.
  if (onDelta !== undefined) {
    const whole = parsed.message.content;
    const piece = typeof whole === "string" ? whole : Array.isArray(whole) ? partsText(whole) : "";
    if (piece !== "") {
      try {
        onDelta(piece);
      } catch {
        // A listener's failure must not fail the turn.
      }
    }
  }
  return parsed;
}

/**
 * Runs one request and the reading of its reply within the endpoint's timeout: an abort by
 * `callerSignal` throws {@link AgentInterruptedError} (no partial), the timeout and network
 * failures throw {@link AgentError}s that say what to do; an `AgentError` thrown by `run` passes.
 */
async function exchange(endpoint: Endpoint, callerSignal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<void>): Promise<void> {
  if (callerSignal?.aborted) throw new AgentInterruptedError([], undefined, { cause: callerSignal.reason });
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new ThreadlineError("TL_ERR_TIMEOUT", `The model provider sent no reply within ${endpoint.timeoutMs} ms.`)),
    endpoint.timeoutMs,
  );
  const signal = callerSignal === undefined ? timeout.signal : AbortSignal.any([callerSignal, timeout.signal]);
  try {
    await run(signal);
  } catch (error) {
    if (error instanceof AgentError) throw error;
    if (callerSignal?.aborted) throw new AgentInterruptedError([], undefined, { cause: error });
    if (timeout.signal.aborted) {
      throw new AgentError(
        `The model provider sent no reply within ${endpoint.timeoutMs} ms (${endpoint.shownUrl}). ` +
          `It may be overloaded or the model slow to load: retry, or raise provider.timeoutMs.`,
        { cause: error },
      );
    }
    throw connectionError(endpoint, error);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One speech-to-text call: `form` (multipart: `file`, `model`, …) to the endpoint's
 * `/audio/transcriptions` route with its headers (the key; the multipart type is set by
 * `fetch`), its timeout and the same failures as a chat call. Resolves with the reply's `text`
 * (a JSON `{ text }`, or a plain-text body). Throws {@link AgentInterruptedError} when
 * `callerSignal` aborts, {@link AgentError} for every other failure.
 */
export async function postTranscription(endpoint: Endpoint, form: FormData, callerSignal: AbortSignal | undefined, model: string): Promise<string> {
  const target = routeOf(endpoint, "/audio/transcriptions");
  let status = 0;
  let text = "";
  let retryAfter: string | null = null;
  let type = "";
  await exchange(target, callerSignal, async (signal) => {
    const { "content-type": _json, ...headers } = target.headers;
    const response = await fetchResettable(target, { method: "POST", headers, body: form, signal });
    status = response.status;
    retryAfter = response.headers.get("retry-after");
    type = response.headers.get("content-type") ?? "";
    text = await response.text();
  });
  let json: unknown;
  let parsedJson = true;
  try {
    json = JSON.parse(text);
  } catch {
    parsedJson = false;
  }
  if (status < 200 || status > 299) {
    throw statusError(target, status, parsedJson ? json : text, model, retryAfter, TRANSCRIPTION_MODEL_HINT);
  }
  if (parsedJson && isRecord(json) && typeof json.text === "string") return json.text.trim();
  if (!parsedJson && !type.includes("json") && !/^\s*</u.test(text)) return text.trim();
  throw new AgentError(
    `The transcription reply has no text (HTTP ${status} from ${target.shownUrl}): ${quoteExcerpt(text)}. ` +
      `Check that the base URL points at an OpenAI-compatible API root with /audio/transcriptions.`,
    { status },
  );
}

/** Where the model name of a chat call is set. */
const CHAT_MODEL_HINT = "the model name (THREADLINE_MODEL or provider.model)";
/** Where the model name of a transcription is set. */
const TRANSCRIPTION_MODEL_HINT = "the transcription model (THREADLINE_TRANSCRIPTION_MODEL or provider.transcriptionModel)";

/** Attempts of a request whose connection is reset before any reply arrives (the first try included). */
const RESET_ATTEMPTS = 3;

/** Error codes of a connection the server closed before answering (e.g. an idle keep-alive socket it dropped as it was reused). */
const RESET_CODES = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"]);

/**
 * `endpoint.fetch`, tried again (up to {@link RESET_ATTEMPTS} in all, at once, on a new
 * connection) when the connection is reset before the response starts. Under load a client
 * reuses an idle keep-alive connection just as the server closes it; nothing of the request
 * was answered, so sending it again is what OpenAI's own SDK does too. Any other failure, an
 * abort, and a reset after the response began are not retried. When every attempt fails the
 * first reset is thrown (a later attempt may only find the server gone).
 */
async function fetchResettable(endpoint: Endpoint, init: RequestInit & { signal: AbortSignal }): Promise<Response> {
  let first: unknown;
  for (let attempt = 1; ; attempt++) {
    try {
      return await endpoint.fetch(endpoint.url, init);
    } catch (error) {
      if (attempt === 1) first = error;
      const retry = !init.signal.aborted && attempt < RESET_ATTEMPTS && RESET_CODES.has(errorCode(error) ?? "");
      if (!retry) throw first;
    }
  }
}

function connectionError(endpoint: Endpoint, error: unknown): AgentError {
  const code = errorCode(error);
  const where = `the model provider at ${endpoint.shownUrl}`;
  if (code === "ECONNREFUSED") {
    return new AgentError(
      `Could not connect to ${where}: connection refused. Is the server running, and is the base URL (OPENAI_BASE_URL or provider.baseUrl) right?`,
      { cause: error },
    );
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new AgentError(`Could not connect to ${where}: host not found (${code}). Check the base URL (OPENAI_BASE_URL or provider.baseUrl) and DNS.`, {
      cause: error,
    });
  }
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE") {
    return new AgentError(
      `The model provider at ${endpoint.shownUrl} closed the connection before replying (${code}). ` +
        `Retry; if it keeps happening, check the provider's logs and any proxy in between.`,
      { cause: error },
    );
  }
  const detail = code ?? (error instanceof Error ? error.message : String(error));
  return new AgentError(`Could not reach ${where} (${detail}). Check the base URL (OPENAI_BASE_URL or provider.baseUrl) and the network.`, { cause: error });
}

/** The first `code` found on an error or its causes (undici wraps socket errors in `TypeError: fetch failed`). */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const nested = errorCode(errors[0]);
      if (nested !== undefined) return nested;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function statusError(endpoint: Endpoint, status: number, body: unknown, model: string, retryAfter: string | null, modelHint = CHAT_MODEL_HINT): AgentError {
  const said = providerMessage(body);
  const saidPart = said === null ? "" : ` Provider said: ${quoteExcerpt(said)}.`;
  let advice: string;
  if (status === 401 || status === 403) {
    advice = `The model provider refused the credentials (HTTP ${status} from ${endpoint.shownUrl}): check OPENAI_API_KEY (or provider.apiKey).`;
  } else if (status === 404) {
    advice =
      `The model provider answered HTTP 404 (${endpoint.shownUrl}, model "${model}"): check the base URL ` +
      `(OPENAI_BASE_URL or provider.baseUrl) and ${modelHint}.`;
  } else if (status === 429) {
    const wait = retryAfter === null ? "" : ` (the provider suggests waiting ${retryAfter} s)`;
    advice = `The model provider rate-limited the request (HTTP 429): retry later${wait}, or check the account's quota.`;
  } else if (status >= 500) {
    advice = `The model provider failed with HTTP ${status} (a provider error, not Threadline's): retry later.`;
  } else {
    advice =
      `The model provider rejected the request (HTTP ${status} from ${endpoint.shownUrl}): ` +
      `check the model name and options (max tokens, temperature) against the provider's documentation.`;
  }
  return new AgentError(advice + saidPart, { status, providerMessage: said });
}

/** `{error:{message}}` (OpenAI), `{error:"…"}`, `{message:"…"}` or raw text, else `null`. */
function providerMessage(body: unknown): string | null {
  if (typeof body === "string") return body.trim() === "" ? null : body;
  if (!isRecord(body)) return null;
  const error = body.error;
  if (typeof error === "string") return error;
  if (isRecord(error) && typeof error.message === "string") return error.message;
  if (typeof body.message === "string") return body.message;
  if (typeof body.detail === "string") return body.detail;
  return null;
}

function parseCompletion(endpoint: Endpoint, status: number, json: unknown): ParsedReply {
  const choices = isRecord(json) ? json.choices : undefined;
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (!isRecord(choice) || !isRecord(choice.message)) {
    const said = providerMessage(json);
    throw new AgentError(
      `The model provider's reply has no choices (HTTP ${status} from ${endpoint.shownUrl})` +
        (said === null ? "." : `; provider said: ${quoteExcerpt(said)}.`) +
        ` Check that the endpoint speaks the OpenAI chat-completions protocol.`,
      { status },
    );
  }
  const raw = choice.message;
  const message: NewMessage = { role: "assistant", content: mapContent(raw.content) };
  const toolCalls = mapToolCalls(raw.tool_calls);
  if (toolCalls.length > 0) message.toolCalls = toolCalls;
  if (typeof choice.finish_reason === "string") message.finishReason = choice.finish_reason;
  const reasoning = typeof raw.reasoning === "string" ? raw.reasoning : typeof raw.reasoning_content === "string" ? raw.reasoning_content : null;
  if (reasoning !== null && reasoning !== "") message.reasoning = reasoning;
  if (raw.reasoning_details !== undefined && raw.reasoning_details !== null) message.reasoningDetails = raw.reasoning_details;

  const usage = mapUsage(isRecord(json) ? json.usage : undefined);
  if (usage.outputTokens !== undefined) message.tokenCount = usage.outputTokens;
  const parsed: ParsedReply = { message, usage };
  if (isRecord(json) && typeof json.model === "string" && json.model.trim() !== "") parsed.model = json.model.trim();
  return parsed;
}

function mapContent(content: unknown): string | ContentPart[] | null {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const parts = content.filter((part): part is ContentPart => isRecord(part) && typeof part.type === "string");
    return parts;
  }
  return null;
}

function mapToolCalls(raw: unknown): ToolCall[] {
  if (!Array.isArray(raw)) return [];
  const calls: ToolCall[] = [];
  raw.forEach((entry: unknown, index) => {
    if (!isRecord(entry) || !isRecord(entry.function)) return;
    const fn = entry.function;
    const name = typeof fn.name === "string" && fn.name !== "" ? fn.name : "unknown";
    const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    calls.push({
      ...entry,
      id: typeof entry.id === "string" && entry.id !== "" ? entry.id : `call_${index}`,
      type: typeof entry.type === "string" ? entry.type : "function",
      function: { name, arguments: args },
    });
  });
  return calls;
}

function mapUsage(raw: unknown): UsageUpdate {
  const usage: UsageUpdate = { apiCalls: 1 };
  if (!isRecord(raw)) return usage;
  const count = (value: unknown): number | undefined => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined);
  const input = count(raw.prompt_tokens);
  const output = count(raw.completion_tokens);
  const cached = isRecord(raw.prompt_tokens_details) ? count(raw.prompt_tokens_details.cached_tokens) : undefined;
  const reasoning = isRecord(raw.completion_tokens_details) ? count(raw.completion_tokens_details.reasoning_tokens) : undefined;
  if (input !== undefined) usage.inputTokens = input;
  if (output !== undefined) usage.outputTokens = output;
  if (cached !== undefined) usage.cacheReadTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/** The text parts of a content list, one per line. */
export function partsText(parts: ContentPart[]): string {
  return parts
    .filter((part) => typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

/** `text` with its white space folded, cut to `maxChars` characters (an ellipsis marks the cut). */
export function excerpt(text: string, maxChars: number): string {
  const folded = text.replace(/\s+/gu, " ").trim();
  const chars = [...folded];
  return chars.length <= maxChars ? folded : `${chars.slice(0, maxChars).join("")}…`;
}

function quoteExcerpt(text: string): string {
  return JSON.stringify(excerpt(text, 200));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
