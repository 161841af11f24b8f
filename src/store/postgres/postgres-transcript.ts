/**
 * Transcript writes on PostgreSQL: the append as one statement that is its own transaction
 * (session row lock, counters, rows with their search vectors and tool tally at once), and,
 * inside a transaction that holds the session row lock, inserting messages and recomputing
 * the per-session counters, preview and last activity.
 *
 * @module
 */
import type { LeaseFence } from "../contract.js";
import { attachmentsOf } from "../attachment-input.js";
import type { AttachmentRef } from "../contract.js";
import type { NormalizedMessage } from "../input-validation.js";
import { calledToolNames, tallyTools } from "../insights.js";
import { makePreview } from "../preview.js";
import { syntheticMessageKind } from "../message-origin.js";
import type { Sql } from "./postgres-connection.js";
import { decodeText, encodeText, rowContent, type MessageRow } from "./postgres-rows.js";
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
  /** The preview this message would give its session (user messages only, not summaries or notes). */
  preview: string | null;
  /** Its attachment parts, in order (indexed in `message_attachments` when it is inserted). */
  attachments: AttachmentRef[];
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
    preview: m.role === "user" && syntheticMessageKind(m) === null ? encodeText(makePreview(m.content)) : null,
    attachments: attachmentsOf(m.content),
    toolNames: calledToolNames(m.toolCalls).map((name) => encodeText(name)),
  };
}

/** The columns of `messages` a stored message is written to, in insert order. */
export const COLUMNS = [
  "id",
  "session_id",
  "role",
  "content",
  "content_kind",
  "tool_calls",
  "tool_call_count",
  "tool_call_id",
  "tool_name",
  "token_count",
  "finish_reason",
  "reasoning",
  "reasoning_details",
  "platform_message_id",
  "timestamp",
  "rewound_at",
  "rewind_batch",
  "search_vector",
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
      sessionId,
      m.role,
      m.content,
      m.contentKind,
      m.toolCalls,
      m.toolCallCount,
      m.toolCallId,
      m.toolName,
      m.tokenCount,
      m.finishReason,
      m.reasoning,
      m.reasoningDetails,
      m.platformMessageId,
      m.timestamp,
      m.rewoundAt,
      m.rewindBatch,
      m.searchVector,
    ];
    const id = await sql.column<number>(
      `INSERT INTO messages (${COLUMNS.slice(1).join(", ")}) VALUES (${values.map((_, i) => `$${i + 1}`).join(", ")}) RETURNING id`,
      values,
    );
    return id;
  }
  const ids = (await sql.column<number>("SELECT nextval('messages_id_seq') FROM generate_series(1, $1)", [messages.length])).sort((a, b) => a - b);
  for (let start = 0; start < messages.length; start += CHUNK) {
    const params: unknown[] = [];
    const rows: string[] = [];
    messages.slice(start, start + CHUNK).forEach((m, i) => {
      const values = [
        ids[start + i],
        sessionId,
        m.role,
        m.content,
        m.contentKind,
        m.toolCalls,
        m.toolCallCount,
        m.toolCallId,
        m.toolName,
        m.tokenCount,
        m.finishReason,
        m.reasoning,
        m.reasoningDetails,
        m.platformMessageId,
        m.timestamp,
        m.rewoundAt,
        m.rewindBatch,
        m.searchVector,
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
export type AppendOutcome = { written: true; ids: number[] } | { written: false; fenceRow: { holder: string | null; token: number } | undefined };

/** The PostgreSQL type of each column after `id, session_id`, in {@link COLUMNS} order. */
export const COLUMN_TYPES = [
  "text",
  "text",
  "smallint",
  "text",
  "integer",
  "text",
  "text",
  "integer",
  "text",
  "text",
  "text",
  "text",
  "double precision",
  "double precision",
  "integer",
  "tsvector",
];

/** A message's values for the columns after `id, session_id`, in {@link COLUMNS} order. */
export function rowValues(m: StoredMessage): unknown[] {
  return [
    m.role,
    m.content,
    m.contentKind,
    m.toolCalls,
    m.toolCallCount,
    m.toolCallId,
    m.toolName,
    m.tokenCount,
    m.finishReason,
    m.reasoning,
    m.reasoningDetails,
    m.platformMessageId,
    m.timestamp,
    m.rewoundAt,
    m.rewindBatch,
    m.searchVector,
  ];
}

/** A statement for `pg`: its text, its values, and the name it is prepared under on each connection. */
export interface NamedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/**
 * One statement that appends a turn to a live session, so it runs as its own transaction in
 * one round trip:
 * 1. with a fence, the lease row is read `FOR SHARE` first (a one-time filter of the update,
 *    evaluated before the session row is touched), so a takeover, which bumps the token under
 *    `FOR UPDATE`, waits for this append, and a lost lease writes nothing;
 * 2. the session row's counters, preview and last activity are bumped only if the session
 *    exists, has not ended and the fence holds; its row lock serialises every writer of the
 *    session, in any process, until the statement commits;
 * 3. the rows (with their search vectors) are inserted only from the bumped row, so their ids
 *    are drawn from the sequence after that lock: a turn's ids are contiguous within its
 *    session; several rows get theirs sorted and assigned in the given order;
 * 4. the tool tally is upserted from the bumped row likewise.
 * It returns whether the row was bumped, the ids, and the lease row it saw (to tell a lost
 * lease from a missing or ended session when nothing was written).
 *
 * The text depends only on the shape (fenced or not; no, one or several rows; tools or
 * not), so each shape is prepared once per connection under its own name and planned once.
 */
export function appendStatement(sessionId: string, messages: StoredMessage[], fence: LeaseFence | null): NamedStatement {
  const { count, toolCalls, last, preview } = summarize(messages);
  const tools = new Map<string, number>();
  for (const m of messages) if (m.rewoundAt === null) tallyTools(tools, m.toolNames);
  const values: unknown[] = [];
  const param = (value: unknown, type: string): string => `$${values.push(value)}::${type}`;
  const session = param(sessionId, "text");
  const at = param(last, "double precision");
  const ctes: string[] = [];
  if (fence !== null) {
    ctes.push(`fence AS (SELECT holder, token FROM session_leases WHERE key = ${param(fence.key, "text")} FOR SHARE)`);
  }
  ctes.push(`bumped AS (
      UPDATE sessions SET
        message_count = message_count + ${param(count, "integer")},
        tool_call_count = tool_call_count + ${param(toolCalls, "integer")},
        last_message_at = greatest(last_message_at, ${at}),
        last_active_at = CASE WHEN ${at} IS NULL THEN last_active_at ELSE greatest(last_message_at, ${at}, ended_at) END,
        preview = coalesce(preview, ${param(preview, "text")})
      WHERE id = ${session} AND ended_at IS NULL${
        fence === null ? "" : ` AND (SELECT count(*) FROM fence WHERE holder IS NOT NULL AND token = ${param(fence.token, "bigint")}) > 0`
      }
      RETURNING id)`);
  const columns = COLUMNS.slice(2);
  let ids = "NULL::bigint[]";
  if (messages.length === 1) {
    const row = rowValues(messages[0]!).map((v, i) => param(v, COLUMN_TYPES[i]!));
    ctes.push(`inserted AS (
      INSERT INTO messages (${COLUMNS.slice(1).join(", ")}) SELECT ${session}, ${row.join(", ")} FROM bumped RETURNING id)`);
    ids = "(SELECT array_agg(id) FROM inserted)";
  } else if (messages.length > 1) {
    const arrays = COLUMN_TYPES.map((type, i) =>
      param(
        messages.map((m) => rowValues(m)[i]),
        type === "tsvector" ? "text[]" : `${type}[]`,
      ),
    );
    ctes.push(
      `ids AS MATERIALIZED (SELECT nextval('messages_id_seq') AS id FROM bumped, generate_series(1, ${param(messages.length, "integer")}))`,
      `numbered AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY id) AS ord FROM ids)`,
      `inserted AS (
      INSERT INTO messages (${COLUMNS.join(", ")})
      SELECT n.id, ${session}, ${columns.map((c) => (c === "search_vector" ? `m.${c}::tsvector` : `m.${c}`)).join(", ")}
        FROM numbered n
        JOIN unnest(${arrays.join(", ")}) WITH ORDINALITY AS m(${columns.join(", ")}, ord) ON m.ord = n.ord)`,
    );
    ids = "(SELECT array_agg(id ORDER BY id) FROM numbered)";
  }
  if (tools.size > 0) {
    ctes.push(`tallied AS (
      INSERT INTO session_tool_calls (session_id, tool_name, calls)
      SELECT ${session}, t.name, t.n FROM bumped, unnest(${param([...tools.keys()], "text[]")}, ${param([...tools.values()], "bigint[]")}) AS t(name, n)
      ON CONFLICT (session_id, tool_name) DO UPDATE SET calls = session_tool_calls.calls + excluded.calls)`);
  }
  const lease =
    fence === null
      ? "0 AS leased, NULL::text AS holder, NULL::bigint AS token"
      : "(SELECT count(*) FROM fence)::int AS leased, (SELECT holder FROM fence) AS holder, (SELECT token FROM fence) AS token";
  const text = `WITH ${ctes.join(",\n    ")}\n    SELECT (SELECT count(*) FROM bumped)::int AS bumped, ${ids} AS ids, ${lease}`;
  const rows = messages.length === 0 ? "none" : messages.length === 1 ? "one" : "many";
  const name = `threadline_append_${fence === null ? "unfenced" : "fenced"}_${rows}${tools.size > 0 ? "_tools" : ""}`;
  return { name, text, values };
}

/**
 * Appends messages to a live session in one statement ({@link appendStatement}), prepared
 * by name: run it outside any transaction, where it is its own. Nothing is written unless the
 * session exists, has not ended and `fence` (if any) holds.
 */
export async function appendInOneStatement(sql: Sql, sessionId: string, messages: StoredMessage[], fence: LeaseFence | null): Promise<AppendOutcome> {
  const row = (
    await sql.prepared<{
      bumped: number;
      ids: Array<number | string> | null;
      leased: number;
      holder: string | null;
      token: number | string | null;
    }>(appendStatement(sessionId, messages, fence))
  )[0]!;
  if (row.bumped > 0) return { written: true, ids: (row.ids ?? []).map(Number) };
  return { written: false, fenceRow: row.leased > 0 ? { holder: row.holder, token: Number(row.token) } : undefined };
}

/** What appending `messages` adds to their session: visible rows, tool calls, the newest time, the first preview. */
export function summarize(messages: StoredMessage[]): { count: number; toolCalls: number; last: number | null; preview: string | null } {
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
  // The first visible user message with text (as on append; summaries and notes are not
  // user messages), read a few at a time.
  let preview: string | null = null;
  for (let after = 0; preview === null; ) {
    const users = await sql.all<Pick<MessageRow, "id" | "content" | "content_kind" | "platform_message_id">>(
      `SELECT id, content, content_kind, platform_message_id FROM messages
        WHERE session_id = $1 AND role = 'user' AND rewound_at IS NULL AND id > $2 ORDER BY id LIMIT 16`,
      [sessionId, after],
    );
    if (users.length === 0) break;
    for (const row of users) {
      if (syntheticMessageKind({ role: "user", platformMessageId: decodeText(row.platform_message_id) }) === null) preview = makePreview(rowContent(row));
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
    tallyTools(
      tools,
      calls.flatMap((c) => (typeof c?.function?.name === "string" ? [encodeText(c.function.name)] : [])),
    );
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
  await sql.run("UPDATE sessions SET last_active_at = coalesce(greatest(last_message_at, ended_at), started_at) WHERE id = $1", [sessionId]);
}
