/**
 * Sender prefixes of shared sessions. In a session several people share (a thread, a group
 * without per-user sessions), the context prompt tells the model that messages are prefixed
 * with `[sender name]`; the gateway stores each user message's sender label with it
 * ({@link Message.senderName}, in every session) and, in a shared session, adds the prefixes
 * to the messages the model is given (the whole history window, not only the turn's), never
 * to the stored text, which stays each person's own words.
 *
 * @module
 */
import type { ContentPart, ConversationMessage, Message } from "../store/index.js";
import { redactUserId, sanitizeUntrustedText } from "./session-context.js";
import type { SessionSource } from "./session-source.js";

/** Longest sender label, in code points. */
const MAX_LABEL = 60;

/**
 * The label a sender's messages carry: the display name, else the user id (hashed like the
 * context prompt's ids when `redactPii`), else `unknown`. Control characters and brackets are
 * removed, so a name can neither break the line nor fake a second prefix. `null` for a source
 * that names no user at all: a message the gateway wrote itself (a handoff's note), which
 * nobody said.
 *
 * @example
 * senderLabel({ platform: "slack", chatType: "thread", userName: "Carol" }); // "Carol"
 * senderLabel({ platform: "telegram", chatType: "group", userId: "42" }, { redactPii: true }); // "user_73475cb40a56"
 * senderLabel({ platform: "slack", chatType: "channel", chatId: "C1" }); // null
 */
export function senderLabel(source: SessionSource, { redactPii = false }: { redactPii?: boolean } = {}): string | null {
  if (!source.userName && !source.userId && !source.userIdAlt) return null;
  const clean = (value: string | null | undefined): string => {
    if (typeof value !== "string") return "";
    return sanitizeUntrustedText(value.replace(/[[\]]/gu, " "), MAX_LABEL);
  };
  const name = clean(source.userName);
  if (name !== "") return name;
  const id = source.userId || source.userIdAlt;
  if (id) return clean(redactPii ? redactUserId(source.platform, id) : id) || "unknown";
  return "unknown";
}

/** A message content with `[label] ` in front of its text (parts: the first text part, else a new one first). */
export function prefixContent(content: ConversationMessage["content"], label: string): ConversationMessage["content"] {
  const prefix = `[${label}]`;
  if (content === null || typeof content === "string") return content === null || content === "" ? prefix : `${prefix} ${content}`;
  const at = content.findIndex((part) => part.type === "text" && typeof part.text === "string");
  if (at < 0) return [{ type: "text", text: prefix }, ...content];
  return content.map((part, i): ContentPart => (i === at ? { ...part, text: `${prefix} ${part.text ?? ""}` } : part));
}

/**
 * The history as the model is given it in a shared session: each user message whose sender is
 * known (`senders`, one per message of `history`, in its order: the stored
 * {@link Message.senderName}) gets `[sender] ` in front of its text. A `null` sender leaves its
 * message as it is: a `/compress` summary, a handoff's note and messages stored before senders
 * were, which nobody in particular said (or nobody knows who did); so are messages that are not
 * the user's. The input array is left as it is.
 *
 * @example
 * withSenderPrefixes([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }], ["Carol", null]);
 * // [{ role: "user", content: "[Carol] hi" }, { role: "assistant", content: "hello" }]
 */
export function withSenderPrefixes(history: readonly ConversationMessage[], senders: readonly (string | null)[]): ConversationMessage[] {
  return history.map((message, i) => {
    const sender = senders[i] ?? null;
    return message.role === "user" && sender !== null && sender !== "" ? { ...message, content: prefixContent(message.content, sender) } : message;
  });
}
