/**
 * Splitting a long reply into chunks a chat platform accepts: at paragraph boundaries
 * first, then line boundaries, then spaces, and only as a last resort inside a word.
 * A fenced code block cut in two is closed at the end of one chunk and reopened (with
 * its language) at the start of the next, so every chunk renders on its own.
 *
 * @module
 */
import { InvalidInputError } from "../../store/index.js";

/** Options of {@link splitMessage}. */
export interface SplitOptions {
  /**
   * How a chunk is measured against the limit (default: UTF-16 code units, as Telegram,
   * Discord and Slack count).
   */
  measure?: (text: string) => number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/u;

/** The fence state after `text`, starting from `open` (the opener line of an open fence, or null). */
function fenceAfter(text: string, open: string | null): string | null {
  let current = open;
  for (const line of text.split("\n")) {
    const match = FENCE.exec(line);
    if (match === null) continue;
    if (current === null) {
      // An opener: backtick fences may not have backticks in their info string.
      if (match[1]!.startsWith("`") && match[2]!.includes("`")) continue;
      current = line.trim();
    } else {
      const opener = /^(`{3,}|~{3,})/u.exec(current)![1]!;
      if (match[1]![0] === opener[0] && match[1]!.length >= opener.length && match[2]!.trim() === "") current = null;
    }
  }
  return current;
}

/** The closing fence line of an opener line (```` ```ts ```` → ```` ``` ````). */
function closerOf(opener: string): string {
  return /^(`{3,}|~{3,})/u.exec(opener)![1]!;
}

/** The best cut position in `text` at or before `max` (> 0): paragraph, line, space, anywhere. */
function cutPoint(text: string, max: number): number {
  const window = text.slice(0, max + 1);
  const minUseful = Math.floor(max / 3);
  const paragraph = window.lastIndexOf("\n\n");
  if (paragraph >= minUseful) return paragraph;
  const line = window.lastIndexOf("\n");
  if (line >= minUseful) return line;
  const space = window.lastIndexOf(" ");
  if (space >= minUseful) return space;
  let cut = max;
  // Never split a surrogate pair.
  const code = text.charCodeAt(cut - 1);
  if (cut > 1 && code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return cut;
}

/**
 * Splits `text` into chunks of at most `limit` (measured by `options.measure`), in order.
 * Text within the limit comes back as one chunk; empty text as `[""]`. Whitespace at a cut
 * (the blank line or newline or space cut at) is dropped; everything else is kept, and
 * joining the chunks gives back the text apart from those cuts and the fence lines added
 * to close and reopen a code block split across chunks.
 *
 * @throws {InvalidInputError} (`TL_ERR_INVALID_INPUT`, field `limit`) when `limit` is below 16 (no room for a fence and content).
 * @example
 * ```ts
 * splitMessage("a".repeat(3000) + "\n\n" + "b".repeat(3000), 4096); // ["aaa…", "bbb…"]
 * ```
 */
export function splitMessage(text: string, limit: number, options: SplitOptions = {}): string[] {
  if (!Number.isFinite(limit) || limit < 16) {
    throw new InvalidInputError(`splitMessage: limit must be at least 16 (got ${limit}); pass the platform's message limit.`, { field: "limit" });
  }
  const measure = options.measure ?? ((t: string) => t.length);
  if (measure(text) <= limit) return [text];
  const chunks: string[] = [];
  let rest = text;
  let open: string | null = null;
  while (rest.length > 0) {
    const prefix = open === null ? "" : `${open}\n`;
    if (measure(prefix + rest) <= limit) {
      chunks.push(prefix + rest);
      break;
    }
    // Room for the prefix and a closing fence (the longest one we could need).
    let budget = limit - measure(prefix) - 12;
    let chunk = "";
    let cut = 0;
    let after: string | null = null;
    for (;;) {
      cut = Math.max(1, cutPoint(rest, Math.min(budget, rest.length)));
      const body = rest.slice(0, cut);
      after = fenceAfter(body, open);
      chunk = after === null ? prefix + body : `${prefix}${body.replace(/\n$/u, "")}\n${closerOf(after)}`;
      if (measure(chunk) <= limit || budget <= 1) break;
      budget = Math.max(1, budget - Math.max(1, measure(chunk) - limit));
    }
    chunks.push(chunk);
    rest = rest.slice(cut);
    // Drop the separator cut at (a blank line, a newline or a space), not the content after it.
    rest = rest.replace(/^(\n\n|\n| )/u, "");
    open = after;
  }
  return chunks.filter((c, i) => c.trim() !== "" || i === 0);
}
