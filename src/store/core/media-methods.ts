/**
 * The {@link MediaStore} methods, once for every backend (see `../contract/media.ts`): blobs
 * stored in chunks (`media-steps.ts`), the reference index and removal (`attachment-steps.ts`).
 *
 * A put hashes first (a file is read in chunks, outside any transaction), then writes in one
 * transaction, reading the chunks again one at a time (a file's bytes are hashed again on the
 * way and must match). A whole blob is read in one statement; streamed, it is one read per chunk
 * (the first with the blob's row).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type FileHandle, open } from "node:fs/promises";
import { readSync } from "node:fs";
import {
  MEDIA_GRACE_SECONDS,
  type MediaCheck,
  type MediaInput,
  type MissingMedia,
  type PutMediaOptions,
  type SessionAttachment,
  type StoredMedia,
  type SweepMediaOptions,
} from "../contract.js";
import { checkMimeType, checkSha256 } from "../attachment-input.js";
import { DatabaseCorruptError, InvalidInputError, NotFoundError } from "../errors.js";
import { checkId, checkTime } from "../input-validation.js";
import { assertOpen } from "./assert-open.js";
import { dropUnreferenced, sessionAttachment, sessionAttachments } from "./attachment-steps.js";
import { now } from "./clock.js";
import { asBuffer, blobChunk, chunkCount, MEDIA_CHUNK_BYTES, mediaRow, storeBlob, toStoredMedia } from "./media-steps.js";
import { all, column, tuples, value } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";

/** Most missing references or corrupt blobs {@link checkMedia} lists. */
const CHECK_LIST_LIMIT = 100;
/** Most blobs one sweep write removes. */
const SWEEP_BATCH = 500;

/** The bytes of a put: in memory, or an open file read at explicit positions. */
type Source = { kind: "bytes"; bytes: Uint8Array } | { kind: "file"; handle: FileHandle; size: number };

export async function putMedia(d: StoreDialect<unknown>, input: MediaInput, options: PutMediaOptions): Promise<StoredMedia> {
  assertOpen(d);
  if (options === null || typeof options !== "object") throw new InvalidInputError("putMedia needs options { mimeType }.", { field: "options" });
  const mimeType = checkMimeType(options.mimeType, "mimeType");
  const declared = options.sha256 === undefined ? undefined : checkSha256(options.sha256, "sha256");
  const at = checkTime(options.at, "at", now());
  const { source, sha256 } = await openSource(input);
  try {
    if (declared !== undefined && declared !== sha256) {
      throw new InvalidInputError(`sha256 ${declared} does not match the bytes given (their SHA-256 is ${sha256}); nothing was stored.`, { field: "sha256" });
    }
    const size = source.kind === "bytes" ? source.bytes.byteLength : source.size;
    const chunk =
      source.kind === "bytes"
        ? (seq: number) => source.bytes.subarray(seq * MEDIA_CHUNK_BYTES, (seq + 1) * MEDIA_CHUNK_BYTES)
        : (seq: number) => readChunk(source.handle, seq, size);
    return await d.write(`storing media ${sha256}`, () => storeBlob({ sha256, mimeType, size, at, chunk, verify: source.kind === "file" }));
  } finally {
    if (source.kind === "file") await source.handle.close();
  }
}

/** Checks the input, opens a file, and hashes the bytes (a file in chunks: memory stays bounded). */
async function openSource(input: MediaInput): Promise<{ source: Source; sha256: string }> {
  if (input === null || typeof input !== "object") throw new InvalidInputError("putMedia needs { bytes } or { file }.", { field: "input" });
  if ("bytes" in input) {
    if (!(input.bytes instanceof Uint8Array)) throw new InvalidInputError("bytes must be a Uint8Array (or a Buffer).", { field: "bytes" });
    return { source: { kind: "bytes", bytes: input.bytes }, sha256: createHash("sha256").update(input.bytes).digest("hex") };
  }
  const path = (input as { file?: unknown }).file;
  if (typeof path !== "string" || path === "") throw new InvalidInputError("putMedia needs { bytes } or { file: <path> }.", { field: "file" });
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw new InvalidInputError(`The file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); nothing was stored.`, {
      field: "file",
      cause: error,
    });
  }
  try {
    const hash = createHash("sha256");
    const buffer = Buffer.allocUnsafe(MEDIA_CHUNK_BYTES);
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, MEDIA_CHUNK_BYTES, size);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
    return { source: { kind: "file", handle, size }, sha256: hash.digest("hex") };
  } catch (error) {
    await handle.close();
    throw new InvalidInputError(`The file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); nothing was stored.`, {
      field: "file",
      cause: error,
    });
  }
}

/** Chunk `seq` of an open file (synchronous: it runs inside the write's steps), as many bytes as it has up to the chunk's end. */
function readChunk(handle: FileHandle, seq: number, size: number): Uint8Array {
  const length = Math.min(MEDIA_CHUNK_BYTES, size - seq * MEDIA_CHUNK_BYTES);
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const n = readSync(handle.fd, buffer, filled, length - filled, seq * MEDIA_CHUNK_BYTES + filled);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}

export async function getMedia(d: StoreDialect<unknown>, sha256: string): Promise<StoredMedia | null> {
  checkSha256(sha256);
  return d.read("reading media", function* () {
    const row = yield* mediaRow(sha256);
    return row === undefined ? null : toStoredMedia(row);
  });
}

export async function readMedia(d: StoreDialect<unknown>, sha256: string): Promise<Uint8Array | null> {
  checkSha256(sha256);
  return d.read(`reading media ${sha256}`, function* () {
    // The row and every chunk in one statement (one round trip and one snapshot on PostgreSQL):
    // no row, not stored; a row whose data is null, a blob without chunks.
    const rows = yield* tuples("SELECT m.size, c.data FROM media m LEFT JOIN media_chunks c ON c.sha256 = m.sha256 WHERE m.sha256 = ? ORDER BY c.seq", [
      sha256,
    ]);
    const first = rows[0];
    if (first === undefined) return null;
    const size = Number(first[0]);
    const chunks = rows.flatMap((row) => (row[1] === null ? [] : [asBuffer(row[1] as Uint8Array)]));
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    if (bytes.byteLength === size) return bytes;
    throw damaged(d, sha256, `${bytes.byteLength} bytes are stored of ${size}`);
  });
}

function damaged(d: StoreDialect<unknown>, sha256: string, what: string): DatabaseCorruptError {
  return new DatabaseCorruptError(d.location, `Media ${sha256} is damaged (${what}); run \`threadline doctor\`.`);
}

export async function streamMedia(d: StoreDialect<unknown>, sha256: string): Promise<AsyncIterable<Uint8Array> | null> {
  checkSha256(sha256);
  // The row with the first chunk (one round trip for a blob of one chunk, most photos).
  const rows = await d.read(`reading media ${sha256}`, () =>
    tuples("SELECT m.size, c.data FROM media m LEFT JOIN media_chunks c ON c.sha256 = m.sha256 AND c.seq = 0 WHERE m.sha256 = ?", [sha256]),
  );
  const row = rows[0];
  if (row === undefined) return null;
  return chunksOf(d, sha256, Number(row[0]), (row[1] as Uint8Array | null) ?? undefined);
}

/** The chunks of a blob, one read each after `first` (chunk 0, read with the row; a blob removed meanwhile ends the stream with an error). */
async function* chunksOf(d: StoreDialect<unknown>, sha256: string, size: number, first: Uint8Array | undefined): AsyncGenerator<Uint8Array> {
  const chunks = chunkCount(size);
  for (let seq = 0; seq < chunks; seq++) {
    const bytes = seq === 0 ? first : await d.read(`reading media ${sha256}`, () => blobChunk(sha256, seq));
    if (bytes === undefined) {
      if ((await getMedia(d, sha256)) === null) throw new NotFoundError(`Media ${sha256} was removed while it was being read.`);
      throw damaged(d, sha256, `chunk ${seq} of ${chunks} is missing`);
    }
    yield asBuffer(bytes);
  }
}

export async function listAttachments(d: StoreDialect<unknown>, sessionId: string): Promise<SessionAttachment[]> {
  checkId(sessionId, "sessionId");
  return d.read("listing attachments", () => sessionAttachments(sessionId));
}

export async function findAttachment(d: StoreDialect<unknown>, sessionId: string, sha256: string): Promise<SessionAttachment | null> {
  checkId(sessionId, "sessionId");
  checkSha256(sha256);
  return d.read("finding an attachment", () => sessionAttachment(sessionId, sha256));
}

export async function sweepMedia(d: StoreDialect<unknown>, options: SweepMediaOptions = {}): Promise<number> {
  if (options === null || typeof options !== "object")
    throw new InvalidInputError("sweepMedia takes { before } (epoch seconds) or nothing.", { field: "options" });
  const before = checkTime(options.before, "before", now() - MEDIA_GRACE_SECONDS);
  let removed = 0;
  for (;;) {
    const batch = await d.write("sweeping media", function* () {
      const candidates = yield* column<string>(
        `SELECT sha256 FROM media WHERE touched_at < ?
           AND NOT EXISTS (SELECT 1 FROM message_attachments a WHERE a.sha256 = media.sha256)
         ORDER BY sha256 LIMIT ${SWEEP_BATCH}`,
        [before],
      );
      return { found: candidates.length, removed: yield* dropUnreferenced(candidates, before, d) };
    });
    removed += batch.removed;
    if (batch.found < SWEEP_BATCH) return removed;
  }
}

export async function checkMedia(d: StoreDialect<unknown>, options: { verify?: boolean } = {}): Promise<MediaCheck> {
  const verify = options?.verify === true;
  const found = await d.read("checking media", function* () {
    const blobs = Number((yield* value<number | string>("SELECT count(*) FROM media")) ?? 0);
    const bytes = Number((yield* value<number | string | null>("SELECT coalesce(sum(size), 0) FROM media")) ?? 0);
    const references = Number((yield* value<number | string>("SELECT count(*) FROM message_attachments")) ?? 0);
    const dangling = "FROM message_attachments a WHERE NOT EXISTS (SELECT 1 FROM media b WHERE b.sha256 = a.sha256)";
    const missingCount = Number((yield* value<number | string>(`SELECT count(*) ${dangling}`)) ?? 0);
    const missing = (yield* all<{ session_id: string; message_id: number | string; sha256: string }>(
      `SELECT a.session_id, a.message_id, a.sha256 ${dangling} ORDER BY a.message_id, a.position LIMIT ${CHECK_LIST_LIMIT}`,
    )).map((row): MissingMedia => ({ sessionId: row.session_id, messageId: Number(row.message_id), sha256: row.sha256 }));
    const unreferenced = Number(
      (yield* value<number | string>("SELECT count(*) FROM media WHERE NOT EXISTS (SELECT 1 FROM message_attachments a WHERE a.sha256 = media.sha256)")) ?? 0,
    );
    return { blobs, bytes, references, missing, missingCount, unreferenced };
  });
  const corrupt = verify ? await corruptBlobs(d) : [];
  return { ...found, corrupt };
}

/** Blobs whose chunks no longer add up to their size or hash to their id (each chunk read on its own: memory bounded). */
async function corruptBlobs(d: StoreDialect<unknown>): Promise<string[]> {
  const corrupt: string[] = [];
  let after = "";
  for (;;) {
    const page = await d.read("checking media", () => column<string>("SELECT sha256 FROM media WHERE sha256 > ? ORDER BY sha256 LIMIT 500", [after]));
    for (const sha256 of page) {
      if (!(await blobIsIntact(d, sha256))) corrupt.push(sha256);
      if (corrupt.length >= CHECK_LIST_LIMIT) return corrupt;
    }
    if (page.length < 500) return corrupt;
    after = page[page.length - 1]!;
  }
}

async function blobIsIntact(d: StoreDialect<unknown>, sha256: string): Promise<boolean> {
  const row = await d.read("checking media", () => mediaRow(sha256));
  if (row === undefined) return true; // swept meanwhile
  const size = Number(row.size);
  const extra = await d.read("checking media", () =>
    value<number | string>("SELECT count(*) FROM media_chunks WHERE sha256 = ? AND seq >= ?", [sha256, chunkCount(size)]),
  );
  if (Number(extra ?? 0) > 0) return false;
  const hash = createHash("sha256");
  let length = 0;
  for (let seq = 0; seq < chunkCount(size); seq++) {
    const bytes = await d.read("checking media", () => blobChunk(sha256, seq));
    if (bytes === undefined) return false;
    hash.update(bytes);
    length += bytes.byteLength;
  }
  return length === size && hash.digest("hex") === sha256;
}
