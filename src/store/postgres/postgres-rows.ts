/**
 * Row shapes of the PostgreSQL schema, their mapping to contract records, and the
 * NUL escape: PostgreSQL `text` cannot hold U+0000, so a free-text value that
 * contains one (or that starts with the escape mark U+0001) is stored as
 * U+0001 + its JSON string form, and decoded on read. Every other value is stored as is.
 *
 * @module
 */
import type { ContentPart, Message, MessageContent, MessageRole, Session, SessionSummary, SessionUsage, ToolCall } from "../contract.js";

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

/** A `sessions` row. */
export interface SessionRow {
  id: string;
  source: string;
  user_id: string | null;
  model: string | null;
  model_config: string | null;
  system_prompt: string | null;
  parent_session_id: string | null;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  title: string | null;
  title_base: string | null;
  title_n: number | null;
  session_key: string | null;
  chat_id: string | null;
  chat_type: string | null;
  thread_id: string | null;
  message_count: number;
  tool_call_count: number;
  last_message_at: number | null;
  last_active_at: number;
  preview: string | null;
  chain_started_at: number;
  list_hidden: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  api_calls: number;
  estimated_cost_usd: number;
  actual_cost_usd: number | null;
  billing_provider: string | null;
  billing_mode: string | null;
  cost_status: string | null;
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

/** Usage totals of a session row. */
export function toUsage(row: SessionRow): SessionUsage {
  return {
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    reasoningTokens: row.reasoning_tokens,
    apiCalls: row.api_calls,
    estimatedCostUsd: row.estimated_cost_usd,
    actualCostUsd: row.actual_cost_usd,
    billingProvider: decodeText(row.billing_provider),
    billingMode: decodeText(row.billing_mode),
    costStatus: decodeText(row.cost_status),
  };
}

/** A session row as a contract {@link Session}. */
export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    source: row.source,
    userId: decodeText(row.user_id),
    model: decodeText(row.model),
    modelConfig: row.model_config === null ? null : (JSON.parse(row.model_config) as Record<string, unknown>),
    systemPrompt: decodeText(row.system_prompt),
    parentSessionId: row.parent_session_id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    title: row.title,
    sessionKey: decodeText(row.session_key),
    chatId: decodeText(row.chat_id),
    chatType: decodeText(row.chat_type),
    threadId: decodeText(row.thread_id),
    messageCount: row.message_count,
    toolCallCount: row.tool_call_count,
    lastActiveAt: row.last_active_at,
    preview: decodeText(row.preview),
    usage: toUsage(row),
  };
}

/** Columns a listing needs. */
export const SUMMARY_COLUMNS =
  "id, source, title, preview, model, started_at, chain_started_at, last_active_at, ended_at, end_reason, message_count, parent_session_id";

/** A listing row. */
export type SummaryRow = Pick<
  SessionRow,
  | "id"
  | "source"
  | "title"
  | "preview"
  | "model"
  | "started_at"
  | "chain_started_at"
  | "last_active_at"
  | "ended_at"
  | "end_reason"
  | "message_count"
  | "parent_session_id"
>;

/** A listing row as a {@link SessionSummary}; `chainStart` shows the chain root's start time. */
export function toSummary(row: SummaryRow, chainStart: boolean): SessionSummary {
  return {
    id: row.id,
    source: row.source,
    title: row.title,
    preview: decodeText(row.preview),
    model: decodeText(row.model),
    startedAt: chainStart ? row.chain_started_at : row.started_at,
    lastActiveAt: row.last_active_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    messageCount: row.message_count,
    parentSessionId: row.parent_session_id,
  };
}

/** The stored content of a row, parsed back to a string or parts. */
export function rowContent(row: Pick<MessageRow, "content" | "content_kind">): MessageContent {
  if (row.content === null) return null;
  return row.content_kind === 1 ? (JSON.parse(row.content) as ContentPart[]) : decodeText(row.content);
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
