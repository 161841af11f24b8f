/**
 * Inserting a session row (shared by createSession and import).
 *
 * @module
 */
import type { UsageUpdate } from "../contract.js";
import { parseLineageTitle } from "../titles.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** Every field a new session row takes; counters and chain columns start from these. */
export interface SessionInsert {
  id: string;
  source: string;
  userId: string | null;
  model: string | null;
  /** Already serialised JSON, or null. */
  modelConfig: string | null;
  systemPrompt: string | null;
  parentId: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  /** Already sanitised. */
  title: string | null;
  sessionKey: string | null;
  chatId: string | null;
  chatType: string | null;
  threadId: string | null;
  usage: UsageUpdate;
}

/** Inserts a session row. Callers check the id, parent and title first, and refresh the chain after. */
export function insertSession(conn: SqliteConnection, row: SessionInsert): void {
  const lineage = row.title === null ? null : parseLineageTitle(row.title);
  const u = row.usage;
  conn
    .stmt(
      `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
         ended_at, end_reason, title, title_base, title_n, session_key, chat_id, chat_type, thread_id,
         last_active_at, chain_started_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
         reasoning_tokens, api_calls, estimated_cost_usd, actual_cost_usd, billing_provider, billing_mode, cost_status)
       VALUES (@id, @source, @userId, @model, @modelConfig, @systemPrompt, @parentId, @startedAt,
         @endedAt, @endReason, @title, @titleBase, @titleN, @sessionKey, @chatId, @chatType, @threadId,
         coalesce(@endedAt, @startedAt), @startedAt, @inputTokens, @outputTokens, @cacheReadTokens, @cacheWriteTokens,
         @reasoningTokens, @apiCalls, @estimatedCostUsd, @actualCostUsd, @billingProvider, @billingMode, @costStatus)`,
    )
    .run({
      id: row.id,
      source: row.source,
      userId: row.userId,
      model: row.model,
      modelConfig: row.modelConfig,
      systemPrompt: row.systemPrompt,
      parentId: row.parentId,
      startedAt: row.startedAt,
      endedAt: row.endedAt,
      endReason: row.endReason,
      title: row.title,
      titleBase: lineage?.base ?? null,
      titleN: lineage?.n ?? null,
      sessionKey: row.sessionKey,
      chatId: row.chatId,
      chatType: row.chatType,
      threadId: row.threadId,
      inputTokens: u.inputTokens ?? 0,
      outputTokens: u.outputTokens ?? 0,
      cacheReadTokens: u.cacheReadTokens ?? 0,
      cacheWriteTokens: u.cacheWriteTokens ?? 0,
      reasoningTokens: u.reasoningTokens ?? 0,
      apiCalls: u.apiCalls ?? 0,
      estimatedCostUsd: u.estimatedCostUsd ?? 0,
      actualCostUsd: u.actualCostUsd ?? null,
      billingProvider: u.billingProvider ?? null,
      billingMode: u.billingMode ?? null,
      costStatus: u.costStatus ?? null,
    });
}
