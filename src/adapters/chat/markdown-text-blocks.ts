/**
 * Markdown blocks as text lines, for the `marked` renderers of platforms whose formatting
 * has no lists or tables (Telegram HTML, Slack mrkdwn, WhatsApp): lists as numbered or
 * bulleted lines with ☐/☑ for tasks ({@link listLines}), tables as `a | b` lines
 * ({@link tableLines}), and inline markers such as `*bold*` put only around text that has
 * something in it ({@link wrapMarkers}). The platform picks the bullet, the indent and the
 * header's style; the rest of its renderer stays its own.
 *
 * @module
 */
import type { Token, Tokens } from "marked";

/** What the helpers use of marked's parser (`this.parser` inside a renderer method). */
export interface MarkdownParser {
  parse(tokens: Token[]): string;
  parseInline(tokens: Token[]): string;
}

/**
 * Wraps `marker` around the text of `inner`, leaving its leading and trailing white space
 * outside (`* x*` is not bold in Slack or WhatsApp); white space alone is returned as is.
 *
 * @example
 * ```ts
 * wrapMarkers("*", " bold "); // " *bold* "
 * ```
 */
export function wrapMarkers(marker: string, inner: string): string {
  const trimmed = inner.trim();
  if (trimmed === "") return inner;
  const lead = inner.slice(0, inner.length - inner.trimStart().length);
  const tail = inner.slice(inner.trimEnd().length);
  return `${lead}${marker}${trimmed}${marker}${tail}`;
}

/**
 * A list as lines: `bullet ` (unordered) or `n. ` (ordered, from the list's start) before each
 * item, `☐ `/`☑ ` for a task, an item's further lines indented by `indent`; a blank line after.
 */
export function listLines(parser: MarkdownParser, token: Tokens.List, options: { bullet: string; indent: string }): string {
  const start = typeof token.start === "number" ? token.start : 1;
  const lines = token.items.map((item, i) => {
    const marker = token.ordered ? `${start + i}.` : options.bullet;
    const check = item.task ? (item.checked ? "☑ " : "☐ ") : "";
    const body = parser.parse(item.tokens.filter((t) => t.type !== "checkbox")).trim();
    return `${marker} ${check}${body.replace(/\n/gu, `\n${options.indent}`)}`;
  });
  return `${lines.join("\n")}\n\n`;
}

/** A table as `a | b` lines, the header line passed through `header` (e.g. made bold); a blank line after. */
export function tableLines(parser: MarkdownParser, token: Tokens.Table, header: (line: string) => string = (line) => line): string {
  const row = (cells: Tokens.TableCell[]): string => cells.map((c) => parser.parseInline(c.tokens)).join(" | ");
  return `${[header(row(token.header)), ...token.rows.map(row)].join("\n")}\n\n`;
}
