/**
 * Reading what an adapter's `fetchMedia` returned, for the chat adapters' media tests:
 * {@link fetchedBytes} collects the body (a web stream or an async iterable) into one buffer;
 * {@link pngImage} makes a real PNG (so checks of the type by its bytes see an image).
 *
 * @module
 */
import { crc32, deflateSync } from "node:zlib";
import type { FetchedMedia } from "../../src/gateway/index.js";

/** Every byte of a fetched body, in order. */
export async function fetchedBytes(fetched: FetchedMedia): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of fetched.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A valid RGB PNG of `width` × `height` pixels whose colours depend on `seed` (different seeds, different bytes). */
export function pngImage(width: number, height: number, seed = 1): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y += 1) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width * 3; x += 1) row[1 + x] = (x * 7 + y * 13 + seed * 101) % 256;
    rows.push(row);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, pngChunk("IHDR", header), pngChunk("IDAT", deflateSync(Buffer.concat(rows))), pngChunk("IEND", Buffer.alloc(0))]);
}

/**
 * The start of an Ogg Opus recording (the first page with its `OpusHead`, then `seed`-dependent
 * bytes): what a voice note's bytes look like to a check of the type by its bytes.
 */
export function oggOpusVoice(seed = 1, extra = 256): Buffer {
  const head = Buffer.alloc(19);
  head.write("OpusHead", 0, "latin1");
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(312, 10); // pre-skip
  head.writeUInt32LE(48_000, 12); // input sample rate
  const page = Buffer.alloc(28);
  page.write("OggS", 0, "latin1");
  page[5] = 2; // beginning of stream
  page.writeUInt32LE(seed, 14); // serial number
  page[26] = 1; // one segment
  page[27] = head.length;
  const tail = Buffer.alloc(extra);
  for (let i = 0; i < extra; i += 1) tail[i] = (i * 29 + seed * 7) % 256;
  return Buffer.concat([page, head, tail]);
}

/**
 * The start of a WebM recording (the EBML header naming DocType `webm`, then `seed`-dependent
 * bytes): what a Slack audio clip's bytes look like to a check of the type by its bytes.
 */
export function webmClip(seed = 1, extra = 256): Buffer {
  const docType = Buffer.from([0x42, 0x82, 0x84, ...Buffer.from("webm", "latin1")]);
  const header = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x80 | docType.length]), docType]);
  const tail = Buffer.alloc(extra);
  for (let i = 0; i < extra; i += 1) tail[i] = (i * 23 + seed * 11) % 256;
  return Buffer.concat([header, tail]);
}
