/**
 * Outbound formatting for Signal: the model's Markdown → the markup of the signal-cli REST
 * API's `text_mode: "styled"` (`**bold**`, `*italic*`, `~strike~`, `` `mono` ``,
 * `||spoiler||`, which the REST API turns into Signal's text styles), split so each message
 * stays inline.
 *
 * - Parsed with `marked`: bold, italic, strikethrough, inline code and code blocks (monospace),
 *   headings (bold), spoilers (`||…||`), links (`label (url)`), lists (`•`, `1.`), quotes
 *   (`> `), tables (cells joined by ` | `); everything else as plain text.
 * - The REST API's styled parser has no nesting rules and eats stray markers, so every
 *   literal `*`, `~`, `` ` `` and `||` is escaped with a backslash, and a word joiner
 *   (U+2060) goes where two markers or a marker and a backslash would touch. The result is
 *   checked with a port of that parser ({@link parseSignalStyledText}); if it would not give
 *   back exactly the intended text and styles, the chunk goes as plain text
 *   (`text_mode: "normal"`) instead.
 * - Signal clients show a message body of up to 2 KiB of UTF-8 inline (longer bodies are cut
 *   and the rest sent as a `text/x-signal-plain` attachment, which not every client shows);
 *   replies are split at 2,000 bytes of the text Signal receives ({@link SIGNAL_MESSAGE_LIMIT_BYTES}).
 *
 * @module
 */
import { Marked, type Token, type Tokens, type TokenizerAndRendererExtension } from "marked";
import { splitMessage } from "../chat/index.js";

/** Bytes of UTF-8 per message body: Signal's inline limit is 2 KiB; signal-cli moves text over 2,000 to an attachment. */
export const SIGNAL_MESSAGE_LIMIT_BYTES = 2000;

/** A text style of Signal (the names signal-cli's `--text-style` takes). */
export type SignalTextStyle = "BOLD" | "ITALIC" | "STRIKETHROUGH" | "MONOSPACE" | "SPOILER";

/** A piece of text with the styles it carries. */
interface Run {
  text: string;
  styles: ReadonlySet<SignalTextStyle>;
}

/** One message body of `POST /v2/send`. */
export interface SignalMessageBody {
  message: string;
  text_mode: "styled" | "normal";
}

/** The text Signal shows and its style ranges (`start:length:STYLE`, UTF-16 offsets, as signal-cli takes them). */
export interface SignalStyledText {
  text: string;
  styles: string[];
}

const WORD_JOINER = "\u2060";
const NONE: ReadonlySet<SignalTextStyle> = new Set();

const spoiler: TokenizerAndRendererExtension = {
  name: "spoiler",
  level: "inline",
  start(src: string) {
    const at = src.indexOf("||");
    return at < 0 ? undefined : at;
  },
  tokenizer(src: string) {
    const match = /^\|\|(?=\S)([^\n]*?\S)\|\|/u.exec(src);
    if (match === null) return undefined;
    return { type: "spoiler", raw: match[0], text: match[1]!, tokens: this.lexer.inlineTokens(match[1]!) };
  },
  renderer() {
    return "";
  },
};

const markdown = new Marked({ gfm: true, breaks: false, extensions: [spoiler] });

function withStyle(styles: ReadonlySet<SignalTextStyle>, style: SignalTextStyle): ReadonlySet<SignalTextStyle> {
  return new Set([...styles, style]);
}

/** Inline tokens → runs. */
function inline(tokens: readonly Token[] | undefined, styles: ReadonlySet<SignalTextStyle>, out: Run[]): void {
  for (const token of tokens ?? []) {
    switch (token.type) {
      case "strong":
        inline((token as Tokens.Strong).tokens, withStyle(styles, "BOLD"), out);
        break;
      case "em":
        inline((token as Tokens.Em).tokens, withStyle(styles, "ITALIC"), out);
        break;
      case "del":
        inline((token as Tokens.Del).tokens, withStyle(styles, "STRIKETHROUGH"), out);
        break;
      case "spoiler":
        inline((token as Tokens.Generic).tokens, withStyle(styles, "SPOILER"), out);
        break;
      case "codespan":
        out.push({ text: (token as Tokens.Codespan).text, styles: withStyle(styles, "MONOSPACE") });
        break;
      case "br":
        out.push({ text: "\n", styles });
        break;
      case "link": {
        const link = token as Tokens.Link;
        const label: Run[] = [];
        inline(link.tokens, styles, label);
        out.push(...label);
        const shown = label.map((r) => r.text).join("");
        if (shown !== link.href && shown !== link.href.replace(/^mailto:/u, "") && /^(https?|mailto):/iu.test(link.href))
          out.push({ text: ` (${link.href})`, styles });
        break;
      }
      case "image": {
        const image = token as Tokens.Image;
        out.push({ text: image.text ? `${image.text} (${image.href})` : image.href, styles });
        break;
      }
      case "text": {
        const text = token as Tokens.Text;
        if (text.tokens !== undefined && text.tokens.length > 0) inline(text.tokens, styles, out);
        else out.push({ text: text.text, styles });
        break;
      }
      case "escape":
      case "html":
        out.push({ text: (token as Tokens.Escape | Tokens.HTML).text, styles });
        break;
      default:
        if ("tokens" in token && Array.isArray(token.tokens)) inline(token.tokens as Token[], styles, out);
        else if ("text" in token && typeof token.text === "string") out.push({ text: token.text, styles });
    }
  }
}

/** `runs` with `first` before the first line and `rest` before every other line. */
function prefixLines(runs: Run[], first: string, rest: string): Run[] {
  const out: Run[] = [{ text: first, styles: NONE }];
  for (const run of runs) {
    const lines = run.text.split("\n");
    lines.forEach((line, i) => {
      if (i > 0) out.push({ text: "\n", styles: NONE }, { text: rest, styles: NONE });
      if (line !== "") out.push({ text: line, styles: run.styles });
    });
  }
  return out;
}

/** Block tokens → runs, blocks separated by a blank line (`tight`: by a newline, for list items). */
function blocks(tokens: readonly Token[], tight = false): Run[] {
  const parts: Run[][] = [];
  for (const token of tokens) {
    const runs: Run[] = [];
    switch (token.type) {
      case "space":
      case "def":
      case "checkbox":
        continue;
      case "heading":
        inline((token as Tokens.Heading).tokens, new Set(["BOLD"]), runs);
        break;
      case "paragraph":
        inline((token as Tokens.Paragraph).tokens, NONE, runs);
        break;
      case "text": {
        const text = token as Tokens.Text;
        if (text.tokens !== undefined) inline(text.tokens, NONE, runs);
        else runs.push({ text: text.text, styles: NONE });
        break;
      }
      case "code":
        runs.push({ text: (token as Tokens.Code).text, styles: new Set(["MONOSPACE"]) });
        break;
      case "blockquote":
        runs.push(...prefixLines(blocks((token as Tokens.Blockquote).tokens), "> ", "> "));
        break;
      case "hr":
        runs.push({ text: "———", styles: NONE });
        break;
      case "list": {
        const list = token as Tokens.List;
        const start = typeof list.start === "number" ? list.start : 1;
        list.items.forEach((item, i) => {
          if (i > 0) runs.push({ text: "\n", styles: NONE });
          const marker = list.ordered ? `${start + i}. ` : "• ";
          const check = item.task ? (item.checked ? "☑ " : "☐ ") : "";
          const body = blocks(
            item.tokens.filter((t) => t.type !== "checkbox"),
            !item.loose,
          );
          runs.push(...prefixLines(body, marker + check, " ".repeat(marker.length)));
        });
        break;
      }
      case "table": {
        const table = token as Tokens.Table;
        const row = (cells: Tokens.TableCell[], styles: ReadonlySet<SignalTextStyle>): void => {
          cells.forEach((cell, i) => {
            if (i > 0) runs.push({ text: " | ", styles: NONE });
            inline(cell.tokens, styles, runs);
          });
        };
        row(table.header, new Set(["BOLD"]));
        for (const cells of table.rows) {
          runs.push({ text: "\n", styles: NONE });
          row(cells, NONE);
        }
        break;
      }
      case "html":
        runs.push({ text: (token as Tokens.HTML).text.replace(/\n+$/u, ""), styles: NONE });
        break;
      default:
        if ("tokens" in token && Array.isArray(token.tokens)) inline(token.tokens as Token[], NONE, runs);
        else if ("text" in token && typeof token.text === "string") runs.push({ text: token.text, styles: NONE });
    }
    if (runs.length > 0) parts.push(runs);
  }
  const out: Run[] = [];
  parts.forEach((runs, i) => {
    if (i > 0) out.push({ text: tight ? "\n" : "\n\n", styles: NONE });
    out.push(...runs);
  });
  return out;
}

function sameStyles(a: ReadonlySet<SignalTextStyle>, b: ReadonlySet<SignalTextStyle>): boolean {
  return a.size === b.size && [...a].every((s) => b.has(s));
}

/** Runs with empty ones dropped, neighbours of equal style merged, and the text trimmed of blank lines at both ends. */
function normalise(runs: Run[]): Run[] {
  const out: Run[] = [];
  for (const run of runs) {
    if (run.text === "") continue;
    const last = out.at(-1);
    if (last !== undefined && sameStyles(last.styles, run.styles)) out[out.length - 1] = { text: last.text + run.text, styles: last.styles };
    else out.push(run);
  }
  while (out.length > 0 && out[0]!.styles.size === 0 && out[0]!.text.trim() === "") out.shift();
  while (out.length > 0 && out.at(-1)!.styles.size === 0 && out.at(-1)!.text.trim() === "") out.pop();
  if (out.length > 0 && out[0]!.styles.size === 0) out[0] = { ...out[0]!, text: out[0]!.text.replace(/^\n+/u, "") };
  if (out.length > 0 && out.at(-1)!.styles.size === 0) out[out.length - 1] = { ...out.at(-1)!, text: out.at(-1)!.text.replace(/\s+$/u, "") };
  return out;
}

/** Escapes the characters the REST API's styled parser reads as markers. */
function escapeStyled(text: string): string {
  return text.replace(/\|\|/gu, "\\||").replace(/[*~`]/gu, (c) => `\\${c}`);
}

function openers(styles: ReadonlySet<SignalTextStyle>): string[] {
  const out: string[] = [];
  if (styles.has("SPOILER")) out.push("||");
  if (styles.has("STRIKETHROUGH")) out.push("~");
  if (styles.has("BOLD") && styles.has("ITALIC")) out.push("***");
  else if (styles.has("BOLD")) out.push("**");
  else if (styles.has("ITALIC")) out.push("*");
  if (styles.has("MONOSPACE")) out.push("`");
  return out;
}

/** The ranges a run list should produce (sorted `start:length:STYLE`). */
function expectedRanges(runs: readonly Run[]): string[] {
  const out: string[] = [];
  let at = 0;
  for (const run of runs) {
    for (const style of run.styles) out.push(`${at}:${run.text.length}:${style}`);
    at += run.text.length;
  }
  return out.sort();
}

/**
 * The REST API's `text_mode: "styled"` parser (signal-cli-rest-api `utils/textstyleparser.go`),
 * ported: what Signal will show for `input`, and its style ranges. Used to check a chunk
 * before it is sent.
 *
 * @example
 * ```ts
 * parseSignalStyledText("a **b** \\*c"); // { text: "a b *c", styles: ["2:1:BOLD"] }
 * ```
 */
export function parseSignalStyledText(input: string): SignalStyledText {
  const chars = [...input];
  const stack: Array<{ begin: number; token: string }> = [];
  const styles: string[] = [];
  let text = "";
  let prev = "";
  const handle = (token: string, names: SignalTextStyle[]): void => {
    const top = stack.at(-1);
    if (top !== undefined && top.token === token) {
      stack.pop();
      for (const name of names) styles.push(`${top.begin}:${text.length - top.begin}:${name}`);
    } else {
      stack.push({ begin: text.length, token });
    }
  };
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const next = chars[i + 1];
    if (c === "*") {
      if (next === "*") {
        i++;
        if (chars[i + 1] === "*") {
          i++;
          if (prev === "\\") {
            prev = c;
            text += "***";
            continue;
          }
          handle("***", ["BOLD", "ITALIC"]);
        } else {
          if (prev === "\\") {
            prev = c;
            text += "**";
            continue;
          }
          handle("**", ["BOLD"]);
        }
      } else {
        if (prev === "\\") {
          prev = c;
          text += "*";
          continue;
        }
        handle("*", ["ITALIC"]);
      }
    } else if (c === "|" && next === "|") {
      i++;
      if (prev === "\\") {
        prev = c;
        text += "||";
        continue;
      }
      handle("||", ["SPOILER"]);
    } else if (c === "~" || c === "`") {
      if (prev === "\\") {
        prev = c;
        text += c;
        continue;
      }
      handle(c, [c === "~" ? "STRIKETHROUGH" : "MONOSPACE"]);
    } else if (c === "\\" && (next === "*" || next === "`" || next === "|" || next === "~")) {
      prev = c;
      continue;
    } else {
      text += c;
    }
    prev = c;
  }
  return { text, styles };
}

/** The runs of a Markdown text (what Signal should show, piece by piece). */
function runsOf(md: string): Run[] {
  return normalise(blocks(markdown.lexer(md)));
}

/** The plain text of a Markdown text as Signal shows it (formatting removed). */
export function signalPlainText(md: string): string {
  return runsOf(md)
    .map((r) => r.text)
    .join("");
}

/**
 * Markdown → the styled markup of `text_mode: "styled"`, or `null` when the REST API's parser
 * would not give back exactly the intended text and styles (then send {@link signalPlainText}
 * with `text_mode: "normal"`).
 *
 * @example
 * ```ts
 * markdownToSignalStyled("**Note:** use `a*b`"); // "**Note:** use `a\\*b`"
 * ```
 */
export function markdownToSignalStyled(md: string): string | null {
  const runs = runsOf(md);
  // A word joiner (part of the text) goes where the parser would read a marker into its neighbour:
  // a marker or escaped `*` before a `*` marker, a single `|` before a `||` marker, a
  // backslash before any marker.
  const final: Run[] = [];
  let out = "";
  for (const run of runs) {
    const open = openers(run.styles);
    const before = open.join("");
    const after = [...open].reverse().join("");
    const lastChar = out.at(-1) ?? "";
    if (before !== "" && (lastChar === "\\" || (lastChar === "*" && before.startsWith("*")) || (lastChar === "|" && before.startsWith("|")))) {
      out += WORD_JOINER;
      final.push({ text: WORD_JOINER, styles: NONE });
    }
    let body = escapeStyled(run.text);
    let text = run.text;
    if (after !== "" && (body.endsWith("\\") || (body.endsWith("*") && after.startsWith("*")) || (body.endsWith("|") && after.startsWith("|")))) {
      body += WORD_JOINER;
      text += WORD_JOINER;
    }
    out += before + body + after;
    final.push({ text, styles: run.styles });
  }
  const merged = normalise(final);
  const parsed = parseSignalStyledText(out);
  const expectedText = merged.map((r) => r.text).join("");
  if (parsed.text !== expectedText) return null;
  if (JSON.stringify([...parsed.styles].sort()) !== JSON.stringify(expectedRanges(final.filter((r) => r.text !== "")))) return null;
  return out;
}

/** UTF-8 length of a string. */
function bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * The message bodies of one reply, in order: the Markdown split at
 * {@link SIGNAL_MESSAGE_LIMIT_BYTES} of shown text, each chunk styled (or plain text when its
 * markup would not survive the REST API's parser). With `styled: false` (notices, errors)
 * the text goes as it is, `text_mode: "normal"`.
 *
 * @example
 * ```ts
 * signalMessageBodies("**hi**", { styled: true }); // [{ message: "**hi**", text_mode: "styled" }]
 * ```
 */
export function signalMessageBodies(text: string, options: { styled: boolean }): SignalMessageBody[] {
  if (!options.styled) return splitMessage(text, SIGNAL_MESSAGE_LIMIT_BYTES, { measure: bytes }).map((message) => ({ message, text_mode: "normal" }));
  const chunks = splitMessage(text, SIGNAL_MESSAGE_LIMIT_BYTES, { measure: (t) => bytes(signalPlainText(t)) });
  const out: SignalMessageBody[] = [];
  for (const chunk of chunks) {
    // Text without styles goes as it is shown (nothing to escape); styled text as markup unless it would not survive.
    const styled = runsOf(chunk).some((r) => r.styles.size > 0) ? markdownToSignalStyled(chunk) : null;
    if (styled !== null && styled.trim() !== "") {
      out.push({ message: styled, text_mode: "styled" });
      continue;
    }
    const plain = signalPlainText(chunk);
    if (plain.trim() === "") continue;
    for (const piece of splitMessage(plain, SIGNAL_MESSAGE_LIMIT_BYTES, { measure: bytes })) out.push({ message: piece, text_mode: "normal" });
  }
  return out;
}
