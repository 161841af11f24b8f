/**
 * Message shaping for a turn: inbound platform messages → stored user messages, the
 * repair that keeps a transcript valid for the next model call (every tool call has a
 * result), and the reply text of a turn.
 *
 * @module
 */
import type { ContentPart, ConversationMessage, NewMessage } from "../store/index.js";
import { refusalReason } from "../media/index.js";
import type { InboundMessage } from "./adapter.js";

/** The content of a synthetic result for a tool call whose turn was interrupted. */
export const INTERRUPTED_TOOL_RESULT = "[interrupted: this tool call did not finish; do not assume it ran]";

/**
 * One stored user message per inbound message. A message with only text stays a plain string;
 * one with media gets content parts, in order: its text (when not empty), the transcript of
 * each transcribed audio, an `attachment` part per stored attachment, a `[photo not kept: …]`
 * note per refused one, and a `[image: type, name: caption]` note per attachment that could
 * not be read (its platform has no `fetchMedia`). Never a URL or a platform file id: either
 * may carry a token.
 */
export function userMessagesOf(messages: InboundMessage[], at: number): NewMessage[] {
  return messages.map((message) => {
    const media = message.media ?? [];
    let content: string | ContentPart[] = message.text;
    if (media.length > 0) {
      const parts: ContentPart[] = [];
      if (message.text) parts.push({ type: "text", text: message.text });
      for (const item of media) {
        const transcript = item.stored ? (item.transcript ?? "").trim() : "";
        if (transcript !== "") parts.push({ type: "text", text: transcript });
      }
      for (const item of media) if (item.stored) parts.push({ type: "attachment", attachment: item.stored });
      for (const item of media) if (!item.stored && item.refused) parts.push({ type: "text", text: `[${item.kind} not kept: ${refusalReason(item.refused)}]` });
      for (const item of media) {
        if (item.stored || item.refused) continue;
        const details = [item.fileName, item.mimeType].filter(Boolean).join(", ");
        parts.push({ type: "text", text: `[${item.kind}${details ? `: ${details}` : ""}${item.caption ? `: ${item.caption}` : ""}]` });
      }
      content = parts;
    }
    return { role: "user", content, platformMessageId: message.messageId ?? null, timestamp: at };
  });
}

/**
 * Adds a synthetic result after every tool call that has none among `messages`, so
 * the stored turn never leaves a call without its result.
 */
export function closeOpenToolCalls(messages: NewMessage[], answered: Set<string> = new Set()): NewMessage[] {
  const out: NewMessage[] = [];
  const seen = new Set(answered);
  for (const message of messages) if (message.role === "tool" && message.toolCallId) seen.add(message.toolCallId);
  for (const message of messages) {
    out.push(message);
    if (message.role !== "assistant" || !message.toolCalls) continue;
    for (const call of message.toolCalls) {
      if (seen.has(call.id)) continue;
      seen.add(call.id);
      out.push({ role: "tool", toolCallId: call.id, toolName: call.function.name, content: INTERRUPTED_TOOL_RESULT });
    }
  }
  return out;
}

/** Synthetic results for the tool calls of a stored conversation that have none (repairs a transcript cut by a crash). */
export function missingToolResults(conversation: ConversationMessage[]): NewMessage[] {
  const answered = new Set<string>();
  for (const m of conversation) if (m.role === "tool" && m.tool_call_id) answered.add(m.tool_call_id);
  const out: NewMessage[] = [];
  for (const m of conversation) {
    for (const call of m.tool_calls ?? []) {
      if (answered.has(call.id)) continue;
      answered.add(call.id);
      out.push({ role: "tool", toolCallId: call.id, toolName: call.function.name, content: INTERRUPTED_TOOL_RESULT });
    }
  }
  return out;
}

/** The text of a message content. */
export function textOf(content: NewMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

/** The reply of a turn: the text of its last assistant message with text. */
export function replyTextOf(messages: NewMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "assistant") {
      const text = textOf(message.content);
      if (text.trim() !== "") return text;
    }
  }
  return "";
}

/** The start of the text of a failed-turn record. */
export const FAILED_TURN_PREFIX = "[No reply: the model could not answer this message";

/**
 * The message stored for a turn whose model call failed: an assistant message (finish
 * reason `error`) saying so, so the failure stays in the transcript and the next model
 * call sees the unanswered user message once, followed by the note that it failed.
 */
export function failedTurnRecord(reason: string, at: number): NewMessage {
  const short = reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
  return { role: "assistant", content: `${FAILED_TURN_PREFIX} (${short}).]`, finishReason: "error", timestamp: at };
}

/** Whether a stored or conversation message is a failed-turn record (see {@link failedTurnRecord}). */
export function isFailedTurnRecord(message: { role: string; content?: NewMessage["content"]; finishReason?: string | null }): boolean {
  return message.role === "assistant" && textOf(message.content).startsWith(FAILED_TURN_PREFIX);
}
