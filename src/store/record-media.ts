/**
 * The `media` field of an export record (`SessionRecord.media`): the checks an import makes
 * on an entry before its bytes are stored (base64 that decodes, the size it names, the
 * SHA-256 it names). Shared by every backend; its zod schema is in session-record.ts.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { MessageContent, SessionRecordMedia } from "./contract.js";
import { InvalidInputError } from "./errors.js";

/** Lower-case hex SHA-256. */
export const SHA256 = /^[0-9a-f]{64}$/u;
/** Standard base64 with padding (what `Buffer#toString("base64")` writes). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/u;

/** The blobs the attachment parts of these messages' contents refer to. */
export function referencedBlobs(contents: Iterable<MessageContent>): Set<string> {
  const found = new Set<string>();
  for (const content of contents) {
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      if (part.type !== "attachment") continue;
      const sha256 = (part as { attachment?: { sha256?: unknown } }).attachment?.sha256;
      if (typeof sha256 === "string") found.add(sha256);
    }
  }
  return found;
}

/** How an entry is named in an error: its place in the record and the start of its hash. */
export function entryName(entry: SessionRecordMedia, index: number): string {
  return `media[${index}] (${entry.sha256.slice(0, 12)}…)`;
}

/**
 * The bytes of an entry's `data`, checked: valid base64, as many bytes as `size` says, hashing
 * to `sha256`. Throws {@link InvalidInputError} saying which entry and what is wrong.
 */
export function decodeRecordMedia(entry: SessionRecordMedia & { data: string }, index: number): Buffer {
  const name = entryName(entry, index);
  if (!BASE64.test(entry.data)) {
    throw new InvalidInputError(`${name}: data is not valid base64; export the session again (the line was changed or cut).`, {
      field: `media[${index}].data`,
    });
  }
  const bytes = Buffer.from(entry.data, "base64");
  if (bytes.length !== entry.size) {
    throw new InvalidInputError(`${name}: data decodes to ${bytes.length} bytes, but size says ${entry.size}; export the session again.`, {
      field: `media[${index}].data`,
    });
  }
  checkHash(createHash("sha256").update(bytes).digest("hex"), entry, index);
  return bytes;
}

/** Throws when `actual` is not the SHA-256 the entry names. */
export function checkHash(actual: string, entry: SessionRecordMedia, index: number): void {
  if (actual !== entry.sha256) {
    throw new InvalidInputError(
      `${entryName(entry, index)}: the bytes hash to ${actual}, not to the sha256 the entry names; they were changed or damaged. Export the session again.`,
      { field: `media[${index}].sha256` },
    );
  }
}
