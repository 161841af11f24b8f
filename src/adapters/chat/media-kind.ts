/**
 * The kind of an inbound attachment ({@link InboundMedia.kind}) for platforms that give only
 * its MIME type ({@link mediaKindOf}).
 *
 * @module
 */
import type { InboundMedia } from "../../gateway/index.js";

/**
 * `image`, `audio` or `video` by the MIME type's top-level type; `file` for anything else or
 * no MIME type.
 *
 * @example
 * ```ts
 * mediaKindOf("image/png"); // "image"
 * mediaKindOf(null); // "file"
 * ```
 */
export function mediaKindOf(mimeType: string | null | undefined): InboundMedia["kind"] {
  if (mimeType === null || mimeType === undefined) return "file";
  if (mimeType.startsWith("image/")) return "image";
  if (mimeType.startsWith("audio/")) return "audio";
  if (mimeType.startsWith("video/")) return "video";
  return "file";
}
