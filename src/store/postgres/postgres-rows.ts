/**
 * Row shapes of the PostgreSQL schema, their mapping to contract records, and the
 * NUL escape: PostgreSQL `text` cannot hold U+0000, so a free-text value that
 * contains one (or that starts with the escape mark U+0001) is stored as
 * U+0001 + its JSON string form, and decoded on read. Every other value is stored as is.
 *
 * @module
 */
import type { ContentPart, Message, MessageContent, MessageRole, Session, SessionSummary, SessionUsage, ToolCall } from "../contract.js";
import type { ExportedMessage } from "../record-format.js";
import { toSession as sharedToSession, toSummary as sharedToSummary, toUsage as sharedToUsage, type SessionRow, type SummaryRow } from "../session-rows.js";

export { SUMMARY_COLUMNS, type SessionRow, type SummaryRow } from "../session-rows.js";

const ESCAPE_MARK = "\u0001";

/** A free-text value as stored (see the module doc). */
export function encodeText(value: string): string;
export function encodeText(value: string | null): string | null;
export function encodeText(value: string | null): string | null {
  if (value === null) return null;
  if (value.includes("\u0000") || value.startsWith(ESCAPE_MARK)) return ESCAPE_MARK + JSON.stringify(value);
  return value;
}

/** The value of a stored free-text column. */
export function decodeText(value: string): string;
export function decodeText(value: string | null): string | null;
export function decodeText(value: string | null): string | null {
  if (value === null || !value.startsWith(ESCAPE_MARK)) return value;
  return JSON.parse(value.slice(1)) as string;
}

/** A `messages` row (without the search vector). */
export interface MessageRow {
  id: number;
  session_id: string;
  role: string;
  content: string | null;
  /** 0: text; 1: JSON content parts. */
  content_kind: number;
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

/** Every message column except the search vector. */
export const MESSAGE_COLUMNS =
  "id, session_id, role, content, content_kind, tool_calls, tool_call_count, tool_call_id, tool_name, token_count, " +
  "finish_reason, reasoning, reasoning_details, platform_message_id, timestamp, rewound_at, rewind_batch";

/** A session row as a contract {@link Session}, NUL escapes decoded. */
export function toSession(row: SessionRow): Session {
  return sharedToSession(row, decodeText);
}

/** A listing row as a {@link SessionSummary}, NUL escapes decoded. */
export function toSummary(row: SummaryRow, chainStart: boolean): SessionSummary {
  return sharedToSummary(row, chainStart, decodeText);
}

/** Usage totals of a session row, NUL escapes decoded. */
export function toUsage(row: SessionRow): SessionUsage {
  return sharedToUsage(row, decodeText);
}

/** The stored content of a row, parsed back to a string or parts. */
export function rowContent(row: Pick<MessageRow, "content" | "content_kind">): MessageContent {
  if (row.content === null) return null;
  return row.content_kind === 1 ? (JSON.parse(row.content) as ContentPart[]) : decodeText(row.content);
}

/** The columns {@link toExportedMessage} reads, in its order. */
export const EXPORTED_MESSAGE_COLUMNS =
  "role, content, content_kind, tool_calls, tool_call_id, tool_name, token_count, finish_reason, reasoning, " +
  "reasoning_details, platform_message_id, timestamp, rewound_at";

/**
 * A row read as a tuple of {@link EXPORTED_MESSAGE_COLUMNS} as a message of an export record: what
 * {@link toMessage} gives without `id` and `sessionId` (same keys in the same order), NUL escapes decoded.
 */
export function toExportedMessage(t: unknown[]): ExportedMessage {
  const content = t[1] as string | null;
  const toolCalls = t[3] as string | null;
  const reasoningDetails = t[9] as string | null;
  return {
    role: t[0] as MessageRole,
    content: content === null ? null : t[2] === 1 ? (JSON.parse(content) as ContentPart[]) : decodeText(content),
    toolCalls: toolCalls === null ? null : (JSON.parse(toolCalls) as ToolCall[]),
    toolCallId: decodeText(t[4] as string | null),
    toolName: decodeText(t[5] as string | null),
    tokenCount: t[6] as number | null,
    finishReason: decodeText(t[7] as string | null),
    reasoning: decodeText(t[8] as string | null),
    reasoningDetails: reasoningDetails === null ? null : (JSON.parse(reasoningDetails) as unknown),
    platformMessageId: decodeText(t[10] as string | null),
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
    toolCallId: decodeText(row.tool_call_id),
    toolName: decodeText(row.tool_name),
    tokenCount: row.token_count,
    finishReason: decodeText(row.finish_reason),
    reasoning: decodeText(row.reasoning),
    reasoningDetails: row.reasoning_details === null ? null : (JSON.parse(row.reasoning_details) as unknown),
    platformMessageId: decodeText(row.platform_message_id),
    timestamp: row.timestamp,
    rewoundAt: row.rewound_at,
  };
}
