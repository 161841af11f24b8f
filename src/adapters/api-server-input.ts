/**
 * What a `POST /v1/chat/completions` request says that is new: the last user message, as
 * text and images. The content is a string, or OpenAI content parts: `text` parts (joined
 * with newlines) and `image_url` parts whose URL is a `data:image/(png|jpeg|gif|webp);base64,…`
 * URL. Such a URL becomes an {@link InboundMedia} of kind `image` carrying the data URL
 * itself: the gateway's media ingest decodes it (under `media.maxBytes`) and checks its bytes;
 * nothing is decoded here beyond checking the form.
 *
 * Threadline never fetches a URL named in a message: an `http(s)` URL (or any URL that is not
 * such a `data:` URL) is refused, and so is a part of another type, each with a sentence that
 * says what is accepted.
 *
 * @module
 */
import type { InboundMedia } from "../gateway/index.js";
import { InvalidInputError } from "../store/index.js";

/** The image types an API client may send (the types vision models take). */
export const API_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

/** The new input of a chat request. */
export interface ChatInput {
  /** The text parts joined with newlines (`""` when there are none). */
  text: string;
  /** One entry per image part, in order. */
  media: InboundMedia[];
}

/** A content part the gateway cannot take; its message is the 400's. */
export class ChatInputError extends InvalidInputError {
  constructor(message: string) {
    super(message, { field: "messages" });
  }
}

/** The refusal of a URL that is not a base64 data URL (never fetched). */
export const IMAGE_URL_REFUSAL = "image_url must be a data: URL (base64); Threadline never fetches URLs named in a message.";

const DATA_URL_HEAD = /^data:(image\/(?:png|jpeg|gif|webp));base64,/iu;
/** Base64 (standard or URL-safe alphabet), whitespace allowed between groups. */
const BASE64 = /^[A-Za-z0-9+/\-_\s]*={0,2}\s*$/u;

/** The image of one `image_url` part (`{ image_url: { url } }`, or the URL as a plain string). */
function imageOf(part: Record<string, unknown>, index: number): InboundMedia {
  const field = part["image_url"];
  const url = typeof field === "string" ? field : field !== null && typeof field === "object" ? (field as { url?: unknown }).url : undefined;
  if (typeof url !== "string" || url === "") {
    throw new ChatInputError(`Content part ${index} (image_url) has no url: send { "type": "image_url", "image_url": { "url": "data:image/png;base64,…" } }.`);
  }
  const head = DATA_URL_HEAD.exec(url);
  if (head === null) {
    if (/^data:/iu.test(url)) {
      throw new ChatInputError(
        `Content part ${index} (image_url) is a data: URL of another type or encoding: send data:<type>;base64,<bytes> with a type among ${API_IMAGE_TYPES.join(", ")}.`,
      );
    }
    throw new ChatInputError(`Content part ${index}: ${IMAGE_URL_REFUSAL}`);
  }
  const data = url.slice(head[0].length);
  if (data.trim() === "" || !BASE64.test(data)) throw new ChatInputError(`Content part ${index} (image_url): the data after "base64," is not base64.`);
  return { kind: "image", url, mimeType: head[1]!.toLowerCase() };
}

/** The text and images of one message's content parts. */
function partsInput(parts: unknown[]): ChatInput {
  const texts: string[] = [];
  const media: InboundMedia[] = [];
  parts.forEach((raw, index) => {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw))
      throw new ChatInputError(`Content part ${index} is not an object: send { "type": "text", "text": "…" }.`);
    const part = raw as Record<string, unknown>;
    if (part["type"] === "text") {
      if (typeof part["text"] !== "string") throw new ChatInputError(`Content part ${index} (text) has no text string.`);
      texts.push(part["text"]);
    } else if (part["type"] === "image_url") {
      media.push(imageOf(part, index));
    } else {
      throw new ChatInputError(
        `Content part ${index} has type ${JSON.stringify(part["type"] ?? null)}: this gateway takes "text" and "image_url" parts (images as data: URLs).`,
      );
    }
  });
  return { text: texts.join("\n"), media };
}

/**
 * The last user message of `messages` as {@link ChatInput}, or `null` when there is no user
 * message with a string or an array content.
 *
 * @throws {ChatInputError} for a part it cannot take (an image URL that is not a data URL, an unknown part type).
 */
export function lastUserInput(messages: unknown): ChatInput | null {
  if (!Array.isArray(messages)) return null;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null;
    if (m === null || typeof m !== "object" || m.role !== "user") continue;
    if (typeof m.content === "string") return { text: m.content, media: [] };
    if (Array.isArray(m.content)) return partsInput(m.content);
    return null;
  }
  return null;
}
