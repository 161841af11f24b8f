/**
 * Stored messages in OpenAI chat-completions shape (shared by every backend).
 *
 * @module
 */
import type { ConversationMessage, Message, SessionDB } from "./contract.js";

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
  options: { includeSystemPrompt?: boolean } = {},
): Promise<ConversationMessage[]> {
  const messages = (await db.getMessages(sessionId)).map(toConversationMessage);
  if (options.includeSystemPrompt) {
    const session = await db.getSession(sessionId);
    if (session?.systemPrompt) return [{ role: "system", content: session.systemPrompt }, ...messages];
  }
  return messages;
}
