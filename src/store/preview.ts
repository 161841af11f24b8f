/**
 * The listing preview of a session: its first visible user message, folded.
 *
 * @module
 */
import type { MessageContent } from "./contract.js";

/** Longest preview, in code points, before `...` is added. */
export const PREVIEW_CODE_POINTS = 60;

/** The text of a message content: a string as is, the text parts of structured content joined with `\n`. */
export function contentText(content: MessageContent | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
}

/** Folds whitespace (CR/LF and runs of spaces to one space), trims, and cuts to 60 code points + `...`. `null` when empty. */
export function makePreview(content: MessageContent | undefined): string | null {
  const folded = contentText(content).replace(/\s+/gu, " ").trim();
  if (folded === "") return null;
  const points = [...folded];
  return points.length > PREVIEW_CODE_POINTS ? `${points.slice(0, PREVIEW_CODE_POINTS).join("")}...` : folded;
}
