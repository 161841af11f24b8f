/**
 * Row shapes of the SQLite schema and their mapping to contract records.
 *
 * @module
 */
import type { ContentPart, Message, MessageContent, MessageRole, ToolCall } from "../contract.js";

export {
  SUMMARY_COLUMNS,
  toSession,
  toSummary,
  toUsage,
  type SessionRow,
  type SummaryRow,
} from "../session-rows.js";

/** A `messages` row. */
export interface MessageRow {
  id: number;
  session_id: string;
  role: string;
  content: string | null;
  content_parts: number;
  tool_calls: string | null;
  tool_call_count: number;
  tool_call_id: string | null;
  tool_name: string | null;
  token_count: number | null;
  finish_reason: string | null;
  reasoning: string | null;
  reasoning_details: string | null;
  platform_message_id: string | null;
  timestamp: number;
  rewound_at: number | null;
  rewind_batch: number | null;
}

/** The stored content of a row, parsed back to a string or parts. */
export function rowContent(row: Pick<MessageRow, "content" | "content_parts">): MessageContent {
  if (row.content === null) return null;
  return row.content_parts ? (JSON.parse(row.content) as ContentPart[]) : row.content;
}

/** A message row as a contract {@link Message}. */
export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    sessionId: row.session_id,
    role: row.role as MessageRole,
    content: rowContent(row),
    toolCalls: row.tool_calls === null ? null : (JSON.parse(row.tool_calls) as ToolCall[]),
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    tokenCount: row.token_count,
    finishReason: row.finish_reason,
    reasoning: row.reasoning,
    reasoningDetails: row.reasoning_details === null ? null : (JSON.parse(row.reasoning_details) as unknown),
    platformMessageId: row.platform_message_id,
    timestamp: row.timestamp,
    rewoundAt: row.rewound_at,
  };
}

