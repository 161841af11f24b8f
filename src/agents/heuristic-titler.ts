/**
 * A {@link Titler} that needs no model: it derives a title from the first user message.
 *
 * @module
 */
import type { Titler } from "./agent.js";

const MAX_WORDS = 7;
const MIN_WORDS = 3;
const MAX_CHARS = 60;

// Leading fillers dropped from the start of the message, repeatedly ("Hi there, can you please …").
const LEADING_FILLER = new RegExp(
  "^(?:" +
    [
      "(?:hi|hello|hey|hiya|howdy|yo|greetings|good\\s+(?:morning|afternoon|evening|day))(?:\\s+(?:there|all|everyone|team|folks))?",
      "please|pls|plz|kindly",
      "(?:can|could|would|will)\\s+(?:you|u)",
      "i\\s+(?:need|want|would\\s+like)\\s+you\\s+to|i'd\\s+like\\s+you\\s+to",
      "ok|okay|so|um|well",
    ].join("|") +
    ")(?![\\p{L}\\p{N}'])[\\s,.!:;-]*",
  "iu",
);

const EDGE_PUNCTUATION_START = /^[\p{P}\p{S}]+/u;
const EDGE_PUNCTUATION_END = /[.,;:!?)"'”’\]}>…*_~\-/\\]+$/u;

/**
 * Proposes a title from the first user message without calling a model: code blocks,
 * URLs, markdown and HTML are stripped, leading greetings and politeness ("hi", "hello",
 * "hey", "please", "can you"…) dropped, whitespace collapsed; the first 7 words are kept
 * (at least 3 when the message has 3, putting dropped greetings back if needed), the first
 * letter is upper-cased and the result is capped at 60 characters on a word boundary.
 * Returns `null` for a message with no letters or digits. The reply text is ignored.
 *
 * @example
 * await new HeuristicTitler().proposeTitle({
 *   userText: "Hi! Can you explain how **Postgres** advisory locks work? https://example.com",
 *   replyText: "…",
 * });
 * // "Explain how Postgres advisory locks work"
 */
export class HeuristicTitler implements Titler {
  /** The title for `userText`, or `null`. Never throws. */
  async proposeTitle(input: { userText: string; replyText: string; signal?: AbortSignal }): Promise<string | null> {
    return titleFromText(input.userText);
  }
}

/**
 * The synchronous core of {@link HeuristicTitler}.
 *
 * @example
 * titleFromText("hello, please fix the flaky login test in CI") // "Fix the flaky login test in CI"
 */
export function titleFromText(text: string): string | null {
  if (typeof text !== "string") return null;
  const cleaned = stripMarkup(text);
  const allWords = words(cleaned);
  if (allWords.length === 0) return null;
  let chosen = words(stripLeadingFillers(cleaned));
  if (chosen.length < MIN_WORDS && allWords.length > chosen.length) chosen = allWords;
  chosen = chosen.slice(0, MAX_WORDS);
  while (chosen.length > 1 && chosen.join(" ").length > MAX_CHARS) chosen = chosen.slice(0, -1);
  let title = chosen.join(" ");
  if ([...title].length > MAX_CHARS) title = [...title].slice(0, MAX_CHARS).join("");
  const [first = "", ...rest] = [...title];
  return first.toUpperCase() + rest.join("");
}

function stripMarkup(text: string): string {
  return text
    .replace(/```[\s\S]*?(?:```|$)/gu, " ")
    .replace(/~~~[\s\S]*?(?:~~~|$)/gu, " ")
    .replace(/`([^`\n]*)`/gu, "$1")
    .replace(/!\[([^\]]*)\]\([^)]*\)/gu, "$1")
    .replace(/\[([^\]]*)\]\([^)]*\)/gu, "$1")
    .replace(/\b(?:https?|ftp|file):\/\/\S+/giu, " ")
    .replace(/\bwww\.\S+/giu, " ")
    .replace(/<\/?[a-z][^>]*>/giu, " ")
    .replace(/^[ \t]{0,3}#{1,6}[ \t]+/gmu, "")
    .replace(/^[ \t]*>+[ \t]?/gmu, "")
    .replace(/^[ \t]*(?:[-*+]|\d+[.)])[ \t]+/gmu, "")
    .replace(/[*~]+/gu, "")
    .replace(/\s+/gu, " ")
    .trim();
}

function stripLeadingFillers(text: string): string {
  let current = text.replace(EDGE_PUNCTUATION_START, "").trimStart();
  for (;;) {
    const next = current.replace(LEADING_FILLER, "").replace(EDGE_PUNCTUATION_START, "").trimStart();
    if (next === current) return current;
    current = next;
  }
}

function words(text: string): string[] {
  return text
    .split(" ")
    .map((token) => token.replace(EDGE_PUNCTUATION_START, "").replace(EDGE_PUNCTUATION_END, ""))
    .filter((token) => /[\p{L}\p{N}]/u.test(token));
}
