/**
 * Outbound formatting for Matrix: the `content` of the `m.room.message` events one reply is
 * sent as.
 *
 * - `body` is the model's Markdown as it is (clients without HTML show it), `format` is
 *   `org.matrix.custom.html` and `formatted_body` the Markdown rendered to the HTML subset
 *   the Client-Server API recommends ({@link markdownToMatrixHtml}, parsed with `marked`):
 *   raw HTML in the model's text is escaped, links keep only http(s), mailto and matrix.to
 *   targets, images become links (Matrix `<img>` takes only `mxc://` sources).
 * - Replies are `m.text`; notices and errors (`/new`, `/status`, "could not be stored") are
 *   plain `m.notice`, which bots by convention never answer.
 * - Long replies are split ({@link splitMessage}) at {@link MATRIX_MESSAGE_LIMIT} bytes of
 *   UTF-8 text per event: an event may be at most 65,536 bytes of JSON, with the HTML copy
 *   inside; a chunk whose content would still be too large goes without its HTML copy.
 * - Relations: in a thread every chunk carries `m.thread` (to the thread root) with
 *   `is_falling_back: true` and an `m.in_reply_to` fallback for clients without threads;
 *   outside threads the first chunk is a reply (`m.in_reply_to`) to the triggering event.
 * - Mentions: every event has `m.mentions` (intentional mentions), empty except the author of
 *   the message replied to, so names and ids in a reply never ping anyone else and `@room` is
 *   never sent.
 *
 * @module
 */
import { Marked, type RendererObject, type Tokens } from "marked";
import { splitMessage } from "../chat/index.js";

/** The most UTF-8 bytes of text in one event's `body`. */
export const MATRIX_MESSAGE_LIMIT = 16_000;

/** Above this many bytes of JSON a chunk's content is sent without `formatted_body`. */
export const MATRIX_CONTENT_BYTES_MAX = 60_000;

/** The HTML format name of `formatted_body`. */
export const MATRIX_HTML_FORMAT = "org.matrix.custom.html";

/** The `content` of one `m.room.message` event the adapter sends. */
export interface MatrixMessageContent {
  msgtype: "m.text" | "m.notice";
  body: string;
  format?: typeof MATRIX_HTML_FORMAT;
  formatted_body?: string;
  "m.mentions": { user_ids?: string[] };
  /** Edits: the message's new content. */
  "m.new_content"?: Omit<MatrixMessageContent, "m.relates_to" | "m.new_content">;
  "m.relates_to"?: {
    rel_type?: "m.thread" | "m.replace";
    event_id?: string;
    is_falling_back?: boolean;
    "m.in_reply_to"?: { event_id: string };
  };
}

/** Escapes text for HTML (`&`, `<`, `>`, `"`, `'`). */
export function escapeMatrixHtml(text: string): string {
  return text.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;").replace(/"/gu, "&quot;").replace(/'/gu, "&#39;");
}

/** Link targets kept as links (the schemes Matrix clients allow in `<a href>`). */
const SAFE_HREF = /^(https?:|mailto:)/iu;

const renderer: RendererObject = {
  html({ text }: Tokens.HTML | Tokens.Tag): string {
    return escapeMatrixHtml(text);
  },
  code({ text, lang }: Tokens.Code): string {
    const language = (lang ?? "").trim().split(/\s+/u)[0] ?? "";
    const cls = /^[\w#+.-]+$/u.test(language) ? ` class="language-${escapeMatrixHtml(language)}"` : "";
    return `<pre><code${cls}>${escapeMatrixHtml(text.endsWith("\n") ? text : `${text}\n`)}</code></pre>\n`;
  },
  link({ href, title, tokens }: Tokens.Link): string {
    const label = this.parser.parseInline(tokens);
    if (!SAFE_HREF.test(href)) return label;
    const titled = title ? ` title="${escapeMatrixHtml(title)}"` : "";
    return `<a href="${escapeMatrixHtml(href)}"${titled}>${label}</a>`;
  },
  image({ href, text }: Tokens.Image): string {
    const label = escapeMatrixHtml(text || href);
    return SAFE_HREF.test(href) ? `<a href="${escapeMatrixHtml(href)}">${label}</a>` : label;
  },
  checkbox({ checked }: Tokens.Checkbox): string {
    return checked ? "[x] " : "[ ] ";
  },
  tablecell(token: Tokens.TableCell): string {
    const tag = token.header ? "th" : "td";
    return `<${tag}>${this.parser.parseInline(token.tokens)}</${tag}>\n`;
  },
};

const markdown = new Marked({ gfm: true, breaks: false, renderer });

/**
 * Renders Markdown to the HTML of `formatted_body`. Raw HTML in the text is escaped (shown
 * as typed, never interpreted); a text that is one plain paragraph comes back without the
 * `<p>` around it.
 *
 * @example
 * ```ts
 * markdownToMatrixHtml("**bold** & <b>raw</b>"); // "<strong>bold</strong> &amp; &lt;b&gt;raw&lt;/b&gt;"
 * ```
 */
export function markdownToMatrixHtml(text: string): string {
  const html = markdown.parse(text, { async: false }).trim();
  const lone = /^<p>([\s\S]*)<\/p>$/u.exec(html);
  if (lone !== null && !lone[1]!.includes("<p>")) return lone[1]!;
  return html;
}

/** What one reply answers and where it goes. */
export interface MatrixSendTarget {
  /** `reply` → `m.text` with HTML; `notice`/`error` → plain `m.notice`. */
  kind: "reply" | "notice" | "error";
  /** The event the first chunk replies to (the triggering message), if any. */
  replyTo: string | null;
  /** The thread root when the conversation is in a thread. */
  threadId: string | null;
  /** The author of `replyTo`: the one user id put in `m.mentions`. */
  replyToUser?: string | null;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * The event contents of one reply, in order (empty text: none).
 *
 * @example
 * ```ts
 * matrixMessageContents("**hi**", { kind: "reply", replyTo: "$ev", threadId: null, replyToUser: "@alice:example.org" });
 * // [{ msgtype: "m.text", body: "**hi**", format: "org.matrix.custom.html", formatted_body: "<strong>hi</strong>",
 * //    "m.mentions": { user_ids: ["@alice:example.org"] }, "m.relates_to": { "m.in_reply_to": { event_id: "$ev" } } }]
 * ```
 */
export function matrixMessageContents(text: string, target: MatrixSendTarget): MatrixMessageContent[] {
  if (text.trim() === "") return [];
  const html = target.kind === "reply";
  return splitMessage(text, MATRIX_MESSAGE_LIMIT, { measure: byteLength }).map((body, i) => {
    const content: MatrixMessageContent = { msgtype: html ? "m.text" : "m.notice", body, "m.mentions": {} };
    if (html) {
      content.format = MATRIX_HTML_FORMAT;
      content.formatted_body = markdownToMatrixHtml(body);
    }
    const first = i === 0;
    if (target.threadId !== null) {
      content["m.relates_to"] = {
        rel_type: "m.thread",
        event_id: target.threadId,
        is_falling_back: true,
        "m.in_reply_to": { event_id: target.replyTo ?? target.threadId },
      };
    } else if (first && target.replyTo !== null) {
      content["m.relates_to"] = { "m.in_reply_to": { event_id: target.replyTo } };
    }
    if (first && target.replyTo !== null && target.replyToUser) content["m.mentions"] = { user_ids: [target.replyToUser] };
    if (html && byteLength(JSON.stringify(content)) > MATRIX_CONTENT_BYTES_MAX) {
      delete content.format;
      delete content.formatted_body;
    }
    return content;
  });
}

/**
 * The content of an edit (`m.replace`) of the event `eventId` to `text`: the new content
 * (with HTML) in `m.new_content`, and `* <text>` as the body clients without edits show.
 * Text over {@link MATRIX_MESSAGE_LIMIT} is cut to its first chunk.
 *
 * @example
 * ```ts
 * matrixEditContent("$ev", "fixed");
 * // { msgtype: "m.text", body: "* fixed", "m.mentions": {}, "m.new_content": { msgtype: "m.text", body: "fixed", … },
 * //   "m.relates_to": { rel_type: "m.replace", event_id: "$ev" } }
 * ```
 */
export function matrixEditContent(eventId: string, text: string): MatrixMessageContent {
  const [first] = matrixMessageContents(text.trim() === "" ? "…" : text, { kind: "reply", replyTo: null, threadId: null });
  const { "m.relates_to": _relation, ...fresh } = first!;
  return {
    msgtype: "m.text",
    body: `* ${fresh.body}`,
    "m.mentions": {},
    "m.new_content": fresh,
    "m.relates_to": { rel_type: "m.replace", event_id: eventId },
  };
}
