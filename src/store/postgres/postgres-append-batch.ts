/**
 * Appends to many sessions in one statement: the group commit of PostgreSQL appends. One
 * statement outside BEGIN/COMMIT is its own transaction, so the appends gathered by the
 * write queue (`postgres-append-queue.ts`) cost one round trip and one commit (one WAL flush)
 * together, and each append's outcome comes back on its own row: an append whose session is
 * missing or ended, or whose fence no longer holds, writes nothing and leaves the others to
 * commit.
 *
 * The text is fixed (every value travels in arrays), so it is prepared once per connection.
 *
 * @module
 */
import type { LeaseFence } from "../contract.js";
import { tallyTools } from "../insights.js";
import type { Sql } from "./postgres-connection.js";
import { COLUMN_TYPES, COLUMNS, type NamedStatement, rowValues, type StoredMessage, summarize } from "./postgres-transcript.js";

/** One append of a batch: a session, its messages (no attachments), and the fence it holds (if any). */
export interface BatchedAppend {
  sessionId: string;
  messages: StoredMessage[];
  fence: LeaseFence | null;
}

/** What the batch statement found for one append: the new ids, or why nothing was written. */
export type BatchedOutcome = { written: true; ids: number[] } | { written: false; fenceRow: { holder: string | null; token: number } | undefined };

/**
 * The message columns after `id, session_id`, with the PostgreSQL type of each array element (the
 * search vector travels as text and is cast in the statement).
 */
const MESSAGE_COLUMNS: Array<[column: string, type: string]> = COLUMNS.slice(2).map((column, i) => [
  column,
  COLUMN_TYPES[i] === "tsvector" ? "text" : COLUMN_TYPES[i]!,
]);

const FIRST_MESSAGE_PARAM = 9;
const param = (n: number, type: string): string => `$${n}::${type}[]`;
const messageArrays = MESSAGE_COLUMNS.map(([, type], i) => param(FIRST_MESSAGE_PARAM + i, type)).join(", ");
const TOOLS_PARAM = FIRST_MESSAGE_PARAM + MESSAGE_COLUMNS.length;

/**
 * The statement, in steps:
 * 1. `req`: one row per append (ordinal `a`), with what it adds to its session's counters;
 * 2. `fence`: the lease rows of fenced appends, read `FOR SHARE` (a takeover, which bumps the
 *    token under `FOR UPDATE`, waits for this statement; a lost lease is seen here);
 * 3. `bumped`: each session's counters, preview and last activity, bumped only if it exists, has
 *    not ended and its fence (if any) holds; the row lock serialises every writer of the
 *    session, in any process, until commit;
 * 4. `msgs`, `ids`, `numbered`: the rows of the bumped appends in batch order, and as many ids
 *    drawn from the sequence after those locks, sorted and assigned in that order, so each
 *    append's ids increase in its message order and follow every earlier write of its session;
 * 5. `inserted`, `tallied`: the rows (with their search vectors) and the tool tallies;
 * 6. one result row per append: bumped or not, its ids, and the lease row it saw.
 */
const TEXT = `WITH req AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::integer[], $3::integer[], $4::double precision[], $5::text[], $6::text[], $7::bigint[])
      WITH ORDINALITY AS r(session_id, n, tools, at, preview, fence_key, fence_token, a)
  ),
  fence AS MATERIALIZED (
    SELECT r.a, l.holder, l.token FROM req r JOIN session_leases l ON l.key = r.fence_key FOR SHARE OF l
  ),
  bumped AS (
    UPDATE sessions s SET
      message_count = s.message_count + r.n,
      tool_call_count = s.tool_call_count + r.tools,
      last_message_at = greatest(s.last_message_at, r.at),
      last_active_at = CASE WHEN r.at IS NULL THEN s.last_active_at ELSE greatest(s.last_message_at, r.at, s.ended_at) END,
      preview = coalesce(s.preview, r.preview)
    FROM req r
    WHERE s.id = r.session_id AND s.ended_at IS NULL
      AND (r.fence_key IS NULL OR EXISTS (SELECT 1 FROM fence f WHERE f.a = r.a AND f.holder IS NOT NULL AND f.token = r.fence_token))
    RETURNING r.a
  ),
  msgs AS MATERIALIZED (
    SELECT m.*, row_number() OVER (ORDER BY m.ord) AS rn
      FROM unnest($8::integer[], ${messageArrays})
        WITH ORDINALITY AS m(a, ${MESSAGE_COLUMNS.map(([c]) => c).join(", ")}, ord)
     WHERE m.a IN (SELECT a FROM bumped)
  ),
  ids AS MATERIALIZED (SELECT nextval('messages_id_seq') AS id FROM generate_series(1, (SELECT count(*) FROM msgs))),
  numbered AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM ids),
  inserted AS (
    INSERT INTO messages (id, session_id, ${MESSAGE_COLUMNS.map(([c]) => c).join(", ")})
    SELECT n.id, r.session_id, ${MESSAGE_COLUMNS.map(([c]) => (c === "search_vector" ? `m.${c}::tsvector` : `m.${c}`)).join(", ")}
      FROM msgs m JOIN numbered n ON n.rn = m.rn JOIN req r ON r.a = m.a
  ),
  tallied AS (
    INSERT INTO session_tool_calls (session_id, tool_name, calls)
    SELECT r.session_id, t.name, t.n
      FROM unnest(${param(TOOLS_PARAM, "integer")}, ${param(TOOLS_PARAM + 1, "text")}, ${param(TOOLS_PARAM + 2, "bigint")}) AS t(a, name, n)
      JOIN req r ON r.a = t.a
     WHERE t.a IN (SELECT a FROM bumped)
    ON CONFLICT (session_id, tool_name) DO UPDATE SET calls = session_tool_calls.calls + excluded.calls
  )
  SELECT r.a::integer AS a,
         (r.a IN (SELECT a FROM bumped)) AS bumped,
         (SELECT array_agg(n.id ORDER BY n.id) FROM msgs m JOIN numbered n ON n.rn = m.rn WHERE m.a = r.a) AS ids,
         (f.a IS NOT NULL) AS leased, f.holder, f.token
    FROM req r LEFT JOIN fence f ON f.a = r.a
   ORDER BY r.a`;

/** The prepared name: a new text needs a new name (a name always stands for one text on a connection). */
const NAME = "threadline_append_batch_1";

/**
 * The batch statement for `appends` (each to a different session; none with attachments).
 * Their ordinals are their positions, from 1.
 */
export function appendBatchStatement(appends: BatchedAppend[]): NamedStatement {
  const req: unknown[][] = [[], [], [], [], [], [], []];
  const rows: unknown[][] = Array.from({ length: MESSAGE_COLUMNS.length + 1 }, () => []);
  const tools: unknown[][] = [[], [], []];
  appends.forEach((append, i) => {
    const a = i + 1;
    const { count, toolCalls, last, preview } = summarize(append.messages);
    const values = [append.sessionId, count, toolCalls, last, preview, append.fence?.key ?? null, append.fence?.token ?? null];
    values.forEach((v, k) => {
      req[k]!.push(v);
    });
    for (const m of append.messages) {
      rows[0]!.push(a);
      rowValues(m).forEach((v, k) => {
        rows[k + 1]!.push(v);
      });
    }
    const tally = new Map<string, number>();
    for (const m of append.messages) if (m.rewoundAt === null) tallyTools(tally, m.toolNames);
    for (const [name, n] of tally) {
      tools[0]!.push(a);
      tools[1]!.push(name);
      tools[2]!.push(n);
    }
  });
  return { name: NAME, text: TEXT, values: [...req, ...rows, ...tools] };
}

/** Runs the batch statement outside any transaction (where it is its own); one outcome per append, in order. */
export async function appendBatch(sql: Sql, appends: BatchedAppend[]): Promise<BatchedOutcome[]> {
  const rows = await sql.prepared<{
    a: number;
    bumped: boolean;
    ids: Array<number | string> | null;
    leased: boolean;
    holder: string | null;
    token: number | string | null;
  }>(appendBatchStatement(appends));
  return rows.map((row) =>
    row.bumped
      ? { written: true, ids: (row.ids ?? []).map(Number) }
      : { written: false, fenceRow: row.leased ? { holder: row.holder, token: Number(row.token) } : undefined },
  );
}
