/**
 * Downloading an inbound attachment from a platform's own file host, for the chat adapters'
 * `fetchMedia` ({@link downloadPlatformFile}): only from an origin the adapter allows (a URL a
 * message names on any other host is refused before anything is sent), redirects followed only
 * within those origins (so a bearer token never goes elsewhere), the body handed over as a
 * stream with the announced length and type, and failures told without the URL (it may carry
 * a token, as Telegram's `/file/bot<token>/…` does).
 *
 * @module
 */
import type { FetchedMedia } from "../../gateway/index.js";
import { PlatformError } from "../../store/index.js";

/** How many redirects a download follows (each within the allowed origins). */
const MAX_REDIRECTS = 3;

/** The origin (`https://files.slack.com`) of an http(s) URL, or `null` when it is not one. */
export function httpOrigin(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.origin : null;
}

/** Whether `url` is an http(s) URL on one of `origins` (compared as URL origins: scheme, host, port). */
export function onAllowedOrigin(url: string, origins: ReadonlySet<string>): boolean {
  const origin = httpOrigin(url);
  return origin !== null && origins.has(origin);
}

/** Options of {@link downloadPlatformFile}. */
export interface PlatformDownload {
  /** The platform name (errors start with it). */
  platform: string;
  /** The origins the file may come from (redirects included). */
  origins: ReadonlySet<string>;
  /** What those origins are, for errors ("Slack's file host", "Discord's CDN"). */
  host: string;
  /** Request headers (a bearer token); sent only to `origins`. */
  headers?: Record<string, string>;
  signal: AbortSignal;
  /** Removes secrets from a text that may name the URL (a network error's message). */
  redact(text: string): string;
  /** Follow redirects within `origins` (default true); false: a redirect is a {@link FileDownloadError}. */
  followRedirects?: boolean;
}

/** A download the file host answered with a non-2xx status: `status` is the HTTP status (no URL, no secret in the message). */
export class FileDownloadError extends PlatformError {
  /** The HTTP status the file host answered. */
  readonly status: number;
  constructor(platform: string, status: number, why = "") {
    super(platform, `${platform}: the file host answered HTTP ${status} to the download${why}`, { platformCode: status });
    this.status = status;
  }
}

/**
 * GETs `url` from the platform's file host and returns its body as a stream with the announced
 * `Content-Length` and `Content-Type`. Throws a {@link PlatformError} when the URL (or a redirect)
 * is not on an allowed origin, {@link FileDownloadError} for a non-2xx answer, and a
 * `PlatformError` with the redacted cause when the host cannot be reached.
 */
export async function downloadPlatformFile(url: string, options: PlatformDownload): Promise<FetchedMedia> {
  const { platform } = options;
  let current = url;
  for (let hop = 0; ; hop += 1) {
    if (!onAllowedOrigin(current, options.origins)) {
      throw new PlatformError(
        platform,
        hop === 0
          ? `${platform}: the attachment's URL is not on ${options.host}, so it was not downloaded`
          : `${platform}: the download was redirected away from ${options.host}, so the redirect was not followed`,
      );
    }
    let response: Response;
    try {
      response = await fetch(current, { headers: options.headers ?? {}, signal: options.signal, redirect: "manual" });
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason ?? error;
      const message = error instanceof Error ? `${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ""}` : String(error);
      throw new PlatformError(platform, `${platform}: the file download failed: ${options.redact(message)}`);
    }
    const redirect = response.status >= 300 && response.status < 400 && response.headers.has("location");
    if (redirect && (options.followRedirects === false || hop >= MAX_REDIRECTS)) {
      await response.body?.cancel().catch(() => {});
      throw new FileDownloadError(platform, response.status, " (a redirect, not followed)");
    }
    if (redirect) {
      await response.body?.cancel().catch(() => {});
      current = new URL(response.headers.get("location")!, current).href;
      continue;
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel().catch(() => {});
      throw new FileDownloadError(platform, response.status);
    }
    const length = Number(response.headers.get("content-length") ?? Number.NaN);
    return {
      body: response.body as ReadableStream<Uint8Array>,
      size: Number.isSafeInteger(length) && length >= 0 ? length : null,
      mimeType: response.headers.get("content-type"),
    };
  }
}
