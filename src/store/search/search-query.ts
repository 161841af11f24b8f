/**
 * The user-query sanitiser: any string a user can type becomes a well-formed
 * {@link ParsedQuery}, or `null` when nothing is left to search (the caller then
 * returns no hits, and no error). It never throws and never leaks backend syntax.
 *
 * Syntax (after NFKC normalisation):
 * - bare words, ANDed implicitly; a word that tokenises to several tokens
 *   (`chat-send`, `user@example.com`, `it's`) is a phrase;
 * - `"quoted phrases"`; an unbalanced quote takes the rest of the input as the phrase;
 * - `AND`, `OR`, `NOT` in upper case (lower case they are plain words); a dangling
 *   operator is dropped, and of several operators in a row the last one wins
 *   (`a OR OR b` → `a OR b`, `a AND NOT b` → `a NOT b`);
 * - outside quotes, `|`, `~`, `=`, `;`, `<`, `>` and `\` (no operators here, though
 *   other query languages use them) separate words as a space does: `love|templates`
 *   means `love templates`, not the phrase `"love templates"`;
 * - a `*` after the last token of a term or phrase makes it a prefix (`deploy*`,
 *   `"npm run*"`, `"npm run"*`); any other `*`, and every other punctuation
 *   character, symbol or emoji, only separates tokens (inside one word, which
 *   stays a phrase: `chat-send`, `user@example.com`);
 * - a term ending in a lone CJK character is a prefix (`部` finds the bigram `部署`);
 * - at most {@link MAX_QUERY_OPERANDS} operands; the rest are dropped.
 *
 * @module
 */

import { analyzeText, cjkCharCount, foldForMatch } from "./search-text.js";

/** The most operands a query keeps; later ones are dropped. */
export const MAX_QUERY_OPERANDS = 32;

/** A term or phrase of a query. */
export interface QueryOperand {
  kind: "operand";
  /** Its index tokens (see `tokenize`); several tokens form a phrase. Never empty. */
  tokens: string[];
  /** Whether the last token matches as a prefix. */
  prefix: boolean;
  /** The CJK runs it contains, as written (NFKC), for highlighting. */
  cjk: string[];
}

/** A boolean operator between two operands. */
export interface QueryOperator {
  kind: "operator";
  op: "AND" | "OR" | "NOT";
}

/**
 * A sanitised query: `operand (operator operand)*`, never empty, with every implicit
 * AND made explicit. Operators are binary; precedence is the backend's (FTS5: NOT,
 * then AND, then OR).
 */
export interface ParsedQuery {
  items: Array<QueryOperand | QueryOperator>;
}

/** What a snippet should highlight for a query (see {@link highlightTerms}). */
export interface HighlightTerms {
  /** Folded words that match whole. */
  words: string[];
  /** Folded words that match as a prefix of a word. */
  prefixes: string[];
  /** CJK substrings that match anywhere. */
  cjk: string[];
}

const WORD_CHAR = /[\p{L}\p{N}\p{Co}\p{M}]/u;
/** What ends a bare term: white space and the characters that are no operators in our syntax. */
const SEPARATOR = /[\s|~=;<>\\]/u;
const OPERATORS: ReadonlySet<string> = new Set(["AND", "OR", "NOT"]);

/**
 * Parses what a user typed into a well-formed query, or `null` when nothing searchable
 * is left (empty input, only punctuation, emoji or operators). Never throws.
 */
export function parseSearchQuery(input: string): ParsedQuery | null {
  const items: ParsedQuery["items"] = [];
  let pending: QueryOperator["op"] | null = null;
  let operands = 0;
  for (const item of lex(String(input ?? "").normalize("NFKC"))) {
    if (item.kind === "operator") {
      pending = item.op;
      continue;
    }
    if (operands === MAX_QUERY_OPERANDS) break;
    // An operator before the first operand is dangling: dropped.
    if (operands > 0) items.push({ kind: "operator", op: pending ?? "AND" });
    items.push(item);
    operands++;
    pending = null;
  }
  return operands === 0 ? null : { items };
}

/**
 * The terms a snippet should highlight: the folded word tokens of every operand that is
 * not the right-hand side of a NOT (`prefixes`: the last token of a prefix operand), and
 * the CJK runs of those operands.
 */
export function highlightTerms(q: ParsedQuery): HighlightTerms {
  const words = new Set<string>();
  const prefixes = new Set<string>();
  const cjk = new Set<string>();
  let negated = false;
  for (const item of q.items) {
    if (item.kind === "operator") {
      negated = item.op === "NOT";
      continue;
    }
    if (negated) continue;
    item.tokens.forEach((token, i) => {
      if (cjkCharCount(token) > 0) return;
      const folded = foldForMatch(token);
      if (folded === "") return;
      if (item.prefix && i === item.tokens.length - 1) prefixes.add(folded);
      else words.add(folded);
    });
    for (const run of item.cjk) cjk.add(run);
  }
  return { words: [...words], prefixes: [...prefixes], cjk: [...cjk] };
}

/** Splits normalised input into operators and operands (empty terms are skipped). */
function* lex(s: string): Generator<QueryOperand | QueryOperator> {
  let i = 0;
  while (i < s.length) {
    const ch = s.charAt(i);
    if (SEPARATOR.test(ch)) {
      i++;
    } else if (ch === '"') {
      const close = s.indexOf('"', i + 1);
      const body = close < 0 ? s.slice(i + 1) : s.slice(i + 1, close);
      i = close < 0 ? s.length : close + 1;
      let starAfter = false;
      while (s.charAt(i) === "*") {
        starAfter = true;
        i++;
      }
      const operand = toOperand(body, starAfter);
      if (operand) yield operand;
    } else {
      let j = i;
      while (j < s.length && s.charAt(j) !== '"' && !SEPARATOR.test(s.charAt(j))) j++;
      const term = s.slice(i, j);
      i = j;
      // `(NOT` and `OR)` are operators too: parentheses are only separators.
      const bare = stripParentheses(term);
      if (OPERATORS.has(bare)) {
        yield { kind: "operator", op: bare as QueryOperator["op"] };
      } else {
        const operand = toOperand(term, false);
        if (operand) yield operand;
      }
    }
  }
}

/** The operand for a term or phrase body, or `null` when it has no tokens. */
function toOperand(body: string, starAfter: boolean): QueryOperand | null {
  const { tokens, cjk } = analyzeText(body);
  const last = tokens[tokens.length - 1];
  if (last === undefined) return null;
  const prefix = starAfter || starAfterLastWord(body) || cjkCharCount(last) === 1;
  return { kind: "operand", tokens, prefix, cjk };
}

/** `term` without its leading `(` and trailing `)` (a loop: a regex would be quadratic). */
function stripParentheses(term: string): string {
  let start = 0;
  let end = term.length;
  while (start < end && term.charAt(start) === "(") start++;
  while (end > start && term.charAt(end - 1) === ")") end--;
  return term.slice(start, end);
}

/** Whether a `*` comes after the last word character of `s` (`deploy*`, `(deploy*)`). */
function starAfterLastWord(s: string): boolean {
  let star = false;
  for (const ch of s) {
    if (ch === "*") star = true;
    else if (WORD_CHAR.test(ch)) star = false;
  }
  return star;
}
