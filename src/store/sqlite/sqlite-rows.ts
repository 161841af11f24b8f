/**
 * Row shapes of the SQLite schema and their mapping to contract records.
 *
 * @module
 */
import type { ContentPart, Message, MessageContent, MessageRole, ToolCall } from "../contract.js";
import type { ExportedMessage } from "../record-format.js";

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

/** The columns {@link toExportedMessage} reads, in its order. */
export const EXPORTED_MESSAGE_COLUMNS =
  "role, content, content_parts, tool_calls, tool_call_id, tool_name, token_count, finish_reason, reasoning, " +
  "reasoning_details, platform_message_id, timestamp, rewound_at";

/**
 * A row read as a tuple of {@link EXPORTED_MESSAGE_COLUMNS} as a message of an export record: what
 * {@link toMessage} gives without `id` and `sessionId` (same keys in the same order), with no row object.
 */
export function toExportedMessage(t: unknown[]): ExportedMessage {
  const content = t[1] as string | null;
  const toolCalls = t[3] as string | null;
  const reasoningDetails = t[9] as string | null;
  return {
    role: t[0] as MessageRole,
    content: content === null ? null : t[2] ? (JSON.parse(content) as ContentPart[]) : content,
    toolCalls: toolCalls === null ? null : (JSON.parse(toolCalls) as ToolCall[]),
    toolCallId: t[4] as string | null,
    toolName: t[5] as string | null,
    tokenCount: t[6] as number | null,
    finishReason: t[7] as string | null,
    reasoning: t[8] as string | null,
    reasoningDetails: reasoningDetails === null ? null : (JSON.parse(reasoningDetails) as unknown),
    platformMessageId: t[10] as string | null,
    timestamp: t[11] as number,
    rewoundAt: t[12] as number | null,
  };
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
