/**
 * The one Markdown → platform-text renderer of the chat platforms whose formatting is a few
 * markers on plain text (Telegram HTML, Slack mrkdwn, WhatsApp): {@link createTextRenderer}
 * takes what a platform writes differently ({@link TextStyle}: the escaping, the bold/italic/
 * strike/code markers, quotes, links, images, the list bullet) and returns its
 * `markdownTo…` function. The rest is the same everywhere: headings become bold lines, rules
 * `——————`, lists numbered or bulleted lines with ☐/☑ for tasks ({@link listLines}), tables
 * `a | b` lines ({@link tableLines}), paragraphs separated by one blank line. Parsed with
 * `marked`.
 *
 * @module
 */
import { Marked, type RendererObject, type Token, type Tokens } from "marked";

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

/** `> ` before every line of `inner` (a quote in Slack and WhatsApp). */
export function quoteLines(inner: string): string {
  return inner
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
}

/** How one platform writes formatted text (see {@link createTextRenderer}). */
export interface TextStyle {
  /** Escapes plain text (and raw HTML, which is shown as text). */
  escape(text: string): string;
  /** Bold (also headings). */
  bold(inner: string): string;
  italic(inner: string): string;
  strike(inner: string): string;
  /** Inline code; `text` is not escaped yet. */
  code(text: string): string;
  /** A fenced block; `text` is not escaped yet; `lang` is the fence's info string ("" when none). No trailing newline. */
  codeBlock(text: string, lang: string): string;
  /** A block quote of rendered `inner` (trimmed). No trailing newline. */
  quote(inner: string): string;
  /** A link: `label` is rendered, `bare` when the Markdown was the URL alone (an autolink). */
  link(href: string, label: string, bare: boolean): string;
  /** An image (platforms here show none): its alt text and URL as text. */
  image(href: string, alt: string): string;
  /** The bullet of unordered list items, e.g. `•`. */
  bullet: string;
  /** The indent of an item's further lines. */
  indent: string;
  /** Bold the header line of a table (default false). */
  boldTableHeader?: boolean;
  /** Applied to the whole output before blank lines are squeezed (e.g. undoing marked's HTML entities). */
  finish?(text: string): string;
}

/**
 * Makes a `markdownTo…` function for a platform: Markdown in, the platform's text out
 * (trimmed, never more than one blank line in a row).
 *
 * @example
 * ```ts
 * const markdownToPlain = createTextRenderer({
 *   escape: (t) => t, bold: (t) => wrapMarkers("*", t), italic: (t) => wrapMarkers("_", t),
 *   strike: (t) => wrapMarkers("~", t), code: (t) => `\`${t}\``, codeBlock: (t) => `\`\`\`${t}\`\`\``,
 *   quote: quoteLines, link: (href, label, bare) => (bare ? href : `${label} (${href})`),
 *   image: (href, alt) => alt || href, bullet: "-", indent: "   ",
 * });
 * markdownToPlain("**hi**"); // "*hi*"
 * ```
 */
export function createTextRenderer(style: TextStyle): (markdown: string) => string {
  const renderer: RendererObject = {
    space: () => "",
    code: ({ text, lang }: Tokens.Code) => `${style.codeBlock(text, lang ?? "")}\n\n`,
    blockquote({ tokens }: Tokens.Blockquote) {
      return `${style.quote(this.parser.parse(tokens).trim())}\n\n`;
    },
    html: ({ text }: Tokens.HTML | Tokens.Tag) => style.escape(text),
    heading({ tokens }: Tokens.Heading) {
      return `${style.bold(this.parser.parseInline(tokens))}\n\n`;
    },
    hr: () => "——————\n\n",
    list(token: Tokens.List) {
      return listLines(this.parser, token, { bullet: style.bullet, indent: style.indent });
    },
    checkbox: () => "",
    paragraph({ tokens }: Tokens.Paragraph) {
      return `${this.parser.parseInline(tokens)}\n\n`;
    },
    table(token: Tokens.Table) {
      return tableLines(this.parser, token, style.boldTableHeader === true ? style.bold : undefined);
    },
    strong({ tokens }: Tokens.Strong) {
      return style.bold(this.parser.parseInline(tokens));
    },
    em({ tokens }: Tokens.Em) {
      return style.italic(this.parser.parseInline(tokens));
    },
    codespan: ({ text }: Tokens.Codespan) => style.code(text),
    br: () => "\n",
    del({ tokens }: Tokens.Del) {
      return style.strike(this.parser.parseInline(tokens));
    },
    link({ href, tokens }: Tokens.Link) {
      const bare = tokens.length === 0 || (tokens.length === 1 && tokens[0]!.type === "text" && tokens[0]!.raw === href);
      return style.link(href, this.parser.parseInline(tokens), bare);
    },
    image: ({ href, text }: Tokens.Image) => style.image(href, text),
    text(token: Tokens.Text | Tokens.Escape) {
      if ("tokens" in token && token.tokens !== undefined) return this.parser.parseInline(token.tokens);
      return style.escape(token.text);
    },
  };
  const markdown = new Marked({ gfm: true, breaks: false, renderer });
  const finish = style.finish ?? ((text: string) => text);
  return (text) =>
    finish(markdown.parse(text, { async: false }))
      .replace(/\n{3,}/gu, "\n\n")
      .trim();
}
