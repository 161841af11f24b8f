/**
 * Media blobs inside a transaction, once for every backend: a blob is one `media` row (its
 * SHA-256, type, size and times) and its bytes in `media_chunks` rows of
 * {@link MEDIA_CHUNK_BYTES}, so no statement ever carries more than one chunk and reading or
 * writing a blob of any size keeps memory bounded by one chunk.
 *
 * Storing is de-duplicated and safe between processes: a put first renews the row of a blob
 * already stored (that row lock also holds off a deletion until commit, which then sees it
 * renewed); otherwise it inserts the row `ON CONFLICT DO NOTHING` and writes the chunks only
 * when its insert won. A put that lost the race to a concurrent one (which committed the
 * blob whole, chunks and row in one transaction) renews that row instead.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { StoredMedia } from "../contract.js";
import { InvalidInputError, StoreError } from "../errors.js";
import { one, run, value, type Steps } from "./steps.js";

/**
 * Bytes per stored chunk (256 KiB): large enough that a 20 MiB photo is 80 rows, small enough
 * that one row never weighs on a statement, a page cache or a PostgreSQL TOAST fetch.
 */
export const MEDIA_CHUNK_BYTES = 256 * 1024;

/** A `media` row. */
export interface MediaRow {
  sha256: string;
  mime_type: string;
  size: number | string;
  created_at: number;
}

/** The columns of a {@link MediaRow}. */
export const MEDIA_COLUMNS = "sha256, mime_type, size, created_at";

/** A `media` row as the contract returns it. */
export function toStoredMedia(row: MediaRow): StoredMedia {
  return { sha256: row.sha256, mimeType: row.mime_type, size: Number(row.size), createdAt: Number(row.created_at) };
}

/** What {@link storeBlob} writes. */
export interface BlobToStore {
  sha256: string;
  mimeType: string;
  size: number;
  /** Epoch seconds: `created_at` of a new blob, and the `touched_at` a put sets (never moved back). */
  at: number;
  /**
   * The bytes of chunk `seq` (`MEDIA_CHUNK_BYTES` long, the last one shorter), read on demand so
   * only one chunk is held at a time; it may be called again for the same `seq` (a retried
   * transaction).
   */
  chunk(seq: number): Uint8Array;
  /** Whether the chunks read must be hashed again and checked against `sha256` (a file, which may change while it is read). */
  verify: boolean;
}

/** Most attempts of a put that keeps meeting a concurrent deletion of the same blob. */
const PUT_ATTEMPTS = 3;

/** Stores a blob (inside a write): renews it when it is stored already, else writes its row and chunks. */
export function* storeBlob(blob: BlobToStore): Steps<StoredMedia> {
  for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt++) {
    const renewed = yield* one<MediaRow>(
      `UPDATE media SET touched_at = CASE WHEN touched_at < ? THEN ? ELSE touched_at END WHERE sha256 = ? RETURNING ${MEDIA_COLUMNS}`,
      [blob.at, blob.at, blob.sha256],
    );
    if (renewed !== undefined) return toStoredMedia(renewed);
    const inserted = yield* run("INSERT INTO media (sha256, mime_type, size, created_at, touched_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING", [
      blob.sha256,
      blob.mimeType,
      blob.size,
      blob.at,
      blob.at,
    ]);
    if (inserted > 0) {
      yield* writeChunks(blob);
      return { sha256: blob.sha256, mimeType: blob.mimeType, size: blob.size, createdAt: blob.at };
    }
    // A concurrent put committed the blob first (or a deletion removed it in between): look again.
  }
  throw new StoreError(`Storing media ${blob.sha256} kept meeting concurrent changes of the same blob; nothing was written. Try again.`);
}

function* writeChunks(blob: BlobToStore): Steps<void> {
  const hash = blob.verify ? createHash("sha256") : null;
  const chunks = Math.ceil(blob.size / MEDIA_CHUNK_BYTES);
  for (let seq = 0; seq < chunks; seq++) {
    const bytes = blob.chunk(seq);
    const expected = Math.min(MEDIA_CHUNK_BYTES, blob.size - seq * MEDIA_CHUNK_BYTES);
    if (bytes.byteLength !== expected) {
      throw new InvalidInputError(
        `The file ended after ${seq * MEDIA_CHUNK_BYTES + bytes.byteLength} bytes, not ${blob.size}: it changed while it was stored. Store it again.`,
        {
          field: "file",
        },
      );
    }
    hash?.update(bytes);
    yield* run("INSERT INTO media_chunks (sha256, seq, data) VALUES (?, ?, ?)", [blob.sha256, seq, asBuffer(bytes)]);
  }
  if (hash !== null && hash.digest("hex") !== blob.sha256) {
    throw new InvalidInputError("The file changed while it was stored (its bytes no longer hash to the SHA-256 read first). Store it again.", {
      field: "file",
    });
  }
}

/** The bytes as a Buffer over the same memory (what both drivers bind as a blob). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A blob's row, or `undefined` when it is not stored. */
export function* mediaRow(sha256: string): Steps<MediaRow | undefined> {
  return yield* one<MediaRow>(`SELECT ${MEDIA_COLUMNS} FROM media WHERE sha256 = ?`, [sha256]);
}

/** One chunk of a blob, or `undefined` when it is missing. */
export function* blobChunk(sha256: string, seq: number): Steps<Uint8Array | undefined> {
  return yield* value<Uint8Array>("SELECT data FROM media_chunks WHERE sha256 = ? AND seq = ?", [sha256, seq]);
}

/** How many chunks a blob of `size` bytes is stored in. */
export function chunkCount(size: number): number {
  return Math.ceil(size / MEDIA_CHUNK_BYTES);
}
