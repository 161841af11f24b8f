/**
 * Transcript writes on SQLite, run inside a write transaction: inserting messages
 * with their search-index rows, hiding and restoring rewound rows, and recomputing
 * the per-session counters, preview and last activity.
 *
 * @module
 */
import { attachmentsOf } from "../attachment-input.js";
import type { AttachmentRef } from "../contract.js";
import type { NormalizedMessage } from "../input-validation.js";
import { calledToolNames, tallyTools } from "../insights.js";
import { makePreview } from "../preview.js";
import { syntheticMessageKind } from "../message-origin.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { rowContent, type MessageRow } from "./sqlite-rows.js";

const INSERT_MESSAGE = `
  INSERT INTO messages (session_id, role, content, content_parts, tool_calls, tool_call_count, tool_call_id,
    tool_name, token_count, finish_reason, reasoning, reasoning_details, platform_message_id, timestamp,
    rewound_at, rewind_batch)
  VALUES (@sessionId, @role, @content, @contentParts, @toolCalls, @toolCallCount, @toolCallId, @toolName,
    @tokenCount, @finishReason, @reasoning, @reasoningDetails, @platformMessageId, @timestamp, @rewoundAt, @rewindBatch)`;

/** A message in the column form it is stored in (serialise once, outside the transaction). */
export interface StoredMessage {
  role: string;
  content: string | null;
  contentParts: number;
  toolCalls: string | null;
  toolCallCount: number;
  toolCallId: string | null;
  toolName: string | null;
  tokenCount: number | null;
  finishReason: string | null;
  reasoning: string | null;
  reasoningDetails: string | null;
  platformMessageId: string | null;
  timestamp: number;
  rewoundAt: number | null;
  rewindBatch: number | null;
  /** The preview this message would give its session (user messages only, not summaries or notes). */
  preview: string | null;
  /** Its attachment parts, in order (indexed in `message_attachments` when it is inserted). */
  attachments: AttachmentRef[];
  /** The names its tool calls call, one per call (for the per-session tool tally). */
  toolNames: string[];
}

/** Serialises a validated message for storage. */
export function toStoredMessage(m: NormalizedMessage, rewoundAt: number | null = null): StoredMessage {
  const contentParts = Array.isArray(m.content) ? 1 : 0;
  const content = m.content === null ? null : contentParts ? JSON.stringify(m.content) : (m.content as string);
  const toolCalls = m.toolCalls === null ? null : JSON.stringify(m.toolCalls);
  return {
    role: m.role,
    content,
    contentParts,
    toolCalls,
    toolCallCount: m.toolCalls?.length ?? 0,
    toolCallId: m.toolCallId,
    toolName: m.toolName,
    tokenCount: m.tokenCount,
    finishReason: m.finishReason,
    reasoning: m.reasoning,
    reasoningDetails: m.reasoningDetails === null ? null : JSON.stringify(m.reasoningDetails),
    platformMessageId: m.platformMessageId,
    timestamp: m.timestamp,
    rewoundAt,
    rewindBatch: rewoundAt === null ? null : 0,
    preview: m.role === "user" && syntheticMessageKind(m) === null ? makePreview(m.content) : null,
    attachments: attachmentsOf(m.content),
    toolNames: calledToolNames(m.toolCalls),
  };
}

/**
 * Inserts messages; returns their ids. Does not touch counters. The search index
 * picks them up later (sqlite-search-index.ts), before any search.
 */
export function insertMessages(conn: SqliteConnection, sessionId: string, messages: StoredMessage[]): number[] {
  const insert = conn.stmt(INSERT_MESSAGE);
  return messages.map(({ toolNames: _names, attachments: _attachments, ...m }) => Number(insert.run({ ...m, sessionId }).lastInsertRowid));
}

/**
 * Updates counters, preview and last activity for appended visible messages (cheap,
 * incremental), only on a live session: `false` when the session is missing or has ended (or,
 * with no visible message, when nothing needed counting: the caller checks the session then).
 */
export function bumpSummary(conn: SqliteConnection, sessionId: string, messages: StoredMessage[]): boolean {
  let count = 0;
  let toolCalls = 0;
  let last: number | null = null;
  let preview: string | null = null;
  const tools = new Map<string, number>();
  for (const m of messages) {
    if (m.rewoundAt !== null) continue;
    count += 1;
    toolCalls += m.toolCallCount;
    tallyTools(tools, m.toolNames);
    last = last === null ? m.timestamp : Math.max(last, m.timestamp);
    if (preview === null && m.preview !== null) preview = m.preview;
  }
  if (count === 0) return false;
  const bumped = conn
    .stmt(
      `UPDATE sessions SET
         message_count = message_count + @count,
         tool_call_count = tool_call_count + @toolCalls,
         last_message_at = max(coalesce(last_message_at, @last), @last),
         last_active_at = coalesce(max(max(coalesce(last_message_at, @last), @last), ended_at),
                                   max(coalesce(last_message_at, @last), @last)),
         preview = coalesce(preview, @preview)
       WHERE id = @id AND ended_at IS NULL`,
    )
    .run({ count, toolCalls, last, preview, id: sessionId });
  if (bumped.changes === 0) return false;
  const bump =
    tools.size === 0
      ? null
      : conn.stmt(
          `INSERT INTO session_tool_calls (session_id, tool_name, calls) VALUES (?, ?, ?)
       ON CONFLICT (session_id, tool_name) DO UPDATE SET calls = calls + excluded.calls`,
        );
  for (const [name, n] of tools) bump!.run(sessionId, name, n);
  return true;
}

/**
 * The per-session tool tally from the visible rows: one row per called tool name with its
 * call count (the same SELECT back-fills it in the migration that added the table).
 */
export const TOOL_TALLY_SELECT = `
  SELECT m.session_id, json_extract(j.value, '$.function.name') AS tally_name, count(*) AS calls
    FROM messages m, json_each(m.tool_calls) j
   WHERE m.tool_calls IS NOT NULL AND m.rewound_at IS NULL
     AND json_type(j.value, '$.function.name') = 'text'`;

/** Recomputes counters, preview and last activity from the visible rows (after rewind, restore, replace, clear). */
export function recomputeSummary(conn: SqliteConnection, sessionId: string): void {
  const totals = conn
    .stmt(
      `SELECT count(*) AS n, coalesce(sum(tool_call_count), 0) AS tools, max(timestamp) AS last
         FROM messages WHERE session_id = ? AND rewound_at IS NULL`,
    )
    .get(sessionId) as { n: number; tools: number; last: number | null };
  // The first visible user message with text (as on append; summaries and notes are not
  // user messages): usually the first row read.
  let preview: string | null = null;
  const users = conn
    .stmt(
      `SELECT content, content_parts, platform_message_id FROM messages
        WHERE session_id = ? AND role = 'user' AND rewound_at IS NULL ORDER BY id`,
    )
    .iterate(sessionId) as IterableIterator<Pick<MessageRow, "content" | "content_parts" | "platform_message_id">>;
  for (const row of users) {
    if (syntheticMessageKind({ role: "user", platformMessageId: row.platform_message_id }) !== null) continue;
    preview = makePreview(rowContent(row));
    if (preview !== null) {
      break;
    }
  }
  conn
    .stmt(
      `UPDATE sessions SET
         message_count = @n, tool_call_count = @tools, last_message_at = @last, preview = @preview,
         last_active_at = coalesce(max(@last, ended_at), @last, ended_at, started_at)
       WHERE id = @id`,
    )
    .run({ ...totals, preview, id: sessionId });
  conn.stmt("DELETE FROM session_tool_calls WHERE session_id = ?").run(sessionId);
  conn
    .stmt(
      `INSERT INTO session_tool_calls (session_id, tool_name, calls)
       ${TOOL_TALLY_SELECT} AND m.session_id = ? GROUP BY 1, 2`,
    )
    .run(sessionId);
}

/** Recomputes last activity after the end time changed. */
export function refreshLastActive(conn: SqliteConnection, sessionId: string): void {
  conn
    .stmt(
      `UPDATE sessions SET last_active_at = coalesce(max(last_message_at, ended_at), last_message_at, ended_at, started_at)
        WHERE id = ?`,
    )
    .run(sessionId);
}
