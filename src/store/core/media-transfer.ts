/**
 * The media of export and import, once for every backend: which stored blobs an exported
 * session's messages refer to (read with the session, from the reference index), their bytes
 * as base64 (a stored chunk at a time on the lines path), and on import each entry checked
 * (base64, size, SHA-256) and stored before its session is written.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { ExportMediaMode, ImportOptions, SessionRecordMedia } from "../contract.js";
import { ConflictError, InvalidInputError } from "../errors.js";
import { checkHash, decodeRecordMedia, entryName, referencedBlobs } from "../record-media.js";
import type { ValidRecord } from "../session-record.js";
import { sessionRow } from "./lineage-steps.js";
import { getMedia, putMedia, readMedia, streamMedia } from "./media-methods.js";
import { all, type Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";

/** A media entry of an export before its bytes are read: what the `media` table says of a referenced blob. */
export type MediaEntry = Omit<SessionRecordMedia, "data">;

/** The export's media mode, checked (`undefined`: the default, `"inline"`). */
export function checkMediaMode(mode: unknown): ExportMediaMode {
  if (mode === undefined) return "inline";
  if (mode === "inline" || mode === "refs" || mode === "skip") return mode;
  throw new InvalidInputError(`media must be "inline", "refs" or "skip" (got ${JSON.stringify(mode)}).`, { field: "media" });
}

/**
 * The stored blobs a session's exported messages refer to (`includeRewound`: rewound messages'
 * too), one entry per blob, in the order the messages first refer to them. References whose
 * blob is not stored are left out (they dangle already; `doctor` names them).
 */
export function* exportedMedia(sessionId: string, includeRewound: boolean): Steps<MediaEntry[]> {
  const rows = yield* all<{ sha256: string; mime_type: string | null; size: number | string | null }>(
    "SELECT a.sha256, b.mime_type, b.size FROM message_attachments a JOIN messages m ON m.id = a.message_id " +
      `LEFT JOIN media b ON b.sha256 = a.sha256 WHERE a.session_id = ?${includeRewound ? "" : " AND m.rewound_at IS NULL"} ` +
      "ORDER BY a.message_id, a.position",
    [sessionId],
  );
  const seen = new Set<string>();
  const entries: MediaEntry[] = [];
  for (const row of rows) {
    if (seen.has(row.sha256)) continue;
    seen.add(row.sha256);
    if (row.mime_type === null || row.size === null) continue;
    entries.push({ sha256: row.sha256, mimeType: row.mime_type, size: Number(row.size) });
  }
  return entries;
}

/** The entries of a record: with their bytes as base64 (`inline`), or as they are (`refs`). */
export async function recordMedia(d: StoreDialect<unknown>, sessionId: string, entries: MediaEntry[], mode: ExportMediaMode): Promise<SessionRecordMedia[]> {
  if (mode !== "inline") return entries.map((e) => ({ ...e }));
  const out: SessionRecordMedia[] = [];
  for (const entry of entries) {
    const bytes = await readMedia(d, entry.sha256);
    if (bytes === null) throw vanished(sessionId, entry);
    out.push({ ...entry, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64") });
  }
  return out;
}

/**
 * The pieces of a line whose record has media: `line` (the record without media, ending in
 * `}\n`) up to its last `}`, then `,"media":[…]}` and `\n`: byte for byte `JSON.stringify` of
 * the record with {@link recordMedia}'s entries. Inline, each blob's base64 is written a stored
 * chunk at a time (bytes left over from a chunk that are not a multiple of 3 go with the next),
 * so memory holds one chunk, not the blob.
 */
export async function* linePieces(
  d: StoreDialect<unknown>,
  sessionId: string,
  line: Uint8Array,
  entries: MediaEntry[],
  mode: ExportMediaMode,
): AsyncIterable<Uint8Array> {
  if (mode === "skip" || entries.length === 0) {
    yield line;
    return;
  }
  // The line ends in `}\n`: the media go before that `}`.
  yield line.subarray(0, line.length - 2);
  if (mode === "refs") {
    yield Buffer.from(`,"media":${JSON.stringify(entries)}}\n`);
    return;
  }
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const head = JSON.stringify({ sha256: entry.sha256, mimeType: entry.mimeType, size: entry.size, data: "" }).slice(0, -2);
    yield Buffer.from(`${i === 0 ? ',"media":[' : ","}${head}`);
    const chunks = await streamMedia(d, entry.sha256);
    if (chunks === null) throw vanished(sessionId, entry);
    let carry: Buffer = Buffer.alloc(0);
    for await (const chunk of chunks) {
      const bytes = carry.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([carry, chunk]);
      const whole = bytes.length - (bytes.length % 3);
      if (whole > 0) yield Buffer.from(bytes.subarray(0, whole).toString("base64"));
      carry = Buffer.from(bytes.subarray(whole));
    }
    yield Buffer.from(`${carry.toString("base64")}"}`);
  }
  yield Buffer.from("]}\n");
}

function vanished(sessionId: string, entry: MediaEntry): ConflictError {
  return new ConflictError(
    `The attachment ${entry.sha256} of session ${sessionId} was removed while the export read it (the session was deleted or pruned meanwhile); run the export again.`,
    { sessionId },
  );
}

/**
 * Before a record is imported: checks every media entry its messages refer to (data that
 * decodes to `size` bytes hashing to `sha256`; without data, the file `<mediaDir>/<sha256>`
 * when a folder is given), and only when all are good, stores them. Entries no message refers
 * to are ignored; entries without data and without a folder are left out (the references dangle
 * until the bytes come). For a session that already exists (its import is skipped) only blobs
 * that are not stored are written: importing an export made with media over an import made
 * without fills in the missing attachments. A bad entry throws {@link InvalidInputError}: the
 * line is rejected with nothing stored.
 */
export async function storeRecordMedia(d: StoreDialect<unknown>, record: ValidRecord, options: ImportOptions): Promise<void> {
  if (record.media.length === 0) return;
  const exists = (await d.read("checking an imported session", () => sessionRow(record.session.id))) !== undefined;
  const referenced = referencedBlobs(record.messages.map((m) => m.message.content));
  const wanted: Array<{ entry: ValidRecord["media"][number]; index: number }> = [];
  for (const [index, entry] of record.media.entries()) {
    if (!referenced.has(entry.sha256)) continue;
    if (exists && (await getMedia(d, entry.sha256)) !== null) continue;
    wanted.push({ entry, index });
  }
  // First every check (one blob in memory at a time), then the writes: a bad entry stores nothing.
  const files = new Map<number, string>();
  for (const { entry, index } of wanted) {
    if (entry.data !== undefined) {
      decodeRecordMedia({ ...entry, data: entry.data }, index);
    } else if (options.mediaDir !== undefined) {
      const file = join(options.mediaDir, entry.sha256);
      await checkMediaFile(file, entry, index);
      files.set(index, file);
    }
  }
  for (const { entry, index } of wanted) {
    const file = files.get(index);
    if (entry.data !== undefined) {
      await putMedia(d, { bytes: decodeRecordMedia({ ...entry, data: entry.data }, index) }, { mimeType: entry.mimeType, sha256: entry.sha256 });
    } else if (file !== undefined) {
      await putMedia(d, { file }, { mimeType: entry.mimeType, sha256: entry.sha256 });
    }
  }
}

/** Checks a sidecar file: present, of the entry's size, hashing to its sha256 (read in chunks). */
async function checkMediaFile(file: string, entry: SessionRecordMedia, index: number): Promise<void> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") {
      throw new InvalidInputError(
        `${entryName(entry, index)}: ${file} does not exist; copy the whole folder the export wrote, or import without --media-dir to keep the references without their bytes.`,
        { field: `media[${index}]` },
      );
    }
    throw new InvalidInputError(`${entryName(entry, index)}: ${file} cannot be read (${error.message}).`, { field: `media[${index}]` });
  });
  if (!info.isFile() || info.size !== entry.size) {
    throw new InvalidInputError(
      `${entryName(entry, index)}: ${file} ${info.isFile() ? `holds ${info.size} bytes, but size says ${entry.size}` : "is not a file"}; export the session again.`,
      { field: `media[${index}]` },
    );
  }
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  checkHash(hash.digest("hex"), entry, index);
}
