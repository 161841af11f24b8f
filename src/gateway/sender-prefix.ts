/**
 * Sender prefixes of shared sessions. In a session several people share (a thread, a group
 * without per-user sessions), the context prompt tells the model that messages are prefixed
 * with `[sender name]`; the gateway adds those prefixes to the messages the model is given,
 * never to the stored text, which stays each person's own words.
 *
 * @module
 */
import type { ContentPart, ConversationMessage } from "../store/index.js";
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
 * The history as the model is given it in a shared session: the user messages at its end
 * (the current turn's) prefixed with `labels`, one per message, oldest first, the last label
 * for the last message. A `null` label leaves its message as it is, and so do user messages
 * before those the labels cover (such as a `/compress` summary the turn's message follows):
 * nobody is named for what they did not say. Earlier messages and the input array are left
 * as they are.
 *
 * @example
 * withSenderPrefixes([{ role: "user", content: "hi" }], ["Carol"]); // [{ role: "user", content: "[Carol] hi" }]
 */
export function withSenderPrefixes(history: readonly ConversationMessage[], labels: readonly (string | null)[]): ConversationMessage[] {
  const out = [...history];
  let at = labels.length - 1;
  for (let i = out.length - 1; i >= 0 && at >= 0 && out[i]!.role === "user"; i--, at--) {
    const label = labels[at] ?? null;
    if (label !== null) out[i] = { ...out[i]!, content: prefixContent(out[i]!.content, label) };
  }
  return out;
}
