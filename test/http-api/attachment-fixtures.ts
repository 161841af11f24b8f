/**
 * Attachments for the HTTP API, security and web page tests: small real files (a PNG, a WAV,
 * a PDF, an SVG and an HTML page that would run script if a browser rendered them) and
 * {@link attach}, which stores blobs with `db.putMedia` and appends a user message whose
 * content refers to them, as the gateway's media ingest does.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { AttachmentRef, MediaStore, SessionHistory } from "../../src/store/index.js";

/** A 1×1 PNG (one red pixel is not needed: any decodable PNG will do). */
export const PNG_BYTES = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

/** A WAV file: `samples` frames of 8-bit mono silence at 8 kHz. */
export function wavBytes(samples = 800): Buffer {
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + samples, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24); // sample rate
  header.writeUInt32LE(8000, 28); // byte rate
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write("data", 36, "ascii");
  header.writeUInt32LE(samples, 40);
  return Buffer.concat([header, Buffer.alloc(samples, 0x80)]);
}

/** A one-page PDF with a line of text. */
export const PDF_BYTES = Buffer.from(
  "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
    "3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 100]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
  "latin1",
);

/** An SVG that runs script when a browser renders it as a document. */
export const SVG_BYTES = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>window.__pwned = true; alert("svg")</script><rect width="10" height="10"/></svg>',
);

/** An HTML page that runs script when rendered. */
export const HTML_BYTES = Buffer.from('<!doctype html><html><body><script>window.__pwned = true; alert("html")</script><p>hi</p></body></html>');

/** The SHA-256 of `bytes` in lower-case hex (the blob's id). */
export const sha256Of = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** One attachment to add: its bytes (`null`: refer to a blob that is not stored, as after an import without media) and its reference. */
export interface NewAttachment {
  bytes: Uint8Array | null;
  /** The bytes' SHA-256 when `bytes` is `null`. */
  sha256?: string;
  kind: AttachmentRef["kind"];
  mimeType: string;
  fileName?: string | null;
  caption?: string | null;
  voice?: boolean;
  /** The type the blob is stored with (default `mimeType`). */
  storedType?: string;
}

/**
 * Stores each attachment's bytes and appends one user message to `sessionId` whose content is
 * `text` (when given) followed by one attachment part per item. Returns the references in order.
 */
export async function attach(db: MediaStore & SessionHistory, sessionId: string, items: NewAttachment[], text?: string): Promise<AttachmentRef[]> {
  const refs: AttachmentRef[] = [];
  for (const item of items) {
    let sha256 = item.sha256;
    let size = 0;
    if (item.bytes !== null) {
      const stored = await db.putMedia({ bytes: item.bytes }, { mimeType: item.storedType ?? item.mimeType });
      sha256 = stored.sha256;
      size = stored.size;
    }
    if (sha256 === undefined) throw new Error("attach: an attachment without bytes needs its sha256");
    refs.push({
      sha256,
      kind: item.kind,
      mimeType: item.mimeType,
      size,
      fileName: item.fileName ?? null,
      caption: item.caption ?? null,
      ...(item.voice === undefined ? {} : { voice: item.voice }),
    });
  }
  await db.appendMessage(sessionId, {
    role: "user",
    content: [...(text === undefined ? [] : [{ type: "text", text }]), ...refs.map((attachment) => ({ type: "attachment", attachment }))],
  });
  return refs;
}
