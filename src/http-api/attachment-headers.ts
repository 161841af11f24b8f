/**
 * How a stored attachment is served: its `Content-Type`, whether a browser may show it in
 * place (`Content-Disposition: inline`) or must save it (`attachment`), and the file name.
 * Stored media is untrusted (anyone who can message the bot chooses the bytes), so:
 *
 * - only raster images a browser cannot run anything in (JPEG, PNG, GIF, WebP) are inline;
 *   everything else, SVG and HTML above all, is served as an attachment, whatever type it
 *   is stored with;
 * - a stored type that is not a plain `type/subtype` is served as `application/octet-stream`;
 * - the file name is the sender's, cleaned of path separators and control characters, sent
 *   as RFC 6266 `filename*=UTF-8''…` with an ASCII `filename="…"` fallback.
 *
 * The route adds `X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox;
 * default-src 'none'` to every attachment, so even a file opened in place runs nothing.
 *
 * @module
 */

/** Types served inline: raster images no browser runs code in. */
export const INLINE_IMAGE_TYPES: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** The CSP of every attachment response: no script, no plugin, no fetch, a unique origin. */
export const ATTACHMENT_CSP = "sandbox; default-src 'none'";

/** Longest file name sent (in code points); longer names keep their end (the extension). */
const MAX_NAME = 150;

/** An RFC 7230 token: the characters of a media type's type and subtype. */
const MIME = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/u;

/** A file name extension for an attachment without a name, by its type. */
const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/webm": "webm",
  "video/mp4": "mp4",
  "video/webm": "webm",
  "video/quicktime": "mov",
  "application/pdf": "pdf",
  "application/zip": "zip",
  "text/plain": "txt",
  "text/html": "html",
  "text/csv": "csv",
  "application/json": "json",
};

/** The media type without parameters, lower-cased (`Image/PNG; x=y` → `image/png`), or `null` when it is not one. */
export function mediaTypeEssence(mimeType: string): string | null {
  const essence = (mimeType.split(";")[0] ?? "").trim().toLowerCase();
  return MIME.test(essence) ? essence : null;
}

/** The `Content-Type` an attachment is served with: its stored type without parameters, or `application/octet-stream`. */
export function servedContentType(mimeType: string): string {
  return mediaTypeEssence(mimeType) ?? "application/octet-stream";
}

/** Whether an attachment of this stored type may be shown in place (a raster image). */
export function servedInline(mimeType: string): boolean {
  const essence = mediaTypeEssence(mimeType);
  return essence !== null && INLINE_IMAGE_TYPES.has(essence);
}

/**
 * The file name an attachment is saved as: the sender's name without directories, control or
 * bidirectional-override characters and at most {@link MAX_NAME} code points; without one,
 * `attachment-<first 12 hex digits>.<extension of its type>`.
 */
export function attachmentFileName(fileName: string | null | undefined, sha256: string, mimeType: string): string {
  const cleaned = [...(fileName ?? "").replace(/[\p{Cc}\p{Cf}]/gu, "")].join("").split(/[/\\]/u).at(-1)!.trim().replace(/^\.+/u, "");
  if (cleaned !== "") {
    const points = [...cleaned];
    return points.length <= MAX_NAME ? cleaned : points.slice(-MAX_NAME).join("");
  }
  const ext = EXTENSIONS[mediaTypeEssence(mimeType) ?? ""];
  return `attachment-${sha256.slice(0, 12)}${ext === undefined ? "" : `.${ext}`}`;
}

/** RFC 5987 `ext-value` percent-encoding (everything but attr-char). */
function encodeExtValue(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/gu, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The `Content-Disposition` of an attachment: `inline` for a raster image, `attachment` for
 * anything else, with the file name as `filename` (ASCII, quotes and backslashes replaced)
 * and `filename*=UTF-8''…` (the exact name).
 */
export function contentDisposition(mimeType: string, fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/gu, "_");
  return `${servedInline(mimeType) ? "inline" : "attachment"}; filename="${ascii}"; filename*=UTF-8''${encodeExtValue(fileName)}`;
}
