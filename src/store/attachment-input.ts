/**
 * Attachment parts of a message (`{ type: "attachment", attachment: { sha256, kind, … } }`,
 * see `contract/media.ts`): checked on every write, so a reference the store indexes is always
 * well formed, and read back out of a message's content for the reference index.
 *
 * @module
 */
import type { AttachmentKind, AttachmentRef, MessageContent } from "./contract.js";
import { InvalidInputError } from "./errors.js";

/** The kinds an attachment may have. */
export const ATTACHMENT_KINDS: readonly AttachmentKind[] = ["image", "audio", "video", "file"];

/** Longest MIME type accepted. */
export const MAX_MIME_TYPE_LENGTH = 255;

const SHA256 = /^[0-9a-f]{64}$/;
const CONTROL = /[\u0000-\u001F\u007F]/u;

/** Whether `value` is a SHA-256 as the store names blobs: 64 lower-case hex digits. */
export function isSha256(value: unknown): value is string {
  return typeof value === "string" && SHA256.test(value);
}

/** Checks a blob id given to a media call (`field` names it in the error). */
export function checkSha256(value: unknown, field = "sha256"): string {
  if (!isSha256(value)) {
    throw new InvalidInputError(`${field} must be the 64 lower-case hex digits of a SHA-256 (as putMedia returns it).`, { field });
  }
  return value;
}

/** Checks a MIME type: a non-empty string of at most 255 characters, without control characters. */
export function checkMimeType(value: unknown, field: string): string {
  if (typeof value !== "string" || value === "" || value.length > MAX_MIME_TYPE_LENGTH || CONTROL.test(value)) {
    throw new InvalidInputError(
      `${field} must be a MIME type such as "image/jpeg": a non-empty string of at most ${MAX_MIME_TYPE_LENGTH} characters without control characters.`,
      { field },
    );
  }
  return value;
}

/**
 * Checks the `attachment` of an attachment part (`field` is the part, e.g.
 * `message.content[1]`): sha256, kind, mimeType and size are required; fileName and caption
 * are strings or null, voice a boolean, meta a JSON object or null.
 */
export function checkAttachmentPart(part: Record<string, unknown>, field: string): void {
  const ref = part.attachment as Record<string, unknown> | null | undefined;
  const at = `${field}.attachment`;
  if (ref === null || typeof ref !== "object" || Array.isArray(ref)) {
    throw new InvalidInputError(`${at} must be an object { sha256, kind, mimeType, size, … } naming a blob stored with putMedia.`, { field: at });
  }
  checkSha256(ref.sha256, `${at}.sha256`);
  if (!(ATTACHMENT_KINDS as readonly unknown[]).includes(ref.kind)) {
    throw new InvalidInputError(`${at}.kind must be one of ${ATTACHMENT_KINDS.join(", ")}.`, { field: `${at}.kind` });
  }
  checkMimeType(ref.mimeType, `${at}.mimeType`);
  if (typeof ref.size !== "number" || !Number.isSafeInteger(ref.size) || ref.size < 0) {
    throw new InvalidInputError(`${at}.size must be the number of bytes: a non-negative integer.`, { field: `${at}.size` });
  }
  for (const key of ["fileName", "caption"] as const) {
    const value = ref[key];
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw new InvalidInputError(`${at}.${key} must be a string or null (leave it out when there is none).`, { field: `${at}.${key}` });
    }
  }
  if (ref.voice !== undefined && typeof ref.voice !== "boolean") {
    throw new InvalidInputError(`${at}.voice must be true or false (true for a voice note recorded in the chat).`, { field: `${at}.voice` });
  }
  const meta = ref.meta;
  if (meta !== undefined && meta !== null && (typeof meta !== "object" || Array.isArray(meta))) {
    throw new InvalidInputError(`${at}.meta must be a JSON object such as { "durationSeconds": 3 }, or null.`, { field: `${at}.meta` });
  }
}

/** The attachments a (validated) message's content refers to, in order (the index's `position` is the place in this list). */
export function attachmentsOf(content: MessageContent): AttachmentRef[] {
  if (!Array.isArray(content)) return [];
  const refs: AttachmentRef[] = [];
  for (const part of content) if (part.type === "attachment") refs.push(part.attachment as AttachmentRef);
  return refs;
}
