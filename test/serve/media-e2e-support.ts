/**
 * What the chat platforms' media end-to-end tests (test/serve/media-<platform>-e2e.test.ts)
 * share: reading the image parts and the user text of a request the fake provider received, and
 * the attachments a home's session stored, with their bytes.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { AttachmentRef } from "../../src/store/index.js";
import type { FakeOpenAiRequest } from "../support/fake-openai-server.js";
import { withDatabase } from "./gateway-process.js";

/** The bytes of every `image_url` data URL in a chat request, in order (a part that is not a base64 data URL throws). */
export function imageBytesOf(request: FakeOpenAiRequest): Buffer[] {
  const out: Buffer[] = [];
  for (const message of request.body?.messages ?? []) {
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const part of content as Array<{ type?: string; image_url?: { url?: string } }>) {
      if (part.type !== "image_url") continue;
      const match = /^data:([\w.+-]+\/[\w.+-]+);base64,(.*)$/su.exec(part.image_url?.url ?? "");
      if (match === null) throw new Error(`an image part that is not a base64 data URL: ${String(part.image_url?.url).slice(0, 60)}`);
      out.push(Buffer.from(match[2]!, "base64"));
    }
  }
  return out;
}

/** Every text a request's user messages carry (string contents and text parts), in order. */
export function userTextsOf(request: FakeOpenAiRequest): string[] {
  const out: string[] = [];
  for (const message of request.body?.messages ?? []) {
    const { role, content } = message as { role?: string; content?: unknown };
    if (role !== "user") continue;
    if (typeof content === "string") out.push(content);
    else if (Array.isArray(content)) for (const part of content as Array<{ type?: string; text?: string }>) if (part.type === "text") out.push(part.text ?? "");
  }
  return out;
}

/** The SHA-256 (lower-case hex) of `bytes`. */
export function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** One attachment a stored user message refers to, with the text parts of that message and the stored bytes. */
export interface StoredAttachment {
  ref: AttachmentRef;
  /** The text parts of the message it came with (a transcript among them). */
  texts: string[];
  /** The bytes the store holds for it (`null`: not stored). */
  bytes: Buffer | null;
}

/** The attachments of the user messages of the session a route key points at (after the gateway stopped). */
export async function storedAttachments(home: string, routeKey: string): Promise<StoredAttachment[]> {
  return withDatabase(home, async (db) => {
    const route = await db.getRoute(routeKey);
    if (route === null) throw new Error(`no session for ${routeKey}`);
    const out: StoredAttachment[] = [];
    for (const message of await db.getMessages(route.sessionId)) {
      if (message.role !== "user" || typeof message.content === "string") continue;
      const parts = message.content as Array<{ type: string; text?: string; attachment?: AttachmentRef }>;
      const texts = parts.filter((p) => p.type === "text").map((p) => p.text ?? "");
      for (const part of parts) {
        if (part.type !== "attachment" || part.attachment === undefined) continue;
        const bytes = await db.readMedia(part.attachment.sha256);
        out.push({ ref: part.attachment, texts, bytes: bytes === null ? null : Buffer.from(bytes) });
      }
    }
    return out;
  });
}
