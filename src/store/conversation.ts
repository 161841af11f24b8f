/**
 * Stored messages in OpenAI chat-completions shape (shared by every backend).
 *
 * @module
 */
import type { ConversationMessage, Message } from "./contract.js";

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
