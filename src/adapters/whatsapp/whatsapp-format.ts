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

/** The most characters the Cloud API takes in one text message's `text.body`. */
export const WHATSAPP_MESSAGE_LIMIT = 4096;

/** Wraps inline formatting markers around text that has something in it (WhatsApp ignores `* x*`). */
function wrap(marker: string, inner: string): string {
  const trimmed = inner.trim();
  if (trimmed === "") return inner;
  const lead = inner.slice(0, inner.length - inner.trimStart().length);
  const tail = inner.slice(inner.trimEnd().length);
  return `${lead}${marker}${trimmed}${marker}${tail}`;
}

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
    return `${wrap("*", this.parser.parseInline(tokens))}\n\n`;
  },
  hr(): string {
    return "——————\n\n";
  },
  list(token: Tokens.List): string {
    const start = typeof token.start === "number" ? token.start : 1;
    const lines = token.items.map((item, i) => {
      const marker = token.ordered ? `${start + i}.` : "-";
      const check = item.task ? (item.checked ? "☑ " : "☐ ") : "";
      const body = this.parser.parse(item.tokens.filter((t) => t.type !== "checkbox")).trim();
      return `${marker} ${check}${body.replace(/\n/gu, "\n   ")}`;
    });
    return `${lines.join("\n")}\n\n`;
  },
  checkbox(): string {
    return "";
  },
  paragraph({ tokens }: Tokens.Paragraph): string {
    return `${this.parser.parseInline(tokens)}\n\n`;
  },
  table(token: Tokens.Table): string {
    const row = (cells: Tokens.TableCell[]): string => cells.map((c) => this.parser.parseInline(c.tokens)).join(" | ");
    return `${[wrap("*", row(token.header)), ...token.rows.map(row)].join("\n")}\n\n`;
  },
  strong({ tokens }: Tokens.Strong): string {
    return wrap("*", this.parser.parseInline(tokens));
  },
  em({ tokens }: Tokens.Em): string {
    return wrap("_", this.parser.parseInline(tokens));
  },
  codespan({ text }: Tokens.Codespan): string {
    return `\`${text}\``;
  },
  br(): string {
    return "\n";
  },
  del({ tokens }: Tokens.Del): string {
    return wrap("~", this.parser.parseInline(tokens));
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
