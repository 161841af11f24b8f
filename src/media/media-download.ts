/**
 * Reading an attachment's bytes with bounded memory: a platform's body (an async iterable or
 * a web `ReadableStream`) is written to a temp file while it is counted against the limit and
 * hashed (SHA-256), and a `data:` URL (an API client's image) is decoded under the same limit.
 * Temp files live in one folder per process under `os.tmpdir()`, and are removed by their
 * caller ({@link removeSpooled}); the folder goes when the process exits.
 *
 * @module
 */
import { createHash, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MediaTooLargeError } from "./media-limits.js";
import { MEDIA_HEAD_BYTES } from "./media-type.js";

/** An attachment's bytes written to a temp file. */
export interface SpooledMedia {
  /** The temp file (remove it with {@link removeSpooled}). */
  file: string;
  /** Bytes read. */
  size: number;
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
  /** The first bytes (at most {@link MEDIA_HEAD_BYTES}), for type detection. */
  head: Uint8Array;
}

/** A body as `Adapter.fetchMedia` returns it. */
export type MediaBody = AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;

/** Options of {@link spoolMedia}. */
export interface SpoolOptions {
  /** Reading stops, and the file is refused, as soon as more than this many bytes came. */
  maxBytes: number;
  /** Stops reading (a timeout, the gateway stopping): the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Where the temp file goes (default: this process's folder under `os.tmpdir()`). */
  dir?: string;
}

let processDir: Promise<string> | null = null;

/** This process's temp folder for media (made on first use, removed when the process exits). */
export function mediaTempDir(): Promise<string> {
  processDir ??= mkdtemp(join(tmpdir(), `threadline-media-${process.pid}-`)).then((dir) => {
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  });
  return processDir;
}

/** Removes a temp file of {@link spoolMedia} (a missing file is fine). */
export async function removeSpooled(spooled: Pick<SpooledMedia, "file"> | null | undefined): Promise<void> {
  if (spooled) await rm(spooled.file, { force: true });
}

/** The body as an async iterator (a web stream through its reader). */
function iteratorOf(body: MediaBody): AsyncIterator<Uint8Array> {
  if (Symbol.asyncIterator in body) return (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  return {
    next: async () => {
      const { done, value } = await reader.read();
      return done ? { done: true, value: undefined } : { done: false, value };
    },
    return: async () => {
      await reader.cancel().catch(() => {});
      return { done: true, value: undefined };
    },
  };
}

/** The next chunk, or the signal's reason as soon as it aborts (a stalled body does not hold the turn). */
function nextChunk(iterator: AsyncIterator<Uint8Array>, signal: AbortSignal | undefined): Promise<IteratorResult<Uint8Array>> {
  if (signal === undefined) return iterator.next();
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    iterator.next().then(
      (result) => {
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Reads `body` into a temp file, counting and hashing as it goes. Rejects with
 * {@link MediaTooLargeError} as soon as the count passes `maxBytes`, with the signal's reason
 * when it aborts, or with the body's own error; the temp file is removed then, and the body
 * cancelled.
 *
 * @example
 * const spooled = await spoolMedia(fetched.body, { maxBytes: 20 * 1024 * 1024, signal });
 * try { await db.putMedia({ file: spooled.file }, { mimeType, sha256: spooled.sha256 }); } finally { await removeSpooled(spooled); }
 */
export async function spoolMedia(body: MediaBody, options: SpoolOptions): Promise<SpooledMedia> {
  const file = join(options.dir ?? (await mediaTempDir()), randomUUID());
  const handle = await open(file, "wx", 0o600);
  const iterator = iteratorOf(body);
  const hash = createHash("sha256");
  const head = new Uint8Array(MEDIA_HEAD_BYTES);
  let headLength = 0;
  let size = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await nextChunk(iterator, options.signal);
      if (done) break;
      const chunk = value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike);
      size += chunk.byteLength;
      if (size > options.maxBytes) throw new MediaTooLargeError(null, options.maxBytes);
      if (headLength < head.length) {
        const take = Math.min(head.length - headLength, chunk.byteLength);
        head.set(chunk.subarray(0, take), headLength);
        headLength += take;
      }
      hash.update(chunk);
      await handle.write(chunk);
    }
    finished = true;
  } finally {
    await handle.close();
    if (!finished) {
      await iterator.return?.().catch(() => {});
      await rm(file, { force: true });
    }
  }
  return { file, size, sha256: hash.digest("hex"), head: head.slice(0, headLength) };
}

/** Thrown by {@link decodeDataUrl} for a URL that is not a `data:` URL it can read. */
export class InvalidDataUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidDataUrlError";
  }
}

/** A decoded `data:` URL. */
export interface DecodedDataUrl {
  bytes: Uint8Array;
  /** The media type it names (essence only), or `null` when it names none. */
  mimeType: string | null;
}

/** Whether a URL is a `data:` URL (decoded locally, never fetched). */
export function isDataUrl(url: string | null | undefined): url is string {
  return typeof url === "string" && /^data:/iu.test(url);
}

/**
 * Decodes a `data:` URL (`data:image/png;base64,…` or percent-encoded). A base64 payload
 * whose decoded length would pass `maxBytes` is refused before it is decoded.
 *
 * @throws {MediaTooLargeError} over the limit (with the decoded size).
 * @throws {InvalidDataUrlError} when it is not a well-formed `data:` URL.
 */
export function decodeDataUrl(url: string, maxBytes: number): DecodedDataUrl {
  if (!isDataUrl(url)) throw new InvalidDataUrlError("it is not a data: URL");
  const comma = url.indexOf(",");
  if (comma < 0) throw new InvalidDataUrlError("it is not a valid data: URL (no comma before the data)");
  const header = url
    .slice(5, comma)
    .split(";")
    .map((s) => s.trim());
  const base64 = header.length > 1 && header[header.length - 1]!.toLowerCase() === "base64";
  const type = header[0] ?? "";
  const mimeType = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/iu.test(type) ? type.toLowerCase() : null;
  const data = url.slice(comma + 1);
  if (base64) {
    const clean = data.replace(/\s+/gu, "");
    if (!/^[A-Za-z0-9+/\-_]*={0,2}$/u.test(clean)) throw new InvalidDataUrlError("its base64 data is not valid");
    const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
    const length = Math.floor((clean.length * 3) / 4) - padding;
    if (length > maxBytes) throw new MediaTooLargeError(length, maxBytes);
    return { bytes: new Uint8Array(Buffer.from(clean, "base64")), mimeType };
  }
  const out: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < data.length; ) {
    const hex = data[i] === "%" ? /^[0-9a-f]{2}$/iu.exec(data.slice(i + 1, i + 3)) : null;
    if (hex !== null) {
      out.push(Number.parseInt(hex[0], 16));
      i += 3;
    } else {
      const char = String.fromCodePoint(data.codePointAt(i)!);
      for (const b of encoder.encode(char)) out.push(b);
      i += char.length;
    }
    if (out.length > maxBytes) throw new MediaTooLargeError(null, maxBytes);
  }
  const bytes = new Uint8Array(out);
  return { bytes, mimeType };
}
