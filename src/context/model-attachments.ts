/**
 * Stored attachment parts turned into what a model request carries (design of issue 30,
 * "To the model"): the newest images a model can take become OpenAI-style `image_url` parts
 * with `data:` URLs of their bytes, every other attachment its text placeholder
 * (see `./attachment-parts.ts`).
 *
 * - Images are counted newest first across the request (the last message's last image first);
 *   at most `maxImages` go as parts, and only in user messages (providers take images from the
 *   user only). An image whose blob is not stored does not use a place: the next older one may.
 * - A blob that is not stored gives its placeholder with `; bytes not stored`.
 * - Messages without attachment parts are returned as they are (the same objects).
 *
 * @module
 */
import type { AttachmentRef, ContentPart, ConversationMessage } from "../store/index.js";
import { attachmentPlaceholder, isAttachmentPart, isModelImage } from "./attachment-parts.js";

/** How {@link attachmentsForModel} reads the store (a `SessionDB` has both). */
export interface AttachmentReader {
  /** A blob's bytes, or `null` when it is not stored. */
  readMedia(sha256: string): Promise<Uint8Array | null>;
  /** A blob's record, or `null` when it is not stored (to mark placeholders of missing blobs); absent: every blob counts as stored. */
  getMedia?(sha256: string): Promise<unknown>;
}

/** Options of {@link attachmentsForModel}. */
export interface AttachmentsForModelOptions {
  /** At most this many images go as `image_url` parts (0: none). */
  maxImages: number;
}

/** What {@link attachmentsForModel} made. */
export interface ModelAttachments {
  /** The messages to send: no `attachment` part left. */
  messages: ConversationMessage[];
  /** Images sent as `image_url` parts. */
  images: number;
}

/**
 * How many images of `messages` (attachment parts of user messages, of a type models take)
 * could go as image parts.
 */
export function countModelImages(messages: readonly ConversationMessage[]): number {
  let count = 0;
  for (const message of messages) {
    if (message.role !== "user" || !Array.isArray(message.content)) continue;
    for (const part of message.content) if (isAttachmentPart(part) && isModelImage(part.attachment)) count += 1;
  }
  return count;
}

/**
 * The messages with every attachment part replaced: the newest `maxImages` model images (whose
 * bytes are stored) by `image_url` parts, the rest by their placeholders. Reads each chosen
 * image's bytes once (a blob sent twice is read once).
 *
 * @example
 * const { messages, images } = await attachmentsForModel(built.messages, db, { maxImages: 4 });
 */
export async function attachmentsForModel(
  messages: readonly ConversationMessage[],
  reader: AttachmentReader,
  options: AttachmentsForModelOptions,
): Promise<ModelAttachments> {
  const limit = Math.max(0, Math.floor(options.maxImages));
  // Newest first: which image parts become image_url parts.
  const chosen = new Map<ContentPart, string>();
  const dataUrls = new Map<string, string | null>();
  const missing = new Set<string>();
  for (let m = messages.length - 1; m >= 0 && chosen.size < limit; m--) {
    const message = messages[m]!;
    if (message.role !== "user" || !Array.isArray(message.content)) continue;
    for (let p = message.content.length - 1; p >= 0 && chosen.size < limit; p--) {
      const part = message.content[p]!;
      if (!isAttachmentPart(part) || !isModelImage(part.attachment)) continue;
      const url = await dataUrlOf(part.attachment, reader, dataUrls);
      if (url === null) missing.add(part.attachment.sha256);
      else chosen.set(part, url);
    }
  }

  // Every other attachment: is its blob there?
  const stored = new Map<string, boolean>();
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (!isAttachmentPart(part) || chosen.has(part)) continue;
      const sha256 = part.attachment.sha256;
      if (stored.has(sha256)) continue;
      if (missing.has(sha256) || dataUrls.get(sha256) === null) stored.set(sha256, false);
      else if (dataUrls.has(sha256) || reader.getMedia === undefined) stored.set(sha256, true);
      else stored.set(sha256, (await reader.getMedia(sha256)) !== null);
    }
  }

  const out = messages.map((message): ConversationMessage => {
    if (!Array.isArray(message.content) || !message.content.some(isAttachmentPart)) return message;
    const content = message.content.map((part): ContentPart => {
      if (!isAttachmentPart(part)) return part;
      const url = chosen.get(part);
      if (url !== undefined) return { type: "image_url", image_url: { url } };
      return { type: "text", text: attachmentPlaceholder(part.attachment, { missing: stored.get(part.attachment.sha256) === false }) };
    });
    return { ...message, content };
  });
  return { messages: out, images: chosen.size };
}

async function dataUrlOf(ref: AttachmentRef, reader: AttachmentReader, cache: Map<string, string | null>): Promise<string | null> {
  const known = cache.get(ref.sha256);
  if (known !== undefined) return known;
  const bytes = await reader.readMedia(ref.sha256);
  const url =
    bytes === null
      ? null
      : `data:${ref.mimeType.split(";")[0]!.trim().toLowerCase()};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}`;
  cache.set(ref.sha256, url);
  return url;
}
