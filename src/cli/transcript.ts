/**
 * A session's transcript as text for the terminal (`threadline sessions show`).
 *
 * By default tool traffic is collapsed: an assistant message's tool calls, the tool results
 * that answer them and any further tool-only assistant messages become one line,
 * `[3 tool calls: terminal, web_search]`, and reasoning is left out. `full` shows
 * everything: the system prompt, each call with its arguments, each tool result, reasoning.
 *
 * A compression summary and a handoff's note to the model are stored as user turns (the model
 * reads them as such) but no user typed them: they are headed `summary of the earlier
 * conversation (<session>)` and `system note`, their text without the brackets the model
 * reads (`full` shows the stored text).
 *
 * Attachments are named in place (`[image: photo.jpg, image/jpeg, 195.3 KiB]`, `[voice note,
 * audio/ogg, 12.0 KiB]`), their names and captions stripped of escape sequences.
 *
 * @module
 */
import { SUMMARY_MESSAGE_PREFIX, syntheticMessageBody, syntheticMessageKind, type Message } from "../store/index.js";
import { styles } from "./cli-output.js";
import { formatLocalDateTime } from "./local-time.js";
import { messageText } from "./message-text.js";
import { summarizeToolCalls, toolCallNames } from "./tool-call-summary.js";

/** Options of {@link renderTranscript}. */
export interface TranscriptOptions {
  /** Show every tool call, tool result and reasoning text (default false: collapsed). */
  full?: boolean;
  /** ANSI colours (default false). */
  color?: boolean;
  /** Shown first when `full` is set. */
  systemPrompt?: string | null;
  /** Blobs that are not stored: their attachments are labelled `; bytes not stored`. */
  missingMedia?: ReadonlySet<string>;
}

interface Block {
  heading: string;
  lines: string[];
  /** Names of the collapsed tool calls, or `null` when this block collects none. */
  calls: string[] | null;
}

/**
 * Renders messages (in transcript order) as blocks: a heading `role · YYYY-MM-DD HH:MM`, then
 * the text indented by two spaces; blocks are separated by a blank line. Returns `""` for no
 * messages.
 *
 * @example
 * io.stdout.write(renderTranscript(await db.getMessages(id), { full: false }) + "\n");
 */
export function renderTranscript(
  messages: readonly Message[],
  { full = false, color = false, systemPrompt = null, missingMedia = new Set() }: TranscriptOptions = {},
): string {
  const s = styles(color);
  const roleStyle = (role: string): string => {
    switch (role) {
      case "user":
        return s.bold(s.cyan(role));
      case "assistant":
        return s.bold(s.green(role));
      case "tool":
        return s.bold(s.dim(role));
      default:
        return s.bold(s.yellow(role));
    }
  };
  const heading = (label: string, at: number): string => `${label} ${s.dim(`· ${formatLocalDateTime(at)}`)}`;
  const blocks: Block[] = [];
  let current = null as Block | null;
  const open = (block: Block): Block => {
    blocks.push(block);
    current = block;
    return block;
  };

  if (full && systemPrompt) blocks.push({ heading: roleStyle("system prompt"), lines: textLines(systemPrompt), calls: null });

  for (const message of messages) {
    const text = messageText(message.content, { missingMedia }).replace(/\s+$/u, "");
    const collecting: Block | null = current !== null && current.calls !== null ? current : null;
    if (message.role === "tool") {
      if (full) {
        const what = [message.toolName, message.toolCallId].filter((v) => v !== null && v !== "").join(", ");
        open({ heading: heading(`${roleStyle("tool")}${what ? ` (${what})` : ""}`, message.timestamp), lines: textLines(text), calls: null });
      } else if (collecting === null) {
        // A result whose call is not shown (e.g. the call was rewound): count it as a call.
        open({ heading: heading(roleStyle("tool"), message.timestamp), lines: [], calls: [message.toolName ?? "?"] });
      }
      continue;
    }
    if (message.role === "assistant") {
      const names = toolCallNames(message);
      if (full) {
        const lines = text === "" ? [] : textLines(text);
        if (message.reasoning) lines.unshift(...textLines(message.reasoning).map((l) => s.dim(`(reasoning) ${l}`)));
        for (const call of message.toolCalls ?? []) lines.push(s.dim(`→ ${call.function?.name ?? "?"}(${call.function?.arguments ?? ""})`));
        open({ heading: heading(roleStyle("assistant"), message.timestamp), lines: lines.length > 0 ? lines : [s.dim("(empty)")], calls: null });
        continue;
      }
      if (text === "" && names.length > 0 && collecting !== null) {
        collecting.calls!.push(...names);
        continue;
      }
      open({
        heading: heading(roleStyle("assistant"), message.timestamp),
        lines: text === "" && names.length === 0 ? [s.dim("(empty)")] : text === "" ? [] : textLines(text),
        calls: names.length > 0 ? names : null,
      });
      continue;
    }
    const kind = syntheticMessageKind(message);
    if (kind !== null) {
      const label =
        kind === "note" ? "system note" : `summary of the earlier conversation (${message.platformMessageId!.slice(SUMMARY_MESSAGE_PREFIX.length)})`;
      const body = full ? text : syntheticMessageBody(kind, text);
      open({ heading: heading(s.bold(s.yellow(label)), message.timestamp), lines: body === "" ? [s.dim("(empty)")] : textLines(body), calls: null });
      continue;
    }
    open({ heading: heading(roleStyle(message.role), message.timestamp), lines: text === "" ? [s.dim("(empty)")] : textLines(text), calls: null });
  }

  return blocks
    .map((block) => {
      const lines = block.calls === null ? block.lines : [...block.lines, s.dim(summarizeToolCalls(block.calls))];
      return [block.heading, ...lines.map((l) => (l === "" ? "" : `  ${l}`))].join("\n");
    })
    .join("\n\n");
}

function textLines(text: string): string[] {
  return text.replace(/\r\n?/gu, "\n").split("\n");
}
