/**
 * Sessions with attachments, stored the way the gateway stores them: the bytes with
 * `putMedia`, then a user message whose content parts refer to them.
 *
 * @module
 */
import { createHash, randomBytes } from "node:crypto";
import type { SessionDB } from "../../../src/index.js";
import type { AttachmentRef } from "../../../src/store/index.js";

/** The PNG signature, so the bytes look like an image to anything that sniffs them. */
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `size` bytes starting with a PNG signature, the rest random. */
export function pngBytes(size: number): Buffer {
  return Buffer.concat([PNG_SIGNATURE, randomBytes(size - PNG_SIGNATURE.length)]);
}

/** Lower-case hex SHA-256. */
export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** One attachment to store: its bytes and what the message says of it. */
export interface SeedAttachment {
  bytes: Buffer;
  kind: AttachmentRef["kind"];
  mimeType: string;
  fileName?: string | null;
  caption?: string | null;
  voice?: boolean;
}

/**
 * A session with one user message per entry of `messages` (text, then its attachments), each
 * attachment stored first; returns the session id.
 */
export async function addMediaSession(
  db: SessionDB,
  { id, source = "telegram", messages }: { id?: string; source?: string; messages: Array<{ text?: string; attachments: SeedAttachment[] }> },
): Promise<string> {
  const session = await db.createSession({ source, ...(id === undefined ? {} : { id }) });
  for (const message of messages) {
    const parts: Array<Record<string, unknown> & { type: string }> = [];
    if (message.text !== undefined) parts.push({ type: "text", text: message.text });
    for (const a of message.attachments) {
      const stored = await db.putMedia({ bytes: a.bytes }, { mimeType: a.mimeType });
      parts.push({
        type: "attachment",
        attachment: {
          sha256: stored.sha256,
          kind: a.kind,
          mimeType: a.mimeType,
          size: a.bytes.length,
          fileName: a.fileName ?? null,
          caption: a.caption ?? null,
          ...(a.voice === undefined ? {} : { voice: a.voice }),
        },
      });
    }
    await db.appendMessage(session.id, { role: "user", content: parts });
    await db.appendMessage(session.id, { role: "assistant", content: "Got it." });
  }
  return session.id;
}
