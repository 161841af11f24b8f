/**
 * The few Graph API calls the WhatsApp adapter makes, over Node's `fetch` (no SDK):
 *
 * - `GET /<version>/<phone-number-id>?fields=display_phone_number,verified_name` — who the
 *   business number is ({@link WhatsAppGraphApi.phoneNumber});
 * - `POST /<version>/<phone-number-id>/messages` with a text message
 *   ({@link WhatsAppGraphApi.sendText}), and with `status: "read"` (+ `typing_indicator`) to
 *   mark an inbound message read and show "typing…" ({@link WhatsAppGraphApi.markRead}).
 * - `GET /<version>/<media-id>?phone_number_id=…` — where an inbound media file is
 *   ({@link WhatsAppGraphApi.mediaInfo}: `url`, `mime_type`, `file_size`), then `GET <url>`
 *   with the token ({@link WhatsAppGraphApi.downloadMedia}), only on the media host
 *   ({@link whatsappMediaOrigins}: Meta's `lookaside.fbsbx.com` behind the real Graph API, the
 *   configured API's own origin behind any other, such as a test fake), never following a
 *   redirect (the token would go along).
 *
 * The access token goes in the `Authorization` header only. A refused call throws a
 * {@link WhatsAppApiError} carrying the Graph error code and a plain explanation
 * ({@link explainWhatsAppError}). Sends hit by HTTP 429, a 5xx or one of the throughput
 * error codes (4, 80007, 130429, 131056, 131000) are retried with the chat adapters' one
 * back-off ({@link retry}: a growing pause, the `Retry-After` header when there is one), a
 * bounded number of times; network errors are not retried (the message may have gone out).
 *
 * @module
 */
import { PlatformError } from "../../store/index.js";
import { retry } from "../chat/index.js";
import { explainWhatsAppError, type WhatsAppRecipient } from "./whatsapp-source.js";

/** Options of a {@link WhatsAppGraphApi}. */
export interface WhatsAppGraphApiOptions {
  /** The access token (never logged). */
  accessToken: string;
  /** The business number's Phone number ID. */
  phoneNumberId: string;
  /** The Graph API base URL (default `https://graph.facebook.com`). */
  apiUrl?: string | null;
  /** The Graph API version (default `v26.0`). */
  apiVersion?: string | null;
  /** How many times a send hit by a rate limit or a server error is retried (default 5). */
  maxRetries?: number;
  /** The first pause before a retry without `Retry-After`, in ms (default 1,000; doubling, at most 60 s). */
  retryMinDelayMs?: number;
  /** One request's time limit, in ms (default 30,000). */
  requestTimeoutMs?: number;
  /** Told before each retry (for a log line). */
  onRetry?: (info: { attempt: number; delayMs: number; status: number; code: number | null }) => void;
}

/** The Graph API Meta runs: its media files are served by {@link META_MEDIA_ORIGIN}. */
const META_GRAPH_ORIGIN = "https://graph.facebook.com";

/** Where Meta serves the files of inbound media (`https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=…`). */
const META_MEDIA_ORIGIN = "https://lookaside.fbsbx.com";

/** The characters of a media id (digits on the Cloud API): nothing that could change the request path. */
const MEDIA_ID = /^[A-Za-z0-9_-]{1,128}$/u;

/**
 * The origins the access token may be sent to for a media download: Meta's media host when the
 * Graph API is Meta's, else the configured Graph API's own origin (a proxy or a test fake).
 *
 * @example
 * ```ts
 * whatsappMediaOrigins("https://graph.facebook.com"); // ["https://lookaside.fbsbx.com"]
 * whatsappMediaOrigins("http://127.0.0.1:4010"); // ["http://127.0.0.1:4010"]
 * ```
 */
export function whatsappMediaOrigins(apiUrl: string): string[] {
  const origin = new URL(apiUrl).origin;
  return origin === META_GRAPH_ORIGIN ? [META_MEDIA_ORIGIN] : [origin];
}

/** What `GET /<media-id>` tells of an inbound media file. */
export interface WhatsAppMediaInfo {
  /** Where the file is downloaded from (with the access token); valid for 5 minutes. */
  url: string;
  /** `mime_type`. */
  mimeType: string | null;
  /** `file_size`, in bytes. */
  size: number | null;
}

/** Graph error codes that mean "too much, too fast" (or a passing server error): a send is retried after a pause. */
const RETRYABLE_CODES = new Set([4, 80007, 130429, 131056, 131000]);

/**
 * A Graph API call that Meta refused (or that never got an answer): a {@link PlatformError}
 * (`TL_ERR_PLATFORM`) whose `platformCode` is the Graph error code (`131047`, `190`, …), when
 * the answer had one.
 */
export class WhatsAppApiError extends PlatformError {
  /** The HTTP status (0: no answer). */
  readonly status: number;
  /** The Graph error code (`131047`, `190`, …), when the answer had one. */
  declare readonly platformCode: number | null;
  readonly subcode: number | null;
  /** The error's title/message as Meta gave it. */
  readonly title: string | null;
  /** `error_data.details`. */
  readonly details: string | null;

  constructor(
    message: string,
    fields: { status: number; graphCode: number | null; subcode?: number | null; title?: string | null; details?: string | null },
    options: { cause?: unknown } = {},
  ) {
    super("whatsapp", message, { platformCode: fields.graphCode, cause: options.cause });
    this.status = fields.status;
    this.subcode = fields.subcode ?? null;
    this.title = fields.title ?? null;
    this.details = fields.details ?? null;
  }

  /** Whether the token (or its permissions) was refused. */
  get isAuthError(): boolean {
    const code = this.platformCode;
    return this.status === 401 || code === 190 || code === 10 || code === 200 || code === 131005;
  }
}

interface GraphErrorBody {
  error?: {
    message?: string;
    type?: string;
    code?: number;
    error_subcode?: number;
    error_user_msg?: string;
    error_data?: { details?: string } | string;
    fbtrace_id?: string;
  };
}

/** The `Retry-After` header of a refused call (read by the retry of sends). */
const retryAfterOf = new WeakMap<WhatsAppApiError, string | null>();

/** The Graph API client of one business number. */
export class WhatsAppGraphApi {
  readonly #token: string;
  readonly #base: string;
  readonly #mediaOrigins: readonly string[];
  readonly #phoneNumberId: string;
  readonly #options: WhatsAppGraphApiOptions;

  constructor(options: WhatsAppGraphApiOptions) {
    this.#options = options;
    this.#token = options.accessToken;
    this.#phoneNumberId = options.phoneNumberId;
    const root = (options.apiUrl ?? "https://graph.facebook.com").replace(/\/+$/u, "");
    this.#base = `${root}/${options.apiVersion ?? "v26.0"}`;
    this.#mediaOrigins = whatsappMediaOrigins(root);
  }

  /** The versioned base URL (`https://graph.facebook.com/v26.0`). */
  get baseUrl(): string {
    return this.#base;
  }

  /** The business number as Meta shows it: `display_phone_number` and `verified_name`. */
  async phoneNumber(): Promise<{ displayPhoneNumber: string | null; verifiedName: string | null }> {
    const body = (await this.#request("GET", `/${encodeURIComponent(this.#phoneNumberId)}?fields=display_phone_number,verified_name`, undefined, false)) as {
      display_phone_number?: string;
      verified_name?: string;
    };
    return { displayPhoneNumber: body.display_phone_number ?? null, verifiedName: body.verified_name ?? null };
  }

  /**
   * Sends one text message; `replyTo` quotes an earlier message; `previewUrl` lets WhatsApp fetch and show a
   * preview of the first link (default false). Resolves with the new message's `wamid`.
   */
  async sendText(recipient: WhatsAppRecipient, body: string, replyTo?: string | null, previewUrl = false): Promise<string> {
    const payload = {
      messaging_product: "whatsapp",
      ...recipient,
      type: "text",
      text: { body, preview_url: previewUrl },
      ...(replyTo ? { context: { message_id: replyTo } } : {}),
    };
    const answer = (await this.#request("POST", `/${encodeURIComponent(this.#phoneNumberId)}/messages`, payload, true)) as {
      messages?: Array<{ id?: string }>;
    };
    const id = answer.messages?.[0]?.id;
    if (typeof id !== "string" || id === "")
      throw new WhatsAppApiError(
        "whatsapp: the Graph API accepted the message but returned no message id; check that adapters.whatsapp.apiUrl is the Graph API",
        { status: 200, graphCode: null },
      );
    return id;
  }

  /** Marks an inbound message (and the ones before it) read; with `typing`, shows "typing…" for up to 25 s. */
  async markRead(messageId: string, typing: boolean): Promise<void> {
    await this.#request(
      "POST",
      `/${encodeURIComponent(this.#phoneNumberId)}/messages`,
      { messaging_product: "whatsapp", status: "read", message_id: messageId, ...(typing ? { typing_indicator: { type: "text" } } : {}) },
      false,
    );
  }

  /**
   * Where an inbound media file is and what it is (`GET /<media-id>?phone_number_id=…`: only
   * media sent to this business number). A media id that is not one (anything but letters,
   * digits, `_` and `-`) is refused without a request.
   */
  async mediaInfo(mediaId: string, signal?: AbortSignal): Promise<WhatsAppMediaInfo> {
    if (!MEDIA_ID.test(mediaId))
      throw new WhatsAppApiError("whatsapp: an inbound media id has characters a Graph API media id does not have; the file was not fetched", {
        status: 0,
        graphCode: null,
      });
    const path = `/${mediaId}?phone_number_id=${encodeURIComponent(this.#phoneNumberId)}`;
    const body = (await this.#requestOnce("GET", path, undefined, signal)) as { url?: unknown; mime_type?: unknown; file_size?: unknown };
    if (typeof body.url !== "string" || body.url === "")
      throw new WhatsAppApiError("whatsapp: the Graph API answered a media look-up without a url; check that adapters.whatsapp.apiUrl is the Graph API", {
        status: 200,
        graphCode: null,
      });
    const size = Number(body.file_size);
    return {
      url: body.url,
      mimeType: typeof body.mime_type === "string" && body.mime_type !== "" ? body.mime_type : null,
      size: body.file_size !== undefined && body.file_size !== null && Number.isSafeInteger(size) && size >= 0 ? size : null,
    };
  }

  /**
   * Opens the download of a media file at `url` (from {@link WhatsAppGraphApi.mediaInfo}) with
   * the access token. The token goes only to the media host ({@link whatsappMediaOrigins}): a
   * URL anywhere else is refused without a request, and a redirect is not followed.
   * Resolves with the response once its status is 2xx.
   */
  async downloadMedia(url: string, signal: AbortSignal): Promise<Response> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      target = new URL("invalid:");
    }
    if (!this.#mediaOrigins.includes(target.origin))
      throw new WhatsAppApiError(
        `whatsapp: the Graph API named a media URL outside the media host (${this.#mediaOrigins.join(", ")}); it was not fetched and the access token was not sent`,
        { status: 0, graphCode: null },
      );
    let response: Response;
    try {
      response = await fetch(target, { headers: { authorization: `Bearer ${this.#token}` }, redirect: "error", signal });
    } catch (error) {
      if (signal.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new WhatsAppApiError(`whatsapp: the media download from ${target.origin} failed (${why})`, { status: 0, graphCode: null }, { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new WhatsAppApiError(`whatsapp: the media host refused the download (HTTP ${response.status})`, { status: response.status, graphCode: null });
    }
    return response;
  }

  async #request(method: "GET" | "POST", path: string, body: unknown, retryable: boolean): Promise<unknown> {
    return retry(() => this.#requestOnce(method, path, body), {
      attempts: retryable ? (this.#options.maxRetries ?? 5) + 1 : 1,
      isRetryable: (error) =>
        error instanceof WhatsAppApiError &&
        (error.status === 429 || error.status >= 500 || (error.platformCode !== null && RETRYABLE_CODES.has(error.platformCode))),
      retryAfter: (error) => retryAfterOf.get(error as WhatsAppApiError),
      backoff: { initialMs: this.#options.retryMinDelayMs ?? 1_000, maxMs: 60_000, maxRetryAfterMs: 300_000 },
      onRetry: ({ attempt, delayMs, error }) => {
        const refused = error as WhatsAppApiError;
        this.#options.onRetry?.({ attempt, delayMs, status: refused.status, code: refused.platformCode });
      },
    });
  }

  async #requestOnce(method: "GET" | "POST", path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    let response: Response;
    const timeout = AbortSignal.timeout(this.#options.requestTimeoutMs ?? 30_000);
    try {
      response = await fetch(`${this.#base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.#token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: "error",
        signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
      });
    } catch (error) {
      if (signal?.aborted === true) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new WhatsAppApiError(`whatsapp: no answer from the Graph API at ${this.#base} (${why})`, { status: 0, graphCode: null }, { cause: error });
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text === "" ? {} : JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (response.ok && parsed !== null && (parsed as GraphErrorBody).error === undefined) return parsed;
    const error = this.#errorOf(response.status, parsed as GraphErrorBody | null);
    retryAfterOf.set(error, response.headers.get("retry-after"));
    throw error;
  }

  #errorOf(status: number, body: GraphErrorBody | null): WhatsAppApiError {
    const error = body?.error;
    const code = typeof error?.code === "number" ? error.code : null;
    const title = error?.message ?? null;
    const details =
      typeof error?.error_data === "object" ? (error.error_data.details ?? null) : typeof error?.error_data === "string" ? error.error_data : null;
    const stripped = title === null ? null : title.replace(/^\(#\d+\)\s*/u, "");
    const explanation = explainWhatsAppError(code, stripped, details);
    // A code the adapter explains shows Meta's title too; otherwise the explanation is that title.
    const told = stripped !== null && explanation.startsWith(stripped);
    const label = code === null ? `HTTP ${status}` : `${code}${stripped && !told ? ` ${stripped}` : ""}`;
    return new WhatsAppApiError(`whatsapp: the Graph API refused the request (${label}): ${explanation}`, {
      status,
      graphCode: code,
      subcode: typeof error?.error_subcode === "number" ? error.error_subcode : null,
      title,
      details,
    });
  }
}
