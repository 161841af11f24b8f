/**
 * The media benchmark's workload: image messages stored the way the gateway stores them
 * (`putMedia`, then the turn with an attachment part), and the reads a context build makes.
 *
 * @module
 */
import { createCipheriv, createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { SessionDB } from "../../src/index.js";

/** A JPEG's start (SOI + JFIF APP0) and a PNG's signature + IHDR start: what type sniffing looks at. */
const JPEG_HEAD = Buffer.from("ffd8ffe000104a46494600010101004800480000", "hex");
const PNG_HEAD = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

/**
 * Image `i` of the run: `size` bytes, a real JPEG (even `i`) or PNG (odd `i`) header, then
 * AES-CTR keystream (deterministic per `i`, incompressible like real photo data).
 */
export function imageBytes(i: number, size: number): { bytes: Buffer; mimeType: string } {
  const jpeg = i % 2 === 0;
  const head = jpeg ? JPEG_HEAD : PNG_HEAD;
  const iv = createHash("sha256").update(`image ${i}`).digest().subarray(0, 16);
  const cipher = createCipheriv("aes-128-ctr", Buffer.alloc(16, 7), iv);
  const body = cipher.update(Buffer.alloc(size - head.length));
  return { bytes: Buffer.concat([head, body]), mimeType: jpeg ? "image/jpeg" : "image/png" };
}

/** What {@link ingestImages} did. */
export interface IngestResult {
  messages: number;
  sessions: number;
  rawBytes: number;
  /** Wall seconds of the store calls (putMedia + appendTurn), generation of the bytes excluded. */
  storeSeconds: number;
  /** Of which putMedia. */
  putSeconds: number;
  /** The newest session and its images' hashes, oldest first. */
  newest: { sessionId: string; images: Array<{ sha256: string; mimeType: string; size: number }> };
  sessionIds: string[];
}

/**
 * Stores `messages` image messages of `size` bytes, `perSession` to a session: for each, the
 * blob with `putMedia`, then `appendTurn` with the user message (a caption and the attachment
 * part) and the assistant's reply, one durable call each (what a live gateway does).
 */
export async function ingestImages(
  db: SessionDB,
  { messages, size, perSession }: { messages: number; size: number; perSession: number },
): Promise<IngestResult> {
  let storeSeconds = 0;
  let putSeconds = 0;
  let rawBytes = 0;
  const sessionIds: string[] = [];
  let images: IngestResult["newest"]["images"] = [];
  let sessionId = "";
  for (let i = 0; i < messages; i++) {
    if (i % perSession === 0) {
      sessionId = (await db.createSession({ source: "telegram", userId: `u${sessionIds.length}` })).id;
      sessionIds.push(sessionId);
      images = [];
    }
    const { bytes, mimeType } = imageBytes(i, size);
    rawBytes += bytes.length;
    const t0 = performance.now();
    const stored = await db.putMedia({ bytes }, { mimeType });
    const t1 = performance.now();
    await db.appendTurn(sessionId, [
      {
        role: "user",
        content: [
          { type: "text", text: `photo ${i}: what do you see?` },
          {
            type: "attachment",
            attachment: {
              sha256: stored.sha256,
              kind: "image",
              mimeType,
              size: bytes.length,
              fileName: `IMG_${i}.${mimeType === "image/jpeg" ? "jpg" : "png"}`,
            },
          },
        ],
      },
      { role: "assistant", content: `A picture, number ${i}.` },
    ]);
    const t2 = performance.now();
    putSeconds += (t1 - t0) / 1000;
    storeSeconds += (t2 - t0) / 1000;
    images.push({ sha256: stored.sha256, mimeType, size: bytes.length });
  }
  return { messages, sessions: sessionIds.length, rawBytes, storeSeconds, putSeconds, newest: { sessionId, images }, sessionIds };
}

/** The context builder of the model branch (`attachmentsForModel`), when this build has it. */
type AttachmentsForModel = (
  messages: unknown[],
  reader: { readMedia(sha256: string): Promise<Uint8Array | null>; getMedia?(sha256: string): Promise<unknown> },
  options: { maxImages: number },
) => Promise<{ messages: unknown[]; images: number }>;

/** Loads `attachmentsForModel` from src/context when this build has it, else `null`. */
export async function loadContextBuilder(): Promise<AttachmentsForModel | null> {
  // A computed specifier: builds without the module still type-check and run the fallback.
  const specifier = ["..", "..", "src", "context", "model-attachments.js"].join("/");
  try {
    const mod = (await import(specifier)) as { attachmentsForModel?: AttachmentsForModel };
    return mod.attachmentsForModel ?? null;
  } catch {
    return null;
  }
}

/**
 * One context build with the newest 4 images of a session: with the builder, the session's
 * conversation through `attachmentsForModel` (`maxImages: 4`); without it, the 4 newest blobs
 * read and turned into base64 data URLs (what the builder does for them). Returns the bytes of
 * the data URLs made (a check that the images were really read).
 */
export async function buildContext(db: SessionDB, builder: AttachmentsForModel | null, newest: IngestResult["newest"]): Promise<number> {
  if (builder !== null) {
    const conversation = await db.getConversation(newest.sessionId);
    const built = await builder(conversation, db, { maxImages: 4 });
    let chars = 0;
    for (const m of built.messages as Array<{ content: unknown }>) {
      if (!Array.isArray(m.content)) continue;
      for (const p of m.content as Array<{ type: string; image_url?: { url: string } }>) if (p.type === "image_url") chars += p.image_url!.url.length;
    }
    return chars;
  }
  let chars = 0;
  for (const image of newest.images.slice(-4)) {
    const bytes = await db.readMedia(image.sha256);
    if (bytes === null) throw new Error(`image ${image.sha256} is not stored`);
    chars += `data:${image.mimeType};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}`.length;
  }
  return chars;
}
