/**
 * The recap `threadline chat` shows when it resumes a session: the last exchanges of the
 * transcript, cut so they fit on a screen. Rules (defaults):
 *
 * - the last 10 exchanges (a user message and the assistant messages after it);
 * - user text: whitespace folded onto one line, cut at 300 characters (`…` marks a cut);
 * - assistant text: blank lines dropped, cut at 3 lines, then at 200 characters (`…`);
 * - tool calls of an exchange collapsed to one line: `[3 tool calls: terminal, web_search]`;
 * - a compression summary and a note to the model (a handoff's) are user turns for the model
 *   but not the user's words: shown labelled as what they are (`Summary:`, `System note:`),
 *   folded and cut like user text, without their brackets;
 * - system, developer and tool rows hidden;
 * - `... N earlier messages ...` first when older exchanges were left out (N counts the
 *   user and assistant messages left out).
 *
 * `display.resumeDisplay: minimal` shows {@link recapOneLiner} instead of the panel.
 *
 * @module
 */
import { syntheticMessageBody, syntheticMessageKind, type Message, type ToolCall } from "../store/index.js";
import { relativeTime, styles } from "./cli-output.js";
import { messageText } from "./message-text.js";
import { summarizeToolCalls } from "./tool-call-summary.js";

/** The parts of a stored message the recap reads (`platformMessageId` marks a summary or a note). */
export type RecapMessage = Pick<Message, "role" | "content"> & { toolCalls?: ToolCall[] | null; platformMessageId?: string | null };

/** Limits of a recap (every field optional; defaults as in the module description). */
export interface RecapLimits {
  /** Exchanges shown (default 10). */
  exchanges?: number;
  /** Characters of user text (default 300). */
  userChars?: number;
  /** Non-blank lines of assistant text (default 3). */
  assistantLines?: number;
  /** Characters of assistant text (default 200). */
  assistantChars?: number;
}

/** One line of a recap. */
export type RecapRow =
  | { kind: "earlier"; count: number; text: string }
  | { kind: "user"; text: string }
  /** The summary a compressed session continues from. */
  | { kind: "summary"; text: string }
  /** A note to the model stored as a user turn (a handoff's). */
  | { kind: "note"; text: string }
  | { kind: "tools"; text: string }
  | { kind: "assistant"; text: string };

/** A recap: its rows, and what was left out. */
export interface Recap {
  rows: RecapRow[];
  /** Exchanges shown. */
  exchanges: number;
  /** User and assistant messages of older exchanges left out. */
  hiddenMessages: number;
}

const DEFAULTS: Required<RecapLimits> = { exchanges: 10, userChars: 300, assistantLines: 3, assistantChars: 200 };

function cutPoints(text: string, max: number): { text: string; cut: boolean } {
  const points = [...text];
  return points.length <= max ? { text, cut: false } : { text: points.slice(0, max).join("").trimEnd(), cut: true };
}

/** User text as the recap shows it: whitespace folded, cut at `max` characters with `…`. */
export function cutUserText(text: string, max: number = DEFAULTS.userChars): string {
  const folded = text.replace(/\s+/gu, " ").trim();
  const { text: shown, cut } = cutPoints(folded, max);
  return cut ? `${shown}…` : shown;
}

/**
 * Assistant text as the recap shows it: blank lines dropped, at most `maxLines` lines,
 * then at most `maxChars` characters; `…` marks a cut.
 */
export function cutAssistantText(text: string, maxLines: number = DEFAULTS.assistantLines, maxChars: number = DEFAULTS.assistantChars): string {
  const lines = text
    .split(/\r?\n/u)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
  let cut = lines.length > maxLines;
  const kept = lines.slice(0, maxLines).join("\n");
  const chars = cutPoints(kept, maxChars);
  cut ||= chars.cut;
  return cut ? `${chars.text}…` : chars.text;
}

/**
 * Tool calls collapsed to one line: the count and the distinct names in call order, e.g.
 * `[3 tool calls: terminal, web_search]` or `[1 tool call: terminal]` (the format of
 * `threadline sessions show`).
 */
export function collapseToolCalls(calls: ReadonlyArray<Pick<ToolCall, "function">>): string {
  return summarizeToolCalls(calls.map((call) => call.function?.name ?? "?"));
}

interface Exchange {
  user: string | null;
  /** Who the opening turn is from: the user, or a summary or note no one typed. */
  opener: "user" | "summary" | "note";
  replies: string[];
  toolCalls: ToolCall[];
  /** User and assistant messages in it. */
  messages: number;
}

/** Builds the recap of a transcript (oldest message first; rewound messages already left out). */
export function buildRecap(messages: readonly RecapMessage[], limits: RecapLimits = {}): Recap {
  const l = { ...DEFAULTS, ...limits };
  const exchanges: Exchange[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      const kind = syntheticMessageKind(message);
      const text = messageText(message.content);
      exchanges.push({ user: kind === null ? text : syntheticMessageBody(kind, text), opener: kind ?? "user", replies: [], toolCalls: [], messages: 1 });
    } else if (message.role === "assistant") {
      let current = exchanges.at(-1);
      if (current === undefined) {
        current = { user: null, opener: "user", replies: [], toolCalls: [], messages: 0 };
        exchanges.push(current);
      }
      current.messages += 1;
      const text = messageText(message.content);
      if (text.trim() !== "") current.replies.push(text);
      if (message.toolCalls) current.toolCalls.push(...message.toolCalls);
    }
    // system, developer and tool rows are hidden.
  }
  const shown = exchanges.slice(-Math.max(1, l.exchanges));
  const hiddenMessages = exchanges.slice(0, exchanges.length - shown.length).reduce((sum, e) => sum + e.messages, 0);
  const rows: RecapRow[] = [];
  if (hiddenMessages > 0) {
    rows.push({ kind: "earlier", count: hiddenMessages, text: `... ${hiddenMessages} earlier message${hiddenMessages === 1 ? "" : "s"} ...` });
  }
  for (const exchange of shown) {
    if (exchange.user !== null) rows.push({ kind: exchange.opener, text: cutUserText(exchange.user, l.userChars) || "(empty message)" });
    if (exchange.toolCalls.length > 0) rows.push({ kind: "tools", text: collapseToolCalls(exchange.toolCalls) });
    if (exchange.replies.length > 0) {
      rows.push({ kind: "assistant", text: cutAssistantText(exchange.replies.join("\n"), l.assistantLines, l.assistantChars) });
    }
  }
  return { rows, exchanges: shown.length, hiddenMessages };
}

/** What the panel says about the session. */
export interface RecapSessionInfo {
  id: string;
  title: string | null;
  messageCount: number;
  lastActiveAt: number;
}

/** Options of {@link renderRecapPanel}. */
export interface RecapPanelOptions {
  /** Terminal width (default 80; at least 40 is used). */
  width?: number;
  /** Colour (default off). */
  color?: boolean;
  /** "Now" in epoch seconds, for the relative time. */
  now: number;
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    let rest = [...line];
    if (rest.length === 0) out.push("");
    while (rest.length > 0) {
      if (rest.length <= width) {
        out.push(rest.join(""));
        break;
      }
      let at = rest.lastIndexOf(" ", width);
      if (at <= 0) at = width;
      out.push(rest.slice(0, at).join("").trimEnd());
      rest = rest.slice(at);
      while (rest[0] === " ") rest = rest.slice(1);
    }
  }
  return out;
}

/**
 * The recap panel: a header naming the session, the rows (long lines wrapped under
 * their label), and a footer with the message count and last activity.
 */
export function renderRecapPanel(recap: Recap, session: RecapSessionInfo, options: RecapPanelOptions): string {
  const s = styles(options.color ?? false);
  const width = Math.max(40, options.width ?? 80);
  const bar = s.dim("│");
  const name = session.title === null ? session.id : `${session.title} (${session.id})`;
  const lines: string[] = [`${s.dim("╭─")} ${s.bold("Previous conversation")} ${s.dim("·")} ${name}`];
  const labelled = (label: string, text: string, paint: (t: string) => string): void => {
    const indent = " ".repeat([...label].length + 1);
    wrap(text, width - 3 - indent.length).forEach((part, i) => {
      lines.push(`${bar} ${i === 0 ? `${paint(label)} ` : indent}${part}`);
    });
  };
  if (recap.rows.length === 0) lines.push(`${bar} ${s.dim("(no messages yet)")}`);
  recap.rows.forEach((row, i) => {
    switch (row.kind) {
      case "earlier":
        lines.push(`${bar} ${s.dim(row.text)}`);
        break;
      case "user":
        if (i > 0) lines.push(bar);
        labelled("You:", row.text, (t) => s.bold(s.cyan(t)));
        break;
      case "summary":
        if (i > 0) lines.push(bar);
        labelled("Summary:", row.text, (t) => s.bold(s.yellow(t)));
        break;
      case "note":
        if (i > 0) lines.push(bar);
        labelled("System note:", row.text, (t) => s.bold(s.yellow(t)));
        break;
      case "tools":
        for (const part of wrap(row.text, width - 3)) lines.push(`${bar} ${s.dim(part)}`);
        break;
      case "assistant":
        labelled("Assistant:", row.text, (t) => s.bold(s.green(t)));
        break;
    }
  });
  const count = `${session.messageCount} message${session.messageCount === 1 ? "" : "s"}`;
  lines.push(`${s.dim("╰─")} ${s.dim(`${count} · last active ${relativeTime(session.lastActiveAt, options.now)}`)}`);
  return `${lines.join("\n")}\n`;
}

/** The one-line resume notice of `display.resumeDisplay: minimal`. */
export function recapOneLiner(session: RecapSessionInfo, now: number): string {
  const name = session.title === null ? "" : ` "${session.title}"`;
  const count = `${session.messageCount} message${session.messageCount === 1 ? "" : "s"}`;
  return `Resumed session ${session.id}${name} (${count}, last active ${relativeTime(session.lastActiveAt, now)}).`;
}
