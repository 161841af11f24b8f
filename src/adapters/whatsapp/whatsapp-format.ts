/**
 * Outbound formatting for WhatsApp: the model's Markdown → WhatsApp's own formatting
 * (`*bold*`, `_italic_`, `~strike~`, `` `code` ``, ```` ```monospace``` ```` blocks, `> `
 * quotes, `- ` and `1. ` lists). WhatsApp has no links with labels (a URL in the text is
 * linked by the app), no headings and no tables: a link becomes `label (url)`, a heading
 * a bold line, a table `a | b` lines. WhatsApp has no escape character either, so text is
 * passed through as written. Parsed with `marked`.
 *
 * @module
 */
import { Marked, type RendererObject, type Tokens } from "marked";
import { listLines, tableLines, wrapMarkers } from "../chat/index.js";

/** The most characters the Cloud API takes in one text message's `text.body`. */
export const WHATSAPP_MESSAGE_LIMIT = 4096;

const renderer: RendererObject = {
  space(): string {
    return "";
  },
  code({ text }: Tokens.Code): string {
    // WhatsApp shows a fence's language as text, so it is dropped.
    return `\`\`\`${text}\`\`\`\n\n`;
  },
  blockquote({ tokens }: Tokens.Blockquote): string {
    const inner = this.parser.parse(tokens).trim();
    return `${inner
      .split("\n")
      .map((line) => `> ${line}`)
      .join("\n")}\n\n`;
  },
  html({ text }: Tokens.HTML | Tokens.Tag): string {
    return text;
  },
  heading({ tokens }: Tokens.Heading): string {
    return `${wrapMarkers("*", this.parser.parseInline(tokens))}\n\n`;
  },
  hr(): string {
    return "——————\n\n";
  },
  list(token: Tokens.List): string {
    return listLines(this.parser, token, { bullet: "-", indent: "   " });
  },
  checkbox(): string {
    return "";
  },
  paragraph({ tokens }: Tokens.Paragraph): string {
    return `${this.parser.parseInline(tokens)}\n\n`;
  },
  table(token: Tokens.Table): string {
    return tableLines(this.parser, token, (header) => wrapMarkers("*", header));
  },
  strong({ tokens }: Tokens.Strong): string {
    return wrapMarkers("*", this.parser.parseInline(tokens));
  },
  em({ tokens }: Tokens.Em): string {
    return wrapMarkers("_", this.parser.parseInline(tokens));
  },
  codespan({ text }: Tokens.Codespan): string {
    return `\`${text}\``;
  },
  br(): string {
    return "\n";
  },
  del({ tokens }: Tokens.Del): string {
    return wrapMarkers("~", this.parser.parseInline(tokens));
  },
  link({ href, tokens }: Tokens.Link): string {
    const label = this.parser.parseInline(tokens);
    // An autolink (`https://x`), or a label that is the URL: the URL alone (the app links it).
    if (label === href || tokens.length === 0) return href;
    if (!/^(https?|mailto|tel):/iu.test(href)) return label;
    return `${label} (${href})`;
  },
  image({ href, text }: Tokens.Image): string {
    return text ? `${text} (${href})` : href;
  },
  text(token: Tokens.Text | Tokens.Escape): string {
    if ("tokens" in token && token.tokens !== undefined) return this.parser.parseInline(token.tokens);
    return token.text;
  },
};

// marked's default text renderer escapes `&`, `<`, `>` and quotes for HTML; WhatsApp shows text as written.
const markdown = new Marked({ gfm: true, breaks: false, renderer });

/** Undoes the HTML entities marked leaves in raw text (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`). */
function unescapeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/gu, (_match, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name] ?? _match);
}

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
  const out = markdown.parse(text, { async: false });
  return unescapeEntities(out)
    .replace(/\n{3,}/gu, "\n\n")
    .trim();
}
