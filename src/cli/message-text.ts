/**
 * The readable text of a message's content, whatever its shape.
 *
 * @module
 */
import type { AttachmentRef, MessageContent } from "../store/index.js";
import { attachmentLabel } from "./attachment-label.js";

/** Options of {@link messageText}. */
export interface MessageTextOptions {
  /** Blobs that are not stored (their attachments are labelled `; bytes not stored`). */
  missingMedia?: ReadonlySet<string>;
}

/**
 * Plain text as is; text parts joined with newlines, attachment parts named
 * (`[image: photo.jpg, image/jpeg, 195.3 KiB]`, see {@link attachmentLabel}) and other parts
 * as `[image_url]`, `[input_audio]`…; `null` as the empty string.
 *
 * @example
 * messageText([{ type: "text", text: "look" }, { type: "image_url" }]); // "look\n[image_url]"
 */
export function messageText(content: MessageContent, { missingMedia }: MessageTextOptions = {}): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .map((part) => {
      if (part.type === "text" && typeof part.text === "string") return part.text;
      if (part.type === "attachment" && typeof part["attachment"] === "object" && part["attachment"] !== null) {
        const ref = part["attachment"] as Partial<AttachmentRef>;
        return attachmentLabel(ref, { stored: !(typeof ref.sha256 === "string" && missingMedia?.has(ref.sha256) === true) });
      }
      return `[${part.type}]`;
    })
    .join("\n");
}
