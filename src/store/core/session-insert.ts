/**
 * Inserting a session row (shared by createSession, the routing write and import).
 *
 * @module
 */
import type { UsageUpdate } from "../contract.js";
import { parseLineageTitle } from "../titles.js";
import { run, type Steps } from "./steps.js";

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

const INSERT_SESSION = `INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id,
    started_at, ended_at, end_reason, title, title_base, title_n, session_key, chat_id, chat_type, thread_id,
    last_active_at, chain_started_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, api_calls, estimated_cost_usd, actual_cost_usd, billing_provider, billing_mode, cost_status)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * Inserts a session row; `encode` is the dialect's free-text encoding. Callers check the id,
 * parent and title first, and refresh the chain after.
 */
export function* insertSession(row: SessionInsert, encode: (value: string | null) => string | null): Steps<void> {
  const lineage = row.title === null ? null : parseLineageTitle(row.title);
  const u = row.usage;
  yield* run(INSERT_SESSION, [
    row.id,
    row.source,
    encode(row.userId),
    encode(row.model),
    row.modelConfig,
    encode(row.systemPrompt),
    row.parentId,
    row.startedAt,
    row.endedAt,
    row.endReason,
    row.title,
    lineage?.base ?? null,
    lineage?.n ?? null,
    encode(row.sessionKey),
    encode(row.chatId),
    encode(row.chatType),
    encode(row.threadId),
    row.endedAt ?? row.startedAt,
    row.startedAt,
    u.inputTokens ?? 0,
    u.outputTokens ?? 0,
    u.cacheReadTokens ?? 0,
    u.cacheWriteTokens ?? 0,
    u.reasoningTokens ?? 0,
    u.apiCalls ?? 0,
    u.estimatedCostUsd ?? 0,
    u.actualCostUsd ?? null,
    encode(u.billingProvider ?? null),
    encode(u.billingMode ?? null),
    encode(u.costStatus ?? null),
  ]);
}
