/**
 * Outbound formatting for Slack: the model's Markdown → Slack `mrkdwn` (`*bold*`, `_italic_`,
 * `~strike~`, `` `code` ``, ```` ``` ```` blocks, `<url|text>` links, `>` quotes), with `&`,
 * `<` and `>` escaped as Slack requires everywhere else (`&amp;`, `&lt;`, `&gt;`), through the
 * chat adapters' one renderer ({@link createTextRenderer}); headings become bold lines, lists
 * `•` / `1.` lines, tables `a | b` lines.
 *
 * User and channel references the model writes in Slack's own syntax (`<@U123>`,
 * `<#C123>`) are kept; broadcast mentions (`<!here>`, `<!channel>`, `<!everyone>`) are not,
 * so a reply can never page a whole channel: the renderer escapes them, and
 * {@link neutralizeSlackBroadcasts} defuses them in any text the adapter posts (plain-text
 * notices and fallbacks too).
 *
 * @module
 */
import { createTextRenderer, quoteLines, wrapMarkers } from "../chat/index.js";

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

const render = createTextRenderer({
  escape: (text) => keepReferences(escapeSlackText(text)),
  bold: (inner) => wrapMarkers("*", inner),
  italic: (inner) => wrapMarkers("_", inner),
  strike: (inner) => wrapMarkers("~", inner),
  code: (text) => `\`${escapeSlackText(text)}\``,
  // Slack shows a fence's language as text, so it is dropped.
  codeBlock: (text) => `\`\`\`\n${escapeSlackText(text)}\n\`\`\``,
  quote: quoteLines,
  link(href, label, bare) {
    const target = linkTarget(href);
    if (target === null) return label;
    // An autolink (`https://x`) needs no label.
    return bare ? `<${target}>` : `<${target}|${label.replace(/\|/gu, "¦")}>`;
  },
  image(href, alt) {
    const target = linkTarget(href);
    if (target === null) return escapeSlackText(alt || href);
    return `<${target}|${escapeSlackText(alt || href).replace(/\|/gu, "¦")}>`;
  },
  bullet: "•",
  indent: "   ",
  boldTableHeader: true,
});

/**
 * Converts Markdown to Slack mrkdwn.
 *
 * @example
 * ```ts
 * markdownToSlackMrkdwn("**bold** & [docs](https://x.dev)"); // "*bold* &amp; <https://x.dev|docs>"
 * ```
 */
export function markdownToSlackMrkdwn(text: string): string {
  return render(text);
}
