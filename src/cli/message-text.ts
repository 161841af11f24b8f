/**
 * The readable text of a message's content, whatever its shape.
 *
 * @module
 */
import type { MessageContent } from "../store/index.js";

/**
 * Plain text as is; text parts joined with newlines and other parts as `[image_url]`,
 * `[input_audio]`…; `null` as the empty string.
 *
 * @example
 * messageText([{ type: "text", text: "look" }, { type: "image_url" }]); // "look\n[image_url]"
 */
export function messageText(content: MessageContent): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : `[${part.type}]`)).join("\n");
}
