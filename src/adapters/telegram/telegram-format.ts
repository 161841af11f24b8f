/**
 * Outbound formatting for Telegram: the model's Markdown → Telegram's HTML subset
 * (`b`, `i`, `s`, `code`, `pre`, `a`, `blockquote`), with `&`, `<` and `>` escaped
 * everywhere else. Parsed with `marked`; anything Telegram has no tag for (headings,
 * lists, tables, images, raw HTML) becomes plain text.
 *
 * @module
 */
import { Marked, type RendererObject, type Tokens } from "marked";
import { listLines, tableLines } from "../chat/index.js";

/** Telegram's limit on the text of one message: characters after entity parsing, counted in UTF-16 code units. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** Escapes text for Telegram HTML (`&`, `<`, `>`; `"` too, for attribute values). */
export function escapeTelegramHtml(text: string): string {
  return text.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;").replace(/"/gu, "&quot;");
}

const renderer: RendererObject = {
  space(): string {
    return "";
  },
  code({ text, lang }: Tokens.Code): string {
    const language = (lang ?? "").trim().split(/\s+/u)[0] ?? "";
    const cls = /^[\w#+.-]+$/u.test(language) ? ` class="language-${escapeTelegramHtml(language)}"` : "";
    return `<pre><code${cls}>${escapeTelegramHtml(text)}</code></pre>\n\n`;
  },
  blockquote({ tokens }: Tokens.Blockquote): string {
    return `<blockquote>${this.parser.parse(tokens).trim()}</blockquote>\n\n`;
  },
  html({ text }: Tokens.HTML | Tokens.Tag): string {
    return escapeTelegramHtml(text);
  },
  heading({ tokens }: Tokens.Heading): string {
    return `<b>${this.parser.parseInline(tokens)}</b>\n\n`;
  },
  hr(): string {
    return "——————\n\n";
  },
  list(token: Tokens.List): string {
    return listLines(this.parser, token, { bullet: "•", indent: "  " });
  },
  checkbox(): string {
    return "";
  },
  paragraph({ tokens }: Tokens.Paragraph): string {
    return `${this.parser.parseInline(tokens)}\n\n`;
  },
  table(token: Tokens.Table): string {
    return tableLines(this.parser, token);
  },
  strong({ tokens }: Tokens.Strong): string {
    return `<b>${this.parser.parseInline(tokens)}</b>`;
  },
  em({ tokens }: Tokens.Em): string {
    return `<i>${this.parser.parseInline(tokens)}</i>`;
  },
  codespan({ text }: Tokens.Codespan): string {
    return `<code>${escapeTelegramHtml(text)}</code>`;
  },
  br(): string {
    return "\n";
  },
  del({ tokens }: Tokens.Del): string {
    return `<s>${this.parser.parseInline(tokens)}</s>`;
  },
  link({ href, tokens }: Tokens.Link): string {
    const label = this.parser.parseInline(tokens);
    if (!/^(https?|tg|mailto):/iu.test(href)) return label;
    return `<a href="${escapeTelegramHtml(href)}">${label}</a>`;
  },
  image({ href, text }: Tokens.Image): string {
    return escapeTelegramHtml(text ? `${text} (${href})` : href);
  },
  text(token: Tokens.Text | Tokens.Escape): string {
    if ("tokens" in token && token.tokens !== undefined) return this.parser.parseInline(token.tokens);
    return escapeTelegramHtml(token.text);
  },
};

const markdown = new Marked({ gfm: true, breaks: false, renderer });

/**
 * Converts Markdown to Telegram HTML (`parse_mode: "HTML"`).
 *
 * @example
 * ```ts
 * markdownToTelegramHtml("**bold** & `a<b`"); // "<b>bold</b> &amp; <code>a&lt;b</code>"
 * ```
 */
export function markdownToTelegramHtml(text: string): string {
  const html = markdown.parse(text, { async: false });
  return html.replace(/\n{3,}/gu, "\n\n").trim();
}

/**
 * The text Telegram sees in HTML this module made, after entity parsing: tags removed,
 * `&lt;`, `&gt;`, `&quot;` and `&amp;` decoded. (Only for {@link markdownToTelegramHtml}'s
 * output, where every `<` in the text is escaped.)
 */
export function telegramHtmlText(html: string): string {
  return html
    .replace(/<[^>]*>/gu, "")
    .replace(/&lt;/gu, "<")
    .replace(/&gt;/gu, ">")
    .replace(/&quot;/gu, '"')
    .replace(/&amp;/gu, "&");
}

/**
 * How long Markdown is once sent as Telegram HTML, as Telegram counts it against
 * {@link TELEGRAM_MESSAGE_LIMIT}: the parsed text's length in UTF-16 code units. Splitting a
 * reply by this measure (not by the Markdown's length) keeps every chunk within the limit,
 * also when rendering makes the text longer (rules, lists, tables, images).
 *
 * @example
 * ```ts
 * telegramRenderedLength("**bold** & ---"); // 10 ("bold & ---")
 * ```
 */
export function telegramRenderedLength(markdown: string): number {
  return telegramHtmlText(markdownToTelegramHtml(markdown)).length;
}
