/**
 * The page's client of the REST API (docs/http.md): `fetch` with the API key as a bearer
 * token, JSON in and out, and one error type. The API's base URL comes from the server
 * (`<meta name="threadline-api">`, relative to the mount point), so the page follows
 * `api.prefix` and any reverse-proxy prefix.
 *
 * The key is kept in `sessionStorage` (this tab only, gone when the tab closes). A 401 (or a
 * 403 for an invalid key) calls the `onAuthRequired` listener, which shows the login form.
 *
 * @module
 */
import { mountRoot, queryString, type QueryInput } from "./router.js";

const KEY_STORAGE = "threadline.apiKey";

/** The error shape of every failed API request. */
export class ApiError extends Error {
  readonly status: number;
  /** `TL_ERR_*` code, or `TL_ERR_NETWORK` when the server could not be reached. */
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }

  /** The request needs (another) key: no key, or a key the server does not accept. */
  get needsLogin(): boolean {
    return this.status === 401 || (this.status === 403 && this.code === "TL_ERR_FORBIDDEN" && /not valid/iu.test(this.message));
  }
}

/** The API key of this tab, or `null`. */
export function storedKey(): string | null {
  try {
    return window.sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

/** Keeps (or, with `null`, forgets) the API key for this tab. */
export function storeKey(key: string | null): void {
  try {
    if (key === null) window.sessionStorage.removeItem(KEY_STORAGE);
    else window.sessionStorage.setItem(KEY_STORAGE, key);
  } catch {
    // Storage disabled: the key lives only as long as the page.
  }
}

/** The API base URL (absolute, ends with `/`). */
export function apiBase(): URL {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="threadline-api"]');
  const relative = meta?.content && !meta.content.startsWith("__") ? meta.content : "../";
  const base = new URL(relative, mountRoot());
  if (!base.pathname.endsWith("/")) base.pathname += "/";
  return base;
}

type AuthListener = (error: ApiError) => void;
let authListener: AuthListener | null = null;

/** Called when a request needs a login (the app shows the login form). */
export function onAuthRequired(listener: AuthListener | null): void {
  authListener = listener;
}

/** Options of one request. */
export interface RequestOptions {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  query?: QueryInput;
  body?: unknown;
  signal?: AbortSignal;
  /** Use this key instead of the stored one (the login form checks a key with it). */
  key?: string;
  /** Do not call the auth listener on 401/403 (the login form handles those itself). */
  quietAuth?: boolean;
}

/** The absolute URL of an API path (`sessions/abc/messages`) with a query. */
export function apiUrl(path: string, query: QueryInput = {}): string {
  return new URL(path.replace(/^\/+/u, "") + queryString(query), apiBase()).toString();
}

/**
 * Sends a request to the API and returns its JSON body (`undefined` for 204). Throws
 * {@link ApiError}: the server's `{ error: { code, message } }`, or `TL_ERR_NETWORK`.
 */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const key = options.key ?? storedKey();
  if (key !== null && key !== "") headers["authorization"] = `Bearer ${key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method: options.method ?? "GET",
      headers,
      body,
      signal: options.signal,
      credentials: "omit",
      cache: "no-store",
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "TL_ERR_NETWORK", "The server could not be reached. Check that threadline is running, then retry.");
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const err = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const error = new ApiError(
      response.status,
      typeof err?.code === "string" ? err.code : `HTTP_${response.status}`,
      typeof err?.message === "string" ? err.message : `The server answered ${response.status} ${response.statusText}.`,
    );
    if (error.needsLogin && options.quietAuth !== true) authListener?.(error);
    throw error;
  }
  return parsed as T;
}

/**
 * Fetches an API route's body as a `Blob` (an attachment, a JSONL export) with the stored
 * key (`cache` defaults to `no-store`; attachments, whose bytes never change, may use the
 * browser's cache). Throws {@link ApiError} (the server's error, or `TL_ERR_NETWORK`); a
 * 401/403 calls the auth listener as {@link api} does.
 */
export async function apiBlob(path: string, options: { query?: QueryInput; signal?: AbortSignal; cache?: RequestCache } = {}): Promise<Blob> {
  const headers: Record<string, string> = {};
  const key = storedKey();
  if (key !== null && key !== "") headers["authorization"] = `Bearer ${key}`;
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      headers,
      credentials: "omit",
      cache: options.cache ?? "no-store",
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "TL_ERR_NETWORK", "The server could not be reached. Check that threadline is running, then retry.");
  }
  if (!response.ok) {
    let err: { code?: unknown; message?: unknown } | undefined;
    try {
      err = ((await response.json()) as { error?: typeof err }).error;
    } catch {
      err = undefined;
    }
    const error = new ApiError(
      response.status,
      typeof err?.code === "string" ? err.code : `HTTP_${response.status}`,
      typeof err?.message === "string" ? err.message : `The server answered ${response.status} ${response.statusText}.`,
    );
    if (error.needsLogin) authListener?.(error);
    throw error;
  }
  return response.blob();
}

/** Saves `blob` as `filename` through a temporary object URL (revoked once the download has started). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  try {
    const anchor = document.createElement("a");
    anchor.href = url;
    anchor.download = filename;
    anchor.rel = "noopener";
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
  } finally {
    // Give the browser a moment to start the download before the URL goes.
    window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }
}

/**
 * Downloads an API route's body (a JSONL export, an attachment) with the stored key and saves
 * it as `filename` through a temporary object URL. Used when a key is stored: a plain link
 * cannot send the `Authorization` header. (Without a key the page uses a plain
 * `<a download>`, which the browser streams to disk.) Throws {@link ApiError}.
 */
export async function apiDownload(path: string, query: QueryInput, filename: string): Promise<void> {
  saveBlob(await apiBlob(path, { query }), filename);
}
