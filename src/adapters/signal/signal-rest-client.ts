/**
 * The calls the Signal adapter makes to the signal-cli REST API (bbernhard/signal-cli-rest-api),
 * with the request and response shapes its source and Swagger docs define:
 *
 * - `GET /v1/about` → `{ versions, build, mode, version, capabilities }` (`mode`: `normal`,
 *   `native` or `json-rpc`); `GET /v1/accounts` → the registered numbers;
 * - `GET /v1/receive/{number}?timeout=<s>` (normal/native mode) → `[{ envelope, account }, …]`;
 *   in json-rpc mode the same path is a WebSocket ({@link SignalRestClient.receiveSocketUrl});
 * - `POST /v2/send` `{ number, recipients, message, text_mode, quote_timestamp, quote_author }`
 *   → 201 `{ timestamp }` (releases up to 0.99) or `[{ timestamp, errors? }]` (later builds,
 *   with per-recipient failures); errors are `{ error }` with 400 (an unregistered or
 *   untrusted recipient, a bad group id), 429 with `challenge_tokens` for a rate limit;
 * - `PUT`/`DELETE /v1/typing-indicator/{number}` `{ recipient }`, `POST /v1/receipts/{number}`
 *   `{ recipient, receipt_type, timestamp }`, `GET /v1/groups/{number}`, `GET /v1/attachments/{id}`
 *   (the bytes of a received attachment, {@link SignalRestClient.attachment}).
 *
 * The REST API has no authentication. Every error thrown is a {@link SignalApiError} whose
 * message names the call and what the REST API said; phone numbers other than the bot's are
 * shortened in it (`+49151…78`).
 *
 * @module
 */
import { PlatformError } from "../../store/index.js";

/** `GET /v1/about`. */
export interface SignalAbout {
  versions?: string[];
  build?: number;
  /** `normal`, `native` or `json-rpc`. */
  mode?: string;
  version?: string;
  capabilities?: Record<string, string[]>;
}

/** One group of `GET /v1/groups/{number}` (the fields used). */
export interface SignalGroup {
  name?: string;
  /** `group.<base64>`: what messages are sent to. */
  id?: string;
  /** The id in envelopes' `groupInfo.groupId`. */
  internal_id?: string;
}

/** The body of `POST /v2/send` the adapter sends. */
export interface SignalSendRequest {
  message: string;
  recipients: string[];
  text_mode: "styled" | "normal";
  quote_timestamp?: number;
  quote_author?: string;
}

/** What a send returned: Signal's timestamp of the message and recipients it did not reach. */
export interface SignalSendResult {
  timestamp: string | null;
  failures: Array<{ number?: string; uuid?: string; reason?: string }>;
}

/** A failed call (a {@link PlatformError}, `TL_ERR_PLATFORM`): `status` 0 when the REST API could not be reached. */
export class SignalApiError extends PlatformError {
  readonly status: number;
  /** The `error` text of the REST API's answer. */
  readonly apiError: string | null;
  /** A connection that was refused or reset before any answer (safe to retry). */
  readonly unreachable: boolean;

  constructor(message: string, status: number, apiError: string | null, unreachable = false) {
    super("signal", message);
    this.status = status;
    this.apiError = apiError;
    this.unreachable = unreachable;
  }
}

/** Shortens every phone number in `text` except `keep` (`+4915112345678` → `+49151…78`). */
export function maskPhoneNumbers(text: string, keep: string | null = null): string {
  return text.replace(/\+\d{7,15}/gu, (n) => (n === keep ? n : `${n.slice(0, 6)}…${n.slice(-2)}`));
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_SOCKET"]);

/** The characters of an attachment id (signal-cli names the file `<random id>.<extension>`): nothing that could change the request path. */
const ATTACHMENT_ID = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9]+)*$/u;

/** A client of one account of one signal-cli REST API. */
export class SignalRestClient {
  /** The base URL without a trailing slash. */
  readonly apiUrl: string;
  readonly number: string;

  constructor(apiUrl: string, number: string) {
    this.apiUrl = apiUrl.replace(/\/+$/u, "");
    this.number = number;
  }

  /** The receive WebSocket of json-rpc mode (`ws://…/v1/receive/{number}`). */
  get receiveSocketUrl(): string {
    return `${this.apiUrl.replace(/^http/u, "ws")}/v1/receive/${encodeURIComponent(this.number)}`;
  }

  /** `GET /v1/about`. */
  about(): Promise<SignalAbout> {
    return this.#json("GET", "/v1/about", undefined, 10_000) as Promise<SignalAbout>;
  }

  /** `GET /v1/accounts`: the numbers registered or linked in the REST API. */
  async accounts(): Promise<string[]> {
    const body = await this.#json("GET", "/v1/accounts", undefined, 30_000);
    return Array.isArray(body) ? body.filter((n): n is string => typeof n === "string") : [];
  }

  /** `GET /v1/receive/{number}?timeout=<s>` (normal/native mode): the messages that arrived meanwhile. */
  async receive(timeoutSeconds: number): Promise<unknown[]> {
    const body = await this.#json(
      "GET",
      `/v1/receive/${this.#account}?timeout=${Math.max(1, Math.round(timeoutSeconds))}`,
      undefined,
      (timeoutSeconds + 60) * 1000,
    );
    return Array.isArray(body) ? body : [];
  }

  /** `POST /v2/send` from the bot's number. */
  async send(request: SignalSendRequest): Promise<SignalSendResult> {
    const body = await this.#json("POST", "/v2/send", { number: this.number, ...request }, 60_000);
    const results = (Array.isArray(body) ? body : [body]) as Array<{ timestamp?: unknown; errors?: { recipients?: SignalSendResult["failures"] } } | null>;
    const timestamp = results.map((r) => r?.timestamp).find((t) => t !== undefined && t !== null);
    return {
      timestamp: timestamp === undefined ? null : String(timestamp),
      failures: results.flatMap((r) => r?.errors?.recipients ?? []),
    };
  }

  /** `PUT` (show) or `DELETE` (hide) `/v1/typing-indicator/{number}`. */
  async typing(recipient: string, on: boolean): Promise<void> {
    await this.#json(on ? "PUT" : "DELETE", `/v1/typing-indicator/${this.#account}`, { recipient }, 30_000);
  }

  /** `POST /v1/receipts/{number}`: a read receipt for the message `timestamp` of `recipient`. */
  async readReceipt(recipient: string, timestamp: number): Promise<void> {
    await this.#json("POST", `/v1/receipts/${this.#account}`, { recipient, receipt_type: "read", timestamp }, 30_000);
  }

  /** `GET /v1/groups/{number}`. */
  async groups(timeoutMs = 5_000): Promise<SignalGroup[]> {
    const body = await this.#json("GET", `/v1/groups/${this.#account}`, undefined, timeoutMs);
    return Array.isArray(body) ? (body as SignalGroup[]) : [];
  }

  /** `GET /v1/attachments/{id}` as text (at most `maxBytes`; `null` when larger). */
  async attachmentText(id: string, maxBytes: number, timeoutMs = 5_000): Promise<string | null> {
    const response = await this.#fetch("GET", `/v1/attachments/${encodeURIComponent(id)}`, undefined, timeoutMs);
    if (!response.ok) throw await this.#httpError("GET", "/v1/attachments/{id}", response);
    const buffer = Buffer.from(await response.arrayBuffer());
    return buffer.length > maxBytes ? null : buffer.toString("utf8");
  }

  /**
   * `GET /v1/attachments/{id}`: the response once its status is 2xx, its body unread (the
   * caller streams it). An id that is not an attachment id (a `/`, `..`, anything but letters,
   * digits, `_`, `-` and dotted extensions) is refused without a request.
   */
  async attachment(id: string, signal: AbortSignal): Promise<Response> {
    if (id.length > 256 || !ATTACHMENT_ID.test(id))
      throw new SignalApiError("an attachment id has characters signal-cli's attachment ids do not have; the file was not fetched", 0, null);
    const response = await this.#fetch("GET", `/v1/attachments/${encodeURIComponent(id)}`, undefined, 0, signal);
    if (!response.ok) throw await this.#httpError("GET", "/v1/attachments/{id}", response);
    return response;
  }

  get #account(): string {
    return encodeURIComponent(this.number);
  }

  /** One request; `timeoutMs` 0: none but `signal`'s. */
  async #fetch(method: string, path: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<Response> {
    const signals = [...(timeoutMs > 0 ? [AbortSignal.timeout(timeoutMs)] : []), ...(signal === undefined ? [] : [signal])];
    try {
      return await fetch(`${this.apiUrl}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals),
      });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const code = cause?.code ?? (error as { code?: string }).code;
      const timedOut = (error as Error).name === "TimeoutError" || (error as Error).name === "AbortError";
      const why = timedOut ? `no answer within ${Math.round(timeoutMs / 1000)} s` : (cause?.message ?? (error as Error).message);
      const wrapped = new SignalApiError(
        maskPhoneNumbers(`could not reach the signal-cli REST API at ${this.apiUrl} (${method} ${this.#shown(path)}): ${why}`, this.number),
        0,
        null,
        !timedOut && code !== undefined && CONNECTION_CODES.has(code),
      );
      throw wrapped;
    }
  }

  async #json(method: string, path: string, body: unknown, timeoutMs: number): Promise<unknown> {
    const response = await this.#fetch(method, path, body, timeoutMs);
    if (!response.ok) throw await this.#httpError(method, path, response);
    const text = await response.text();
    if (text.trim() === "") return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new SignalApiError(
        `the signal-cli REST API answered ${method} ${this.#shown(path)} with something that is not JSON (is ${this.apiUrl} the REST API?)`,
        response.status,
        null,
      );
    }
  }

  async #httpError(method: string, path: string, response: Response): Promise<SignalApiError> {
    const text = await response.text().catch(() => "");
    let apiError: string | null = null;
    try {
      const parsed = JSON.parse(text) as { error?: unknown };
      if (typeof parsed.error === "string") apiError = parsed.error.trim();
    } catch {
      apiError = text.trim().slice(0, 300) || null;
    }
    const said = apiError === null ? "" : `: ${apiError}`;
    return new SignalApiError(
      maskPhoneNumbers(`the signal-cli REST API answered ${response.status} to ${method} ${this.#shown(path)}${said}`, this.number),
      response.status,
      apiError === null ? null : maskPhoneNumbers(apiError, this.number),
    );
  }

  /** A path as logged: the query dropped. */
  #shown(path: string): string {
    return decodeURIComponent(path.split("?")[0]!);
  }
}
