/**
 * The `sessions` row shape both backends store (same column names), and its mapping
 * to contract records. `decode` undoes a backend's encoding of free text (PostgreSQL
 * escapes NUL characters); SQLite stores text as is.
 *
 * @module
 */
import type { Session, SessionSummary, SessionUsage } from "./contract.js";

/** Undoes a backend's storage encoding of a free-text value. */
export type TextDecoder = (value: string | null) => string | null;

const asIs: TextDecoder = (value) => value;

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

/** Usage totals of a session row. */
export function toUsage(row: UsageRow, decode: TextDecoder = asIs): SessionUsage {
  return {
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    reasoningTokens: row.reasoning_tokens,
    apiCalls: row.api_calls,
    estimatedCostUsd: row.estimated_cost_usd,
    actualCostUsd: row.actual_cost_usd,
    billingProvider: decode(row.billing_provider),
    billingMode: decode(row.billing_mode),
    costStatus: decode(row.cost_status),
  };
}

/** A session row as a contract {@link Session}. */
export function toSession(row: SessionRow, decode: TextDecoder = asIs): Session {
  return {
    id: row.id,
    source: row.source,
    userId: decode(row.user_id),
    model: decode(row.model),
    modelConfig: row.model_config === null ? null : (JSON.parse(row.model_config) as Record<string, unknown>),
    systemPrompt: decode(row.system_prompt),
    parentSessionId: row.parent_session_id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    title: row.title,
    sessionKey: decode(row.session_key),
    chatId: decode(row.chat_id),
    chatType: decode(row.chat_type),
    threadId: decode(row.thread_id),
    messageCount: row.message_count,
    toolCallCount: row.tool_call_count,
    lastActiveAt: row.last_active_at,
    preview: decode(row.preview),
    usage: toUsage(row, decode),
  };
}

/** Columns a listing needs. */
export const SUMMARY_COLUMNS =
  "id, source, title, preview, model, started_at, chain_started_at, last_active_at, ended_at, end_reason, message_count, parent_session_id, " +
  "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, api_calls, estimated_cost_usd, actual_cost_usd, " +
  "billing_provider, billing_mode, cost_status";

/** The usage columns of a session row (kept on every write). */
export type UsageRow = Pick<
  SessionRow,
  | "input_tokens"
  | "output_tokens"
  | "cache_read_tokens"
  | "cache_write_tokens"
  | "reasoning_tokens"
  | "api_calls"
  | "estimated_cost_usd"
  | "actual_cost_usd"
  | "billing_provider"
  | "billing_mode"
  | "cost_status"
>;

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
> &
  UsageRow;

/** A listing row as a {@link SessionSummary}; `chainStart` shows the chain root's start time. */
export function toSummary(row: SummaryRow, chainStart: boolean, decode: TextDecoder = asIs): SessionSummary {
  return {
    id: row.id,
    source: row.source,
    title: row.title,
    preview: decode(row.preview),
    model: decode(row.model),
    startedAt: chainStart ? row.chain_started_at : row.started_at,
    lastActiveAt: row.last_active_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    messageCount: row.message_count,
    parentSessionId: row.parent_session_id,
    usage: toUsage(row, decode),
  };
}
