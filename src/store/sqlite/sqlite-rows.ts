/**
 * Row shapes of the SQLite schema and their mapping to contract records.
 *
 * @module
 */
import type {
  ContentPart,
  Message,
  MessageContent,
  MessageRole,
  Session,
  SessionSummary,
  SessionUsage,
  ToolCall,
} from "../contract.js";

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
    billingProvider: row.billing_provider,
    billingMode: row.billing_mode,
    costStatus: row.cost_status,
  };
}

/** A session row as a contract {@link Session}. */
export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    source: row.source,
    userId: row.user_id,
    model: row.model,
    modelConfig: row.model_config === null ? null : (JSON.parse(row.model_config) as Record<string, unknown>),
    systemPrompt: row.system_prompt,
    parentSessionId: row.parent_session_id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    title: row.title,
    sessionKey: row.session_key,
    chatId: row.chat_id,
    chatType: row.chat_type,
    threadId: row.thread_id,
    messageCount: row.message_count,
    toolCallCount: row.tool_call_count,
    lastActiveAt: row.last_active_at,
    preview: row.preview,
    usage: toUsage(row),
  };
}

/** Columns a listing needs (`sort_started` is the start time the listing shows). */
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
    preview: row.preview,
    model: row.model,
    startedAt: chainStart ? row.chain_started_at : row.started_at,
    lastActiveAt: row.last_active_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    messageCount: row.message_count,
    parentSessionId: row.parent_session_id,
  };
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

export { toConversationMessage } from "../conversation.js";
