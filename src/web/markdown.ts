/**
 * Markdown of stored messages to safe HTML. Every message is untrusted:
 *
 * 1. `marked` renders the Markdown with raw HTML turned into text (a `<script>` in a message
 *    is shown as the characters `<script>`, never parsed);
 * 2. DOMPurify then sanitises the output (defence in depth) with a short allow-list of tags
 *    and no `style`, event handler or `src` attribute at all;
 * 3. links keep only `http:`, `https:` and `mailto:` targets, open in a new tab with
 *    `rel="noopener noreferrer"`; any other link (`javascript:`, `data:`…) loses its `href`.
 *
 * The page's Content-Security-Policy (no inline script, no eval) is the last line behind it.
 *
 * @module
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";

const escapeHtml = (text: string): string => text.replace(/[&<>"']/gu, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // Raw HTML blocks and inline tags are shown as text.
    html(token) {
      return escapeHtml(token.text);
    },
    // Images are not loaded (tracking pixels, remote content): shown as a link-like text.
    image(token) {
      return escapeHtml(`[image: ${token.text || token.href}]`);
    },
  },
});

const ALLOWED_TAGS = [
  "p",
  "br",
  "hr",
  "em",
  "strong",
  "del",
  "code",
  "pre",
  "blockquote",
  "ul",
  "ol",
  "li",
  "a",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "input",
  "span",
];
const ALLOWED_ATTR = ["href", "title", "align", "start", "type", "checked", "disabled"];
const SAFE_LINK = /^(?:https?:|mailto:)/iu;

let hooked = false;
function installHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "A") {
      const target = node.getAttribute("href");
      if (target === null || !SAFE_LINK.test(target.trim())) node.removeAttribute("href");
      else {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    }
    // Task-list checkboxes only.
    if (node.nodeName === "INPUT" && node.getAttribute("type") !== "checkbox") node.remove();
  });
}

/** Renders Markdown to sanitised HTML (safe for `innerHTML`). */
export function renderMarkdown(source: string): string {
  installHooks();
  const html = marked.parse(source, { async: false });
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/iu,
    ADD_ATTR: ["target", "rel"],
  });
}
