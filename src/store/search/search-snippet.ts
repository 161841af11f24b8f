/**
 * Search-hit excerpts: a window of the message text around the first match, with
 * every match wrapped in `>>>` and `<<<`, and the short context texts shown around a hit.
 *
 * @module
 */

import type { HighlightTerms } from "./search-query.js";
import { DEFAULT_INDEX_MAX_CHARS, type TextSpan, cutUtf16, foldForMatch, wordSpans } from "./search-text.js";

/** How far before the first match a snippet starts, in characters (about). */
const LEAD_CHARS = 40;
const WHITESPACE_RUN = /\s+/g;
const WHITESPACE = /\s/;

/**
 * An excerpt of `text` of about `maxChars` UTF-16 code units (a surrogate pair is never
 * split). Whitespace runs (CR, LF, tabs…) fold to one space. The window starts about 40
 * characters before the first match, snapped to a word boundary when possible, and is
 * prefixed/suffixed with `...` when it cuts the text; every match inside it is wrapped
 * as `>>>match<<<`. A match is a word whose folded form equals one of `terms.words` or
 * starts with one of `terms.prefixes`, or any occurrence of one of `terms.cjk`. Without
 * a match: the first `maxChars` characters (+ `...` when cut). Only the indexed part of
 * the text (see `toIndexText`) is searched for matches.
 */
export function buildSnippet(text: string, terms: HighlightTerms, maxChars: number = 160): string {
  const indexed = cutUtf16(text, DEFAULT_INDEX_MAX_CHARS);
  const s = indexed.replace(WHITESPACE_RUN, " ").trim();
  const tail = indexed.length < text.length;
  const spans = findMatches(s, terms, maxChars);
  const first = spans[0];
  if (first === undefined) {
    const head = cutUtf16(s, maxChars);
    return head.length < s.length || tail ? `${head}...` : head;
  }

  let start = Math.max(0, first.start - LEAD_CHARS);
  if (s.length - start < maxChars) start = Math.max(0, s.length - maxChars);
  if (start > 0 && s.charAt(start - 1) !== " ") {
    const space = s.indexOf(" ", start);
    if (space >= 0 && space < first.start) start = space + 1;
    else if (isLowSurrogate(s.charCodeAt(start))) start--;
  }
  let end = start + maxChars;
  if (end >= s.length) {
    end = s.length;
  } else {
    const space = s.lastIndexOf(" ", end);
    if (space >= Math.max(first.end, start + maxChars / 2)) end = space;
    else if (isLowSurrogate(s.charCodeAt(end))) end--;
  }

  let out = start > 0 ? "..." : "";
  let pos = start;
  for (const span of spans) {
    if (span.start >= end) break;
    const a = Math.max(span.start, start);
    const b = Math.min(span.end, end);
    if (b <= a) continue;
    out += `${s.slice(pos, a)}>>>${s.slice(a, b)}<<<`;
    pos = b;
  }
  out += s.slice(pos, end);
  return end < s.length || tail ? `${out}...` : out;
}

/**
 * `text` with whitespace runs folded to one space, trimmed, and cut to `max` code points
 * (no ellipsis): the content of a message shown as context around a search hit.
 */
export function contextText(text: string, max: number = 200): string {
  let out = "";
  let count = 0;
  let space = false;
  for (const ch of text) {
    if (WHITESPACE.test(ch)) {
      space = count > 0;
      continue;
    }
    if (space && count < max) {
      out += " ";
      count++;
    }
    space = false;
    if (count >= max) break;
    out += ch;
    count++;
  }
  return out.trimEnd();
}

/**
 * The match spans of `s` that can fall in a window of `maxChars` starting at or before
 * the first match, sorted, with overlapping or touching spans merged.
 */
function findMatches(s: string, terms: HighlightTerms, maxChars: number): TextSpan[] {
  const spans: TextSpan[] = [];
  let limit = Infinity;
  for (const run of terms.cjk) {
    if (run === "") continue;
    for (let at = s.indexOf(run); at >= 0; at = s.indexOf(run, at + run.length)) {
      spans.push({ start: at, end: at + run.length });
      limit = Math.min(limit, at + maxChars);
    }
  }
  const words = new Set(terms.words);
  const prefixes = terms.prefixes.filter((p) => p !== "");
  if (words.size > 0 || prefixes.length > 0) {
    for (const span of wordSpans(s)) {
      if (span.start >= limit) break;
      const folded = foldForMatch(s.slice(span.start, span.end));
      if (folded !== "" && (words.has(folded) || prefixes.some((p) => folded.startsWith(p)))) {
        spans.push(span);
        limit = Math.min(limit, span.start + maxChars);
      }
    }
  }
  spans.sort((x, y) => x.start - y.start || y.end - x.end);
  const merged: TextSpan[] = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}

/** Whether a UTF-16 code unit is the second half of a surrogate pair. */
function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
