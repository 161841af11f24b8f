/**
 * What the fake OpenAI-compatible provider (test/support/fake-openai-server.ts) received of a
 * media turn, for the media end-to-end tests of the chat platforms: the bytes of every
 * `image_url` data URL in the chat requests ({@link imageBytesSent}), and the text of the last
 * user message of each chat request ({@link lastUserTexts}).
 *
 * @module
 */
import type { FakeOpenAiServer } from "../support/fake-openai-server.js";

/** The decoded bytes (and type) of every `image_url` part with a `data:` URL in the chat requests so far, oldest first. */
export function imageBytesSent(model: FakeOpenAiServer): Array<{ mimeType: string; bytes: Buffer }> {
  const out: Array<{ mimeType: string; bytes: Buffer }> = [];
  for (const request of model.chatRequests()) {
    for (const message of request.body?.messages ?? []) {
      const content = (message as { content?: unknown }).content;
      if (!Array.isArray(content)) continue;
      for (const part of content as Array<{ type?: string; image_url?: { url?: string } }>) {
        const url = part.type === "image_url" ? part.image_url?.url : undefined;
        const match = typeof url === "string" ? /^data:([^;,]+);base64,(.*)$/su.exec(url) : null;
        if (match !== null) out.push({ mimeType: match[1]!, bytes: Buffer.from(match[2]!, "base64") });
      }
    }
  }
  return out;
}

/** The text of the last user message of each chat request so far (text parts joined with newlines). */
export function lastUserTexts(model: FakeOpenAiServer): string[] {
  return model.chatRequests().map((request) => {
    const user = [...(request.body?.messages ?? [])].reverse().find((m) => (m as { role?: string }).role === "user") as { content?: unknown } | undefined;
    const content = user?.content;
    if (typeof content === "string") return content;
    if (!Array.isArray(content)) return "";
    return (content as Array<{ type?: string; text?: string }>)
      .filter((p) => p.type === "text")
      .map((p) => p.text ?? "")
      .join("\n");
  });
}
