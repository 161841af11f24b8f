/**
 * Outbound formatting for Telegram: the model's Markdown → Telegram's HTML subset
 * (`b`, `i`, `s`, `code`, `pre`, `a`, `blockquote`), with `&`, `<` and `>` escaped
 * everywhere else, through the chat adapters' one renderer ({@link createTextRenderer});
 * anything Telegram has no tag for (headings, lists, tables, images, raw HTML) becomes plain text.
 *
 * @module
 */
import { createTextRenderer } from "../chat/index.js";

/** Telegram's limit on the text of one message: characters after entity parsing, counted in UTF-16 code units. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/** Escapes text for Telegram HTML (`&`, `<`, `>`; `"` too, for attribute values). */
export function escapeTelegramHtml(text: string): string {
  return text.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;").replace(/"/gu, "&quot;");
}

const render = createTextRenderer({
  escape: escapeTelegramHtml,
  bold: (inner) => `<b>${inner}</b>`,
  italic: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  code: (text) => `<code>${escapeTelegramHtml(text)}</code>`,
  codeBlock(text, lang) {
    const language = lang.trim().split(/\s+/u)[0] ?? "";
    const cls = /^[\w#+.-]+$/u.test(language) ? ` class="language-${escapeTelegramHtml(language)}"` : "";
    return `<pre><code${cls}>${escapeTelegramHtml(text)}</code></pre>`;
  },
  quote: (inner) => `<blockquote>${inner}</blockquote>`,
  link: (href, label) => (/^(https?|tg|mailto):/iu.test(href) ? `<a href="${escapeTelegramHtml(href)}">${label}</a>` : label),
  image: (href, alt) => escapeTelegramHtml(alt ? `${alt} (${href})` : href),
  bullet: "•",
  indent: "  ",
});

/**
 * Converts Markdown to Telegram HTML (`parse_mode: "HTML"`).
 *
 * @example
 * ```ts
 * markdownToTelegramHtml("**bold** & `a<b`"); // "<b>bold</b> &amp; <code>a&lt;b</code>"
 * ```
 */
export function markdownToTelegramHtml(text: string): string {
  return render(text);
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
