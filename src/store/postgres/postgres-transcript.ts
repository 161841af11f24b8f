/**
 * Transcript writes on PostgreSQL, run inside a transaction that holds the session
 * row lock: inserting messages (with their search vectors), and recomputing the
 * per-session counters, preview and last activity.
 *
 * @module
 */
import type { NormalizedMessage } from "../input-validation.js";
import { calledToolNames, tallyTools } from "../insights.js";
import { makePreview } from "../preview.js";
import type { Sql } from "./postgres-connection.js";
import { encodeText, rowContent, type MessageRow } from "./postgres-rows.js";
import { messageVector } from "./postgres-search-query.js";

/** A message in the column form it is stored in (serialised once, outside the transaction). */
export interface StoredMessage {
  role: string;
  content: string | null;
  contentKind: number;
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
  searchVector: string | null;
  /** The preview this message would give its session (user messages only). */
  preview: string | null;
  /** The names its tool calls call, one per call, as stored (for the per-session tool tally). */
  toolNames: string[];
}

/** Serialises a validated message for storage. */
export function toStoredMessage(m: NormalizedMessage, rewoundAt: number | null = null): StoredMessage {
  const parts = Array.isArray(m.content);
  return {
    role: m.role,
    content: m.content === null ? null : parts ? JSON.stringify(m.content) : encodeText(m.content as string),
    contentKind: parts ? 1 : 0,
    toolCalls: m.toolCalls === null ? null : JSON.stringify(m.toolCalls),
    toolCallCount: m.toolCalls?.length ?? 0,
    toolCallId: encodeText(m.toolCallId),
    toolName: encodeText(m.toolName),
    tokenCount: m.tokenCount,
    finishReason: encodeText(m.finishReason),
    reasoning: encodeText(m.reasoning),
    reasoningDetails: m.reasoningDetails === null ? null : JSON.stringify(m.reasoningDetails),
    platformMessageId: encodeText(m.platformMessageId),
    timestamp: m.timestamp,
    rewoundAt,
    rewindBatch: rewoundAt === null ? null : 0,
    searchVector: messageVector(m.content, m.toolName, m.toolCalls),
    preview: m.role === "user" ? encodeText(makePreview(m.content)) : null,
    toolNames: calledToolNames(m.toolCalls).map((name) => encodeText(name)),
  };
}

const COLUMNS = [
  "id", "session_id", "role", "content", "content_kind", "tool_calls", "tool_call_count", "tool_call_id", "tool_name",
  "token_count", "finish_reason", "reasoning", "reasoning_details", "platform_message_id", "timestamp", "rewound_at",
  "rewind_batch", "search_vector",
];
/** Rows per INSERT statement (keeps the parameter count far below PostgreSQL's 65,535). */
const CHUNK = 500;

/**
 * Inserts messages; returns their ids, increasing in the given order. The ids are
 * drawn from the sequence first and assigned explicitly, so their order never
 * depends on how the server evaluates a multi-row insert. Does not touch counters.
 */
export async function insertMessages(sql: Sql, sessionId: string, messages: StoredMessage[]): Promise<number[]> {
  if (messages.length === 0) return [];
  if (messages.length === 1) {
    // One row: its id comes from the column default, in the same round trip.
    const m = messages[0]!;
    const values = [
      sessionId, m.role, m.content, m.contentKind, m.toolCalls, m.toolCallCount, m.toolCallId, m.toolName,
      m.tokenCount, m.finishReason, m.reasoning, m.reasoningDetails, m.platformMessageId, m.timestamp, m.rewoundAt,
      m.rewindBatch, m.searchVector,
    ];
    const id = await sql.column<number>(
      `INSERT INTO messages (${COLUMNS.slice(1).join(", ")}) VALUES (${values.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`,
      values,
    );
    return id;
  }
  const ids = (
    await sql.column<number>("SELECT nextval('messages_id_seq') FROM generate_series(1, $1)", [messages.length])
  ).sort((a, b) => a - b);
  for (let start = 0; start < messages.length; start += CHUNK) {
    const params: unknown[] = [];
    const rows: string[] = [];
    messages.slice(start, start + CHUNK).forEach((m, i) => {
      const values = [
        ids[start + i], sessionId, m.role, m.content, m.contentKind, m.toolCalls, m.toolCallCount, m.toolCallId,
        m.toolName, m.tokenCount, m.finishReason, m.reasoning, m.reasoningDetails, m.platformMessageId, m.timestamp,
        m.rewoundAt, m.rewindBatch, m.searchVector,
      ];
      rows.push(`(${values.map((v) => `$${params.push(v)}`).join(", ")})`);
    });
    await sql.run(`INSERT INTO messages (${COLUMNS.join(", ")}) VALUES ${rows.join(", ")}`, params);
  }
  return ids;
}

/**
 * Takes the row lock of a session that accepts appends and adds the messages to its
 * counters, preview and last activity, in one statement. Returns false (changing
 * nothing) when the session does not exist or has ended.
 */
export async function lockAndBumpForAppend(sql: Sql, sessionId: string, messages: StoredMessage[]): Promise<boolean> {
  const { count, toolCalls, last, preview } = summarize(messages);
  if (count === 0) {
    const locked = await sql.column("SELECT 1 FROM sessions WHERE id = $1 AND ended_at IS NULL FOR UPDATE", [sessionId]);
    return locked.length > 0;
  }
  const updated = await sql.column(
    `UPDATE sessions SET
       message_count = message_count + $1,
       tool_call_count = tool_call_count + $2,
       last_message_at = greatest(last_message_at, $3::double precision),
       last_active_at = greatest(last_message_at, $3::double precision, ended_at),
       preview = coalesce(preview, $4)
     WHERE id = $5 AND ended_at IS NULL
     RETURNING 1`,
    [count, toolCalls, last, preview, sessionId],
  );
  if (updated.length === 0) return false;
  const tools = new Map<string, number>();
  for (const m of messages) if (m.rewoundAt === null) tallyTools(tools, m.toolNames);
  if (tools.size > 0) {
    await sql.run(
      `INSERT INTO session_tool_calls (session_id, tool_name, calls)
       SELECT $1, t.name, t.n FROM unnest($2::text[], $3::bigint[]) AS t(name, n)
       ON CONFLICT (session_id, tool_name) DO UPDATE SET calls = session_tool_calls.calls + excluded.calls`,
      [sessionId, [...tools.keys()], [...tools.values()]],
    );
  }
  return true;
}

/** What the one-statement append found: the new ids, or why nothing was written. */
export type AppendOutcome =
  | { written: true; ids: number[] }
  | { written: false; fenceRow: { holder: string | null; token: number } | undefined };

/** The typed arrays a turn's rows are unnested from, in {@link COLUMNS} order after `id, session_id`. */
const ROW_ARRAYS = [
  "text[]", "text[]", "smallint[]", "text[]", "integer[]", "text[]", "text[]", "integer[]", "text[]", "text[]",
  "text[]", "text[]", "double precision[]", "double precision[]", "integer[]", "text[]",
];

/** The append statement, with and without a fence (built once each). */
const APPEND_SQL = { fenced: appendSql(true), unfenced: appendSql(false) };

/**
 * One statement that appends a turn to a live session, so it runs as its own transaction in
 * one round trip:
 * 1. with a fence, the lease row is read `FOR SHARE` first (a one-time filter of the update),
 *    so a takeover, which bumps the token under `FOR UPDATE`, waits for this append;
 * 2. the session row's counters, preview and last activity are bumped only if the session
 *    exists, has not ended and the fence holds; its row lock serialises every writer of the
 *    session, in any process, until the statement commits;
 * 3. the ids are drawn from the sequence only after that lock and given out in order, so a
 *    turn's ids are contiguous within its session and increase in call order;
 * 4. the rows (with their search vectors) and the tool tally are written only if the
 *    session row was bumped.
 * When nothing was bumped, it returns the lease row it saw (to tell a lost lease apart).
 */
function appendSql(fenced: boolean): string {
  // $1 session id, $2 count, $3 tool calls, $4 last timestamp, $5 preview, $6 rows,
  // $7.. the row arrays, then the tool names and counts, then the fence key and token.
  const arrays = ROW_ARRAYS.map((type, i) => `$${7 + i}::${type}`);
  const toolNames = 7 + ROW_ARRAYS.length;
  const fenceKey = toolNames + 2;
  const columns = COLUMNS.slice(2);
  return `
    WITH ${fenced ? `fence AS (SELECT holder, token FROM session_leases WHERE key = $${fenceKey} FOR SHARE),` : ""}
    bumped AS (
      UPDATE sessions SET
        message_count = message_count + $2,
        tool_call_count = tool_call_count + $3,
        last_message_at = greatest(last_message_at, $4::double precision),
        last_active_at = CASE WHEN $4::double precision IS NULL THEN last_active_at
                              ELSE greatest(last_message_at, $4::double precision, ended_at) END,
        preview = coalesce(preview, $5::text)
      WHERE id = $1 AND ended_at IS NULL
        ${fenced ? `AND (SELECT count(*) FROM fence WHERE holder IS NOT NULL AND token = $${fenceKey + 1}::bigint) > 0` : ""}
      RETURNING id
    ),
    ids AS MATERIALIZED (SELECT nextval('messages_id_seq') AS id FROM bumped, generate_series(1, $6::integer)),
    numbered AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY id) AS ord FROM ids),
    inserted AS (
      INSERT INTO messages (${COLUMNS.join(", ")})
      SELECT n.id, $1, ${columns.map((c) => (c === "search_vector" ? `m.${c}::tsvector` : `m.${c}`)).join(", ")}
        FROM numbered n
        JOIN unnest(${arrays.join(", ")}) WITH ORDINALITY AS m(${columns.join(", ")}, ord) ON m.ord = n.ord
    ),
    tallied AS (
      INSERT INTO session_tool_calls (session_id, tool_name, calls)
      SELECT $1, t.name, t.n FROM bumped, unnest($${toolNames}::text[], $${toolNames + 1}::bigint[]) AS t(name, n)
      ON CONFLICT (session_id, tool_name) DO UPDATE SET calls = session_tool_calls.calls + excluded.calls
    )
    SELECT (SELECT count(*) FROM bumped)::int AS bumped,
           (SELECT array_agg(id ORDER BY id) FROM numbered) AS ids,
           ${fenced ? "(SELECT count(*) FROM fence)::int AS leased, (SELECT holder FROM fence) AS holder, (SELECT token FROM fence) AS token" : "0 AS leased, NULL AS holder, NULL AS token"}`;
}

/**
 * Appends messages to a live session in one statement (see {@link appendSql}): run it
 * outside any transaction, where it is its own. Nothing is written unless the session exists,
 * has not ended and `fence` (if any) holds.
 */
export async function appendInOneStatement(
  sql: Sql,
  sessionId: string,
  messages: StoredMessage[],
  fence: { key: string; token: number } | null,
): Promise<AppendOutcome> {
  const { count, toolCalls, last, preview } = summarize(messages);
  const tools = new Map<string, number>();
  for (const m of messages) if (m.rewoundAt === null) tallyTools(tools, m.toolNames);
  const params: unknown[] = [sessionId, count, toolCalls, last, preview, messages.length];
  params.push(
    messages.map((m) => m.role),
    messages.map((m) => m.content),
    messages.map((m) => m.contentKind),
    messages.map((m) => m.toolCalls),
    messages.map((m) => m.toolCallCount),
    messages.map((m) => m.toolCallId),
    messages.map((m) => m.toolName),
    messages.map((m) => m.tokenCount),
    messages.map((m) => m.finishReason),
    messages.map((m) => m.reasoning),
    messages.map((m) => m.reasoningDetails),
    messages.map((m) => m.platformMessageId),
    messages.map((m) => m.timestamp),
    messages.map((m) => m.rewoundAt),
    messages.map((m) => m.rewindBatch),
    messages.map((m) => m.searchVector),
    [...tools.keys()],
    [...tools.values()],
  );
  if (fence !== null) params.push(fence.key, fence.token);
  const row = (await sql.one<{ bumped: number; ids: Array<number | string> | null; leased: number; holder: string | null; token: number | string | null }>(
    fence === null ? APPEND_SQL.unfenced : APPEND_SQL.fenced,
    params,
  ))!;
  if (row.bumped > 0) return { written: true, ids: (row.ids ?? []).map(Number) };
  return { written: false, fenceRow: row.leased > 0 ? { holder: row.holder, token: Number(row.token) } : undefined };
}

function summarize(messages: StoredMessage[]): { count: number; toolCalls: number; last: number | null; preview: string | null } {
  let count = 0;
  let toolCalls = 0;
  let last: number | null = null;
  let preview: string | null = null;
  for (const m of messages) {
    if (m.rewoundAt !== null) continue;
    count += 1;
    toolCalls += m.toolCallCount;
    last = last === null ? m.timestamp : Math.max(last, m.timestamp);
    if (preview === null && m.preview !== null) preview = m.preview;
  }
  return { count, toolCalls, last, preview };
}

/** Recomputes counters, preview and last activity from the visible rows (after rewind, restore, replace, clear). */
export async function recomputeSummary(sql: Sql, sessionId: string): Promise<void> {
  const totals = (await sql.one<{ n: number; tools: number; last: number | null }>(
    `SELECT count(*)::int AS n, coalesce(sum(tool_call_count), 0)::int AS tools, max(timestamp) AS last
       FROM messages WHERE session_id = $1 AND rewound_at IS NULL`,
    [sessionId],
  ))!;
  // The first visible user message with text (as on append), read a few at a time.
  let preview: string | null = null;
  for (let after = 0; preview === null; ) {
    const users = await sql.all<Pick<MessageRow, "id" | "content" | "content_kind">>(
      `SELECT id, content, content_kind FROM messages
        WHERE session_id = $1 AND role = 'user' AND rewound_at IS NULL AND id > $2 ORDER BY id LIMIT 16`,
      [sessionId, after],
    );
    if (users.length === 0) break;
    for (const row of users) {
      preview = makePreview(rowContent(row));
      if (preview !== null) break;
      after = row.id;
    }
  }
  await sql.run(
    `UPDATE sessions SET
       message_count = $1, tool_call_count = $2, last_message_at = $3::double precision, preview = $4,
       last_active_at = coalesce(greatest($3::double precision, ended_at), started_at)
     WHERE id = $5`,
    [totals.n, totals.tools, totals.last, encodeText(preview), sessionId],
  );
  // The tally is counted here, not in SQL: PostgreSQL's JSON functions refuse a string
  // holding \u0000, which a tool call's name or arguments may contain.
  const tools = new Map<string, number>();
  const rows = await sql.all<{ tool_calls: string }>(
    "SELECT tool_calls FROM messages WHERE session_id = $1 AND rewound_at IS NULL AND tool_calls IS NOT NULL",
    [sessionId],
  );
  for (const row of rows) {
    const calls = JSON.parse(row.tool_calls) as Array<{ function?: { name?: unknown } }>;
    tallyTools(tools, calls.flatMap((c) => (typeof c?.function?.name === "string" ? [encodeText(c.function.name)] : [])));
  }
  await sql.run("DELETE FROM session_tool_calls WHERE session_id = $1", [sessionId]);
  if (tools.size > 0) {
    await sql.run(
      `INSERT INTO session_tool_calls (session_id, tool_name, calls)
       SELECT $1, t.name, t.n FROM unnest($2::text[], $3::bigint[]) AS t(name, n)`,
      [sessionId, [...tools.keys()], [...tools.values()]],
    );
  }
}

/** Recomputes last activity after the end time changed. */
export async function refreshLastActive(sql: Sql, sessionId: string): Promise<void> {
  await sql.run(
    "UPDATE sessions SET last_active_at = coalesce(greatest(last_message_at, ended_at), started_at) WHERE id = $1",
    [sessionId],
  );
}
