/**
 * What a model is told about an attachment it is not given as an image: one short text
 * placeholder per attachment part of a stored message, one function per kind.
 *
 * | Attachment | Placeholder |
 * | --- | --- |
 * | image (any type; or a jpeg/png/gif/webp past the newest `media.maxImagesInContext`, or for a model without vision) | `[image: image/jpeg, 200 KB]` |
 * | voice note, transcribed | `[voice note: transcribed above]` |
 * | voice note, not transcribed | `[voice note: audio/ogg, 12 KB; not transcribed]` |
 * | audio file | `[audio: song.mp3, audio/mpeg, 3.1 MB; transcribed above]` / `…; not transcribed]` |
 * | video | `[video: video/mp4, 3.1 MB]` |
 * | file | `[file: report.pdf, application/pdf, 200 KB]` |
 * | a blob that is not stored | the same, with `; bytes not stored` before the `]` |
 *
 * A caption the sender gave follows the bracket: `[image: image/jpeg, 200 KB]: the harbour at dawn`.
 * Sizes are in bytes, KB and MB of 1,024.
 *
 * **Text files are not inlined.** A `text/*` file goes as its `[file: …]` placeholder like any
 * other file: the request's token budget and the choice of turns are made on counts that do not
 * depend on the bytes of a blob (a message costs the same whichever images are sent, so its count
 * is computed once and cached), and the text of a file someone sent is not mixed into the
 * conversation as if it had been typed. The transcript of a voice note is part of the message's
 * text already (stored by the ingest), which is why its placeholder says "transcribed above".
 *
 * @module
 */
import type { AttachmentPart, AttachmentRef } from "../store/index.js";

/** The image types models take as `image_url` parts (others go as placeholders). */
export const MODEL_IMAGE_TYPES: readonly string[] = Object.freeze(["image/jpeg", "image/png", "image/gif", "image/webp"]);

/** The note added to a placeholder whose blob is not stored (e.g. an import made without media). */
export const NOT_STORED_NOTE = "bytes not stored";

/** Longest caption kept in a placeholder (characters); a longer one is cut with an ellipsis. */
const MAX_CAPTION_CHARS = 200;

/** What a placeholder is built from: an attachment's facts (see {@link AttachmentRef}). */
export type PlaceholderFacts = Pick<AttachmentRef, "mimeType" | "size"> & Partial<Pick<AttachmentRef, "fileName" | "caption" | "voice" | "meta" | "kind">>;

/** Options of the placeholder functions. */
export interface PlaceholderOptions {
  /** The blob is not stored: the placeholder says so (`; bytes not stored`). */
  missing?: boolean;
}

/**
 * Whether a content part is an attachment part (`{ type: "attachment", attachment: { sha256, … } }`).
 *
 * @example
 * isAttachmentPart({ type: "attachment", attachment: { sha256: "ab…", kind: "image", mimeType: "image/png", size: 10 } }); // true
 */
export function isAttachmentPart(part: unknown): part is AttachmentPart {
  if (typeof part !== "object" || part === null) return false;
  const candidate = part as { type?: unknown; attachment?: unknown };
  return candidate.type === "attachment" && typeof candidate.attachment === "object" && candidate.attachment !== null;
}

/** Whether an attachment is an image a model can be sent (kind `image`, type jpeg/png/gif/webp). */
export function isModelImage(ref: Pick<AttachmentRef, "kind" | "mimeType">): boolean {
  return ref.kind === "image" && MODEL_IMAGE_TYPES.includes(normalType(ref.mimeType));
}

/**
 * A size for people: `512 bytes`, `200 KB`, `3.1 MB` (units of 1,024).
 *
 * @example
 * formatSize(204_800); // "200 KB"
 */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "unknown size";
  if (bytes < 1024) return `${Math.round(bytes)} byte${Math.round(bytes) === 1 ? "" : "s"}`;
  if (Math.round(bytes / 1024) < 1024) return `${Math.round(bytes / 1024)} KB`;
  const mb = bytes / (1024 * 1024);
  return `${mb < 100 ? mb.toFixed(1).replace(/\.0$/u, "") : Math.round(mb)} MB`;
}

/**
 * `[image: image/jpeg, 200 KB]` (+ `: <caption>`).
 *
 * @example
 * imagePlaceholder({ mimeType: "image/jpeg", size: 204_800, caption: "the harbour" }); // "[image: image/jpeg, 200 KB]: the harbour"
 */
export function imagePlaceholder(facts: PlaceholderFacts, options: PlaceholderOptions = {}): string {
  return bracket("image", [normalType(facts.mimeType), formatSize(facts.size)], options, facts.caption);
}

/**
 * A voice note: `[voice note: transcribed above]` when its transcript is in the message
 * (`meta.transcribed`), else `[voice note: audio/ogg, 12 KB; not transcribed]`.
 */
export function voiceNotePlaceholder(facts: PlaceholderFacts, options: PlaceholderOptions = {}): string {
  if (isTranscribed(facts)) return bracket("voice note", ["transcribed above"], options, facts.caption);
  return bracket("voice note", [normalType(facts.mimeType), `${formatSize(facts.size)}; not transcribed`], options, facts.caption);
}

/** An audio file: `[audio: song.mp3, audio/mpeg, 3.1 MB; not transcribed]` (or `; transcribed above`). */
export function audioPlaceholder(facts: PlaceholderFacts, options: PlaceholderOptions = {}): string {
  const state = isTranscribed(facts) ? "transcribed above" : "not transcribed";
  return bracket("audio", [...nameOf(facts), normalType(facts.mimeType), `${formatSize(facts.size)}; ${state}`], options, facts.caption);
}

/** A video: `[video: video/mp4, 3.1 MB]`. */
export function videoPlaceholder(facts: PlaceholderFacts, options: PlaceholderOptions = {}): string {
  return bracket("video", [normalType(facts.mimeType), formatSize(facts.size)], options, facts.caption);
}

/** A file: `[file: report.pdf, application/pdf, 200 KB]` (without a name: `[file: application/pdf, 200 KB]`). */
export function filePlaceholder(facts: PlaceholderFacts, options: PlaceholderOptions = {}): string {
  return bracket("file", [...nameOf(facts), normalType(facts.mimeType), formatSize(facts.size)], options, facts.caption);
}

/**
 * The placeholder of any attachment, by its kind (a voice note by `voice`).
 *
 * @example
 * attachmentPlaceholder({ kind: "file", mimeType: "application/pdf", size: 204_800, fileName: "report.pdf", sha256: "…" });
 * // "[file: report.pdf, application/pdf, 200 KB]"
 */
export function attachmentPlaceholder(ref: PlaceholderFacts, options: PlaceholderOptions = {}): string {
  switch (ref.kind) {
    case "image":
      return imagePlaceholder(ref, options);
    case "audio":
      return ref.voice === true ? voiceNotePlaceholder(ref, options) : audioPlaceholder(ref, options);
    case "video":
      return videoPlaceholder(ref, options);
    default:
      return filePlaceholder(ref, options);
  }
}

/**
 * A message content with every attachment part replaced by its placeholder text part (other
 * parts as they are; a string or `null` content unchanged): what any caller that sends stored
 * messages to a model without reading their blobs must send, since providers do not know the
 * `attachment` part.
 */
export function withAttachmentPlaceholders<T>(content: T): T {
  if (!Array.isArray(content) || !content.some(isAttachmentPart)) return content;
  return content.map((part: unknown) => (isAttachmentPart(part) ? { type: "text", text: attachmentPlaceholder(part.attachment) } : part)) as T;
}

function bracket(label: string, facts: string[], options: PlaceholderOptions, caption: string | null | undefined): string {
  const note = options.missing === true ? `; ${NOT_STORED_NOTE}` : "";
  const text = `[${label}: ${facts.join(", ")}${note}]`;
  const said = typeof caption === "string" ? oneLine(caption) : "";
  return said === "" ? text : `${text}: ${said}`;
}

function nameOf(facts: PlaceholderFacts): string[] {
  const name = typeof facts.fileName === "string" ? oneLine(facts.fileName) : "";
  return name === "" ? [] : [name];
}

function isTranscribed(facts: PlaceholderFacts): boolean {
  return facts.meta !== null && facts.meta !== undefined && facts.meta.transcribed === true;
}

function normalType(mimeType: string): string {
  const type = typeof mimeType === "string" ? mimeType.split(";")[0]!.trim().toLowerCase() : "";
  return type === "" ? "application/octet-stream" : type;
}

function oneLine(text: string): string {
  const folded = text.replace(/\s+/gu, " ").trim();
  const chars = [...folded];
  return chars.length <= MAX_CAPTION_CHARS ? folded : `${chars.slice(0, MAX_CAPTION_CHARS).join("")}…`;
}
