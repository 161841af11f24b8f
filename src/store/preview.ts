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
  const text = contentText(content);
  // Fold only as much as the preview needs: stop one code point past the limit.
  let out = "";
  let points = 0;
  let pendingSpace = false;
  for (const ch of text) {
    if (/\s/u.test(ch)) {
      pendingSpace = points > 0;
      continue;
    }
    if (pendingSpace) {
      if (points === PREVIEW_CODE_POINTS) return `${out}...`;
      out += " ";
      points += 1;
      pendingSpace = false;
    }
    if (points === PREVIEW_CODE_POINTS) return `${out}...`;
    out += ch;
    points += 1;
  }
  return out === "" ? null : out;
}
