/**
 * Stored messages in OpenAI chat-completions shape (shared by every backend).
 *
 * @module
 */
import type { ConversationMessage, ConversationOptions, Message, SessionDB } from "./contract.js";

/** A message in OpenAI chat shape. */
export function toConversationMessage(message: Message): ConversationMessage {
  const out: ConversationMessage = { role: message.role, content: message.content };
  if (message.toolCalls) out.tool_calls = message.toolCalls;
  if (message.toolCallId) out.tool_call_id = message.toolCallId;
  if (message.role === "tool" && message.toolName) out.name = message.toolName;
  if (message.reasoning) out.reasoning = message.reasoning;
  if (message.reasoningDetails !== null && message.reasoningDetails !== undefined) {
    out.reasoning_details = message.reasoningDetails;
  }
  return out;
}

/** A session's visible transcript in OpenAI chat shape, its system prompt first when asked for. */
export async function conversationOf(
  db: Pick<SessionDB, "getMessages" | "getSession">,
  sessionId: string,
  options: ConversationOptions = {},
): Promise<ConversationMessage[]> {
  const window = options.lastMessages === undefined ? {} : { lastMessages: options.lastMessages };
  let messages = (await db.getMessages(sessionId, window)).map(toConversationMessage);
  if (options.lastMessages !== undefined) messages = startAtUserTurn(messages);
  if (options.includeSystemPrompt) {
    const session = await db.getSession(sessionId);
    if (session?.systemPrompt) return [{ role: "system", content: session.systemPrompt }, ...messages];
  }
  return messages;
}

/** Drops the head of a cut window up to its first user message (or, without one, its leading tool results). */
function startAtUserTurn(messages: ConversationMessage[]): ConversationMessage[] {
  const firstUser = messages.findIndex((m) => m.role === "user");
  if (firstUser > 0) return messages.slice(firstUser);
  if (firstUser === 0) return messages;
  let start = 0;
  while (start < messages.length && messages[start]!.role === "tool") start += 1;
  return messages.slice(start);
}
