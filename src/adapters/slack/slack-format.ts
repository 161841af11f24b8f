/**
 * Outbound formatting for Slack: the model's Markdown → Slack `mrkdwn` (`*bold*`, `_italic_`,
 * `~strike~`, `` `code` ``, ```` ``` ```` blocks, `<url|text>` links, `>` quotes), with `&`,
 * `<` and `>` escaped as Slack requires everywhere else (`&amp;`, `&lt;`, `&gt;`). Parsed
 * with `marked`; headings become bold lines, lists `•` / `1.` lines, tables `a | b` lines.
 *
 * User and channel references the model writes in Slack's own syntax (`<@U123>`,
 * `<#C123>`) are kept; broadcast mentions (`<!here>`, `<!channel>`, `<!everyone>`) are not,
 * so a reply can never page a whole channel: the renderer escapes them, and
 * {@link neutralizeSlackBroadcasts} defuses them in any text the adapter posts (plain-text
 * notices and fallbacks too).
 *
 * @module
 */
import { Marked, type RendererObject, type Tokens } from "marked";
import { listLines, tableLines, wrapMarkers } from "../chat/index.js";

/**
 * The longest text of one Slack message the adapter sends, in characters of mrkdwn: the
 * limit of a section block's text (3,000), so a chunk always fits a block; Slack's own cap
 * on a message's `text` (40,000, truncated beyond) is far above it.
 */
export const SLACK_MESSAGE_LIMIT = 3000;

/** Escapes text for mrkdwn: `&` → `&amp;`, `<` → `&lt;`, `>` → `&gt;`. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;");
}

/** A broadcast or group mention in Slack's syntax: `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^S…>` (with an optional `|label`). */
const BROADCAST = /<!(channel|here|everyone|group|subteam\^[^>|]*)(\|[^>]*)?>/giu;

/**
 * `text` with every broadcast mention (`<!channel>`, `<!here>`, `<!everyone>`, `<!group>`,
 * `<!subteam^…>`) escaped so Slack shows it as text and notifies nobody. User and channel
 * references (`<@U…>`, `<#C…>`) and links are left as they are. Applied to every text the
 * Slack adapter posts or edits, formatted or plain.
 *
 * @example
 * ```ts
 * neutralizeSlackBroadcasts("<!channel> look"); // "&lt;!channel&gt; look"
 * ```
 */
export function neutralizeSlackBroadcasts(text: string): string {
  return text.replace(BROADCAST, (match) => match.replace(/</gu, "&lt;").replace(/>/gu, "&gt;"));
}

/** Restores `<@U…>`, `<@W…>` and `<#C…>` / `<#C…|name>` references escaped by {@link escapeSlackText}. */
function keepReferences(escaped: string): string {
  return escaped.replace(/&lt;((?:@[UW][A-Z0-9]{2,})|(?:#[CG][A-Z0-9]{2,}(?:\|[\w-]{1,80})?))&gt;/gu, "<$1>");
}

/** A link target safe inside `<…|…>` (no `|` or `>`), or null when it is not a web or mail link. */
function linkTarget(href: string): string | null {
  if (!/^(https?|mailto):/iu.test(href)) return null;
  return href.replace(/&/gu, "&amp;").replace(/</gu, "%3C").replace(/>/gu, "%3E").replace(/\|/gu, "%7C");
}

const renderer: RendererObject = {
  space(): string {
    return "";
  },
  code({ text }: Tokens.Code): string {
    // Slack shows a fence's language as text, so it is dropped.
    return `\`\`\`\n${escapeSlackText(text)}\n\`\`\`\n\n`;
  },
  blockquote({ tokens }: Tokens.Blockquote): string {
    const inner = this.parser.parse(tokens).trim();
    return `${inner
      .split("\n")
      .map((line) => `> ${line}`)
      .join("\n")}\n\n`;
  },
  html({ text }: Tokens.HTML | Tokens.Tag): string {
    return keepReferences(escapeSlackText(text));
  },
  heading({ tokens }: Tokens.Heading): string {
    return `${wrapMarkers("*", this.parser.parseInline(tokens))}\n\n`;
  },
  hr(): string {
    return "——————\n\n";
  },
  list(token: Tokens.List): string {
    return listLines(this.parser, token, { bullet: "•", indent: "   " });
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
    return `\`${escapeSlackText(text)}\``;
  },
  br(): string {
    return "\n";
  },
  del({ tokens }: Tokens.Del): string {
    return wrapMarkers("~", this.parser.parseInline(tokens));
  },
  link({ href, tokens }: Tokens.Link): string {
    const label = this.parser.parseInline(tokens);
    const target = linkTarget(href);
    if (target === null) return label;
    // An autolink (`https://x`) needs no label.
    const plainLabel = tokens.length === 1 && tokens[0]!.type === "text" && tokens[0]!.raw === href;
    return plainLabel ? `<${target}>` : `<${target}|${label.replace(/\|/gu, "¦")}>`;
  },
  image({ href, text }: Tokens.Image): string {
    const target = linkTarget(href);
    if (target === null) return escapeSlackText(text || href);
    return `<${target}|${escapeSlackText(text || href).replace(/\|/gu, "¦")}>`;
  },
  text(token: Tokens.Text | Tokens.Escape): string {
    if ("tokens" in token && token.tokens !== undefined) return this.parser.parseInline(token.tokens);
    return keepReferences(escapeSlackText(token.text));
  },
};

const markdown = new Marked({ gfm: true, breaks: false, renderer });

/**
 * Converts Markdown to Slack mrkdwn.
 *
 * @example
 * ```ts
 * markdownToSlackMrkdwn("**bold** & [docs](https://x.dev)"); // "*bold* &amp; <https://x.dev|docs>"
 * ```
 */
export function markdownToSlackMrkdwn(text: string): string {
  const out = markdown.parse(text, { async: false });
  return out.replace(/\n{3,}/gu, "\n\n").trim();
}
