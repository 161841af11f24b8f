/**
 * Outbound formatting for WhatsApp: the model's Markdown → WhatsApp's own formatting
 * (`*bold*`, `_italic_`, `~strike~`, `` `code` ``, ```` ```monospace``` ```` blocks, `> `
 * quotes, `- ` and `1. ` lists). WhatsApp has no links with labels (a URL in the text is
 * linked by the app), no headings and no tables: a link becomes `label (url)`, a heading
 * a bold line, a table `a | b` lines. WhatsApp has no escape character either, so text is
 * passed through as written. Rendered by the chat adapters' one renderer ({@link createTextRenderer}).
 *
 * @module
 */
import { createTextRenderer, quoteLines, wrapMarkers } from "../chat/index.js";

/** The most characters the Cloud API takes in one text message's `text.body`. */
export const WHATSAPP_MESSAGE_LIMIT = 4096;

/** Undoes the HTML entities marked leaves in raw text (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`). */
function unescapeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/gu, (_match, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name] ?? _match);
}

// WhatsApp has no escape character: text is shown as written.
const render = createTextRenderer({
  escape: (text) => text,
  bold: (inner) => wrapMarkers("*", inner),
  italic: (inner) => wrapMarkers("_", inner),
  strike: (inner) => wrapMarkers("~", inner),
  code: (text) => `\`${text}\``,
  // WhatsApp shows a fence's language as text, so it is dropped.
  codeBlock: (text) => `\`\`\`${text}\`\`\``,
  quote: quoteLines,
  link(href, label, bare) {
    // An autolink (`https://x`), or a label that is the URL: the URL alone (the app links it).
    if (bare || label === href) return href;
    return /^(https?|mailto|tel):/iu.test(href) ? `${label} (${href})` : label;
  },
  image: (href, alt) => (alt ? `${alt} (${href})` : href),
  bullet: "-",
  indent: "   ",
  boldTableHeader: true,
  finish: unescapeEntities,
});

/**
 * Converts Markdown to WhatsApp formatting.
 *
 * @example
 * ```ts
 * markdownToWhatsApp("**bold** and _it_ ~~gone~~"); // "*bold* and _it_ ~gone~"
 * markdownToWhatsApp("[docs](https://x.dev)");       // "docs (https://x.dev)"
 * ```
 */
export function markdownToWhatsApp(text: string): string {
  return render(text);
}
