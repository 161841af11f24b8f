/**
 * Our tokens in PostgreSQL full-text syntax: a message's `tsvector` literal (built
 * in JavaScript from the shared tokenizer, so both backends index identical tokens)
 * and a sanitised query as a `tsquery` literal. Every lexeme is quoted, so nothing a
 * user typed is ever read as tsquery syntax.
 *
 * @module
 */
import type { MessageContent, ToolCall } from "../contract.js";
import { contentText } from "../preview.js";
import { cutUtf16, DEFAULT_INDEX_MAX_CHARS, foldForMatch, tokenize, type ParsedQuery, type QueryOperand } from "../search/index.js";

/** The highest position a tsvector stores. */
const MAX_POSITION = 16_383;
/** Lexemes longer than this (in UTF-8 bytes) cannot be indexed by PostgreSQL; they are left out. */
const MAX_LEXEME_BYTES = 2_046;

/** A lexeme quoted for a tsvector or tsquery literal. */
function quoteLexeme(token: string): string {
  return `'${token.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

function lexeme(token: string): string | null {
  const folded = foldForMatch(token);
  if (folded === "" || Buffer.byteLength(folded) > MAX_LEXEME_BYTES) return null;
  return folded;
}

/**
 * The tsvector literal of a message: the tokens of its first 16,000 characters of
 * content text, then its tool names, folded, with explicit positions; `null` when
 * there is nothing to index.
 */
export function messageVector(content: MessageContent, toolName: string | null, toolCalls: ToolCall[] | null): string | null {
  const tokens = tokenize(cutUtf16(contentText(content), DEFAULT_INDEX_MAX_CHARS));
  const names: string[] = [];
  if (toolName) names.push(toolName);
  for (const call of toolCalls ?? []) {
    if (typeof call?.function?.name === "string") names.push(call.function.name);
  }
  if (names.length > 0) tokens.push(...tokenize(cutUtf16(names.join(" "), DEFAULT_INDEX_MAX_CHARS)));
  const parts: string[] = [];
  let position = 0;
  for (const token of tokens) {
    position++;
    const lex = lexeme(token);
    if (lex === null) continue;
    parts.push(`${quoteLexeme(lex)}:${Math.min(position, MAX_POSITION)}`);
  }
  return parts.length === 0 ? null : parts.join(" ");
}

/**
 * The tsquery of one operand, or `null` when it can never match (a token too long to be indexed).
 * Several tokens form a phrase (`<->`); `loose` joins them with `&` instead (all the words,
 * anywhere in the message).
 */
function renderOperand(operand: QueryOperand, loose: boolean): string | null {
  const lexemes: string[] = [];
  for (const token of operand.tokens) {
    const folded = foldForMatch(token);
    if (folded === "") continue;
    if (Buffer.byteLength(folded) > MAX_LEXEME_BYTES) return null;
    lexemes.push(folded);
  }
  if (lexemes.length === 0) return null;
  const parts = lexemes.map((t, i) => quoteLexeme(t) + (operand.prefix && i === lexemes.length - 1 ? ":*" : ""));
  return parts.length === 1 ? parts[0]! : `(${parts.join(loose ? " & " : " <-> ")})`;
}

/**
 * The tsquery literal for `q` (as returned by `parseSearchQuery`), with FTS5's
 * precedence made explicit: NOT binds first (`a NOT b` → `a & !b`), then AND, then OR.
 * An operand that can never match removes its AND group (or, after NOT, drops out);
 * `null` when nothing can match.
 */
export function toTsQuery(q: ParsedQuery): string | null {
  return render(q, false);
}

/**
 * A looser tsquery that every match of {@link toTsQuery} also matches, which the GIN index
 * answers without reading a row: each phrase becomes all of its words (`'a' <-> 'b'` →
 * `'a' & 'b'`) and an excluded phrase is left out. `null` when `q` has no phrase (the
 * exact query is then as cheap) or nothing can match.
 */
export function toLooseTsQuery(q: ParsedQuery): string | null {
  const exact = render(q, false);
  const loose = render(q, true);
  return exact === null || loose === exact ? null : loose;
}

function render(q: ParsedQuery, loose: boolean): string | null {
  // OR groups of AND terms; a term is a positive operand and the operands it excludes.
  type Term = { positive: string | null; excluded: string[] };
  const groups: Term[][] = [[]];
  let pending: "AND" | "OR" | "NOT" | null = null;
  for (const item of q.items) {
    if (item.kind === "operator") {
      pending = item.op;
      continue;
    }
    const group = groups[groups.length - 1]!;
    if (pending === "NOT" && group.length > 0) {
      // Leaving out an excluded phrase widens the match; loosening it would narrow it.
      const rendered = loose && item.tokens.length > 1 ? null : renderOperand(item, loose);
      if (rendered !== null) group[group.length - 1]!.excluded.push(rendered);
    } else {
      if (pending === "OR") groups.push([]);
      groups[groups.length - 1]!.push({ positive: renderOperand(item, loose), excluded: [] });
    }
    pending = null;
  }
  const rendered = groups
    .filter((g) => g.length > 0 && g.every((t) => t.positive !== null))
    .map((g) => g.map((t) => `(${[t.positive!, ...t.excluded.map((e) => `!${e}`)].join(" & ")})`).join(" & "));
  return rendered.length === 0 ? null : rendered.map((g) => `(${g})`).join(" | ");
}
