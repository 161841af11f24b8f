/**
 * Inbound Matrix media: an `mxc://<server-name>/<media-id>` URI of an `m.image`, `m.audio`,
 * `m.video` or `m.file` event → its bytes from the bot's own homeserver
 * ({@link downloadMatrixMedia}).
 *
 * - Only `mxc://` URIs are taken, and only with a server name and a media id of the characters
 *   the spec allows ({@link parseMxcUri}: a host name, IPv4 or `[IPv6]` with an optional port;
 *   a media id of `A-Z a-z 0-9 _ -`), so nothing in an event can change the request path; an
 *   `http(s)` URL in an event is never fetched.
 * - The download is the authenticated media API (spec v1.11,
 *   `GET /_matrix/client/v1/media/download/{serverName}/{mediaId}` with the access token in the
 *   `Authorization` header) on the configured homeserver, which fetches remote media over
 *   federation itself. A homeserver that does not know that endpoint (404 `M_UNRECOGNIZED`,
 *   before v1.11) is asked at the legacy `/_matrix/media/v3/download/…`. No redirect is followed
 *   (without `allow_redirect` the homeserver must answer with the content itself).
 *
 * @module
 */
import { MediaUnavailableError, type FetchedMedia, type InboundMedia } from "../../gateway/index.js";
import { PlatformError } from "../../store/index.js";

/** The parts of an `mxc://` URI. */
export interface MxcUri {
  /** The homeserver that holds the file (`example.org`, `127.0.0.1:8448`, `[::1]:8448`). */
  serverName: string;
  /** The file's id on that server. */
  mediaId: string;
}

/** `mxc://<server-name>/<media-id>` as the spec's grammar allows it (appendix: server names; media ids). */
const MXC_URI = /^mxc:\/\/((?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?)\/([A-Za-z0-9_-]{1,255})$/u;

/**
 * The server name and media id of an `mxc://` URI, or `null` when it is not one the spec allows
 * (another scheme, a path, `..`, a query, characters outside the grammar).
 *
 * @example
 * ```ts
 * parseMxcUri("mxc://example.org/JWEIFJgwEIhweiWJE"); // { serverName: "example.org", mediaId: "JWEIFJgwEIhweiWJE" }
 * parseMxcUri("mxc://example.org/../../_matrix/client/v3/account/whoami"); // null
 * parseMxcUri("https://example.org/image.png"); // null
 * ```
 */
export function parseMxcUri(uri: string): MxcUri | null {
  const match = MXC_URI.exec(uri);
  return match === null ? null : { serverName: match[1]!, mediaId: match[2]! };
}

/** What {@link downloadMatrixMedia} needs of the adapter. */
export interface MatrixMediaDownload {
  /** The homeserver's base URL (the part before `/_matrix`). */
  homeserverUrl: string;
  /** The bot's access token (sent in the header only; never in a message or an error). */
  accessToken: string;
  /** Aborts the download. */
  signal: AbortSignal;
}

/**
 * Opens the download of an inbound file (`media.url`, an `mxc://` URI) from the configured
 * homeserver. Resolves once the homeserver answered 2xx, with the body unread, the length and
 * type it announced, and the event's declared type and file name preferred.
 *
 * @throws MediaUnavailableError when the event names no valid `mxc://` URI, or the homeserver
 *   does not have the file (404 `M_NOT_FOUND`) or will not serve it (`M_TOO_LARGE`).
 * @throws PlatformError for any other refusal (its HTTP status and `errcode`, never the token).
 */
export async function downloadMatrixMedia(media: InboundMedia, options: MatrixMediaDownload): Promise<FetchedMedia> {
  const mxc = typeof media.url === "string" ? parseMxcUri(media.url) : null;
  if (mxc === null)
    throw new MediaUnavailableError(
      typeof media.url === "string" && media.url.startsWith("mxc://")
        ? "This Matrix file has an address that is not a valid mxc:// URI, so it was not fetched."
        : "This Matrix message names no mxc:// file, so nothing was fetched.",
    );
  const base = options.homeserverUrl.replace(/\/+$/u, "");
  const path = `${encodeURIComponent(mxc.serverName)}/${mxc.mediaId}`;
  let response = await request(`${base}/_matrix/client/v1/media/download/${path}`, options);
  if (response.status === 404 && (await errcodeOf(response.clone())) === "M_UNRECOGNIZED") {
    await response.body?.cancel().catch(() => {});
    response = await request(`${base}/_matrix/media/v3/download/${path}`, options);
  }
  if (!response.ok) {
    const errcode = await errcodeOf(response);
    if (response.status === 404 && errcode !== "M_UNRECOGNIZED") throw new MediaUnavailableError("The Matrix homeserver no longer has this file.");
    if (errcode === "M_TOO_LARGE") throw new MediaUnavailableError("The Matrix homeserver will not serve this file: it is too large.");
    throw new PlatformError("matrix", `matrix: the homeserver answered ${response.status}${errcode === null ? "" : ` ${errcode}`} to the media download`, {
      platformCode: errcode,
    });
  }
  const length = Number(response.headers.get("content-length"));
  return {
    // Node's web streams are async iterable (breaking out of the loop cancels the download).
    body: (response.body ?? emptyBody()) as unknown as AsyncIterable<Uint8Array>,
    size: response.headers.has("content-length") && Number.isSafeInteger(length) && length >= 0 ? length : null,
    mimeType: media.mimeType ?? response.headers.get("content-type"),
    fileName: media.fileName ?? null,
  };
}

/** One GET with the token in the header, no redirect followed; a network failure is a PlatformError without the URL's secrets (there are none) or the token. */
async function request(url: string, options: MatrixMediaDownload): Promise<Response> {
  try {
    return await fetch(url, { headers: { authorization: `Bearer ${options.accessToken}` }, redirect: "error", signal: options.signal });
  } catch (error) {
    if (options.signal.aborted) throw error;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new PlatformError("matrix", `matrix: the media download from the homeserver failed (${why})`);
  }
}

/** The `errcode` of a Matrix error body, or null. */
async function errcodeOf(response: Response): Promise<string | null> {
  try {
    const body = (await response.json()) as { errcode?: unknown };
    return typeof body.errcode === "string" ? body.errcode : null;
  } catch {
    return null;
  }
}

/** A body with no bytes. */
async function* emptyBody(): AsyncGenerator<Uint8Array> {}
