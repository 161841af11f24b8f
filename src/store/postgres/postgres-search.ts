/**
 * Full-text search on PostgreSQL: a `tsvector` column (our own tokens, see
 * postgres-search-query.ts) with a GIN index. "newest" and "oldest" order matches
 * by message id; "relevance" ranks a bounded candidate set (the newest
 * {@link RELEVANCE_CANDIDATES} matches) with `ts_rank` instead of scoring every
 * match. A relevance search with a phrase looks for it only among the newest
 * {@link PHRASE_WINDOW} messages holding all of its words: the GIN index cannot check
 * word positions, so every such row is read to check them, and for common words those are
 * a large share of the table. Snippets and context come from the shared,
 * backend-independent code.
 *
 * @module
 */
import type { ContextMessage, MessageRole, SearchHit, SearchOptions } from "../contract.js";
import type { InvalidInputError } from "../errors.js";
import { checkSearchOptions } from "../input-validation.js";
import { contentText } from "../preview.js";
import { buildSnippet, contextText, highlightTerms, parseSearchQuery } from "../search/index.js";
import type { Sql } from "./postgres-connection.js";
import { decodeText, encodeText, rowContent, type MessageRow } from "./postgres-rows.js";
import { toLooseTsQuery, toTsQuery } from "./postgres-search-query.js";

/**
 * How many of the newest matches are ranked for a relevance search (SQLite ranks 400 with
 * BM25; `ts_rank` reads each candidate's whole vector, often toasted, so PostgreSQL ranks fewer).
 */
export const RELEVANCE_CANDIDATES = 100;

/**
 * A relevance search with a phrase checks word positions in at most this many of the newest
 * messages that hold all of the query's words (the query with each phrase loosened to its
 * words; at least `offset + limit`), and ranks the phrase matches among them.
 */
export const PHRASE_WINDOW = 1_000;

type HitRow = Pick<MessageRow, "id" | "session_id" | "role" | "content" | "content_kind" | "timestamp" | "tool_name"> & {
  source: string;
  model: string | null;
  started_at: number;
};

/** Runs a search. Never throws on the query text; throws {@link InvalidInputError} on bad options. */
export async function searchMessages(sql: Sql, query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
  const { limit, offset, sort, sources, excluded, roles, userId, userIds, identities, chatId } = checkSearchOptions(query, options);

  const parsed = parseSearchQuery(query);
  if (parsed === null) return [];

  const tsquery = toTsQuery(parsed);
  if (tsquery === null) return [];
  // With a phrase, relevance walks the rows matching the loose query (which the GIN index
  // answers without reading rows) and checks the phrase only within a bounded window of them.
  const loose = sort === "relevance" ? toLooseTsQuery(parsed) : null;
  const params: unknown[] = loose === null ? [tsquery] : [tsquery, loose];
  const where = [`m.search_vector @@ $${params.length}::tsquery`, "m.rewound_at IS NULL"];
  let join = "";
  if (roles !== null) where.push(`m.role = ANY($${params.push(roles)}::text[])`);
  if (sources !== null || excluded !== null || userId !== null || userIds !== null || identities !== null || chatId !== null) {
    join = "JOIN sessions s ON s.id = m.session_id";
    if (userId !== null) where.push(`s.user_id = $${params.push(encodeText(userId))}`);
    if (userIds !== null) where.push(`s.user_id = ANY($${params.push(userIds.map(encodeText))}::text[])`);
    if (identities !== null) {
      where.push(
        identities.length === 0
          ? "FALSE"
          : `(${identities.map((identity) => `(s.source = $${params.push(identity.source)} AND s.user_id = $${params.push(encodeText(identity.userId))})`).join(" OR ")})`,
      );
    }
    if (chatId !== null) where.push(`s.chat_id = $${params.push(encodeText(chatId))}`);
    if (sources !== null) where.push(`s.source = ANY($${params.push(sources)}::text[])`);
    if (excluded !== null) where.push(`NOT (s.source = ANY($${params.push(excluded)}::text[]))`);
  }
  const base = `FROM messages m ${join} WHERE ${where.join(" AND ")}`;

  let ids: number[];
  if (sort === "relevance") {
    const candidates = Math.max(RELEVANCE_CANDIDATES, offset + limit);
    // Ranked after the LIMIT: in the select list of the inner query, ts_rank would run on
    // every match (each vector read again) before the sort keeps the newest candidates.
    const newest =
      loose === null
        ? `SELECT m.id, m.search_vector ${base} ORDER BY m.id DESC LIMIT $${params.length + 1}`
        : `SELECT w.id, w.search_vector
             FROM (SELECT m.id, m.search_vector ${base} ORDER BY m.id DESC LIMIT $${params.length + 2}) w
            WHERE w.search_vector @@ $1::tsquery
            ORDER BY w.id DESC LIMIT $${params.length + 1}`;
    const rows = await sql.all<{ id: number; score: number }>(
      `SELECT c.id, ts_rank(c.search_vector, $1::tsquery) AS score FROM (${newest}) c`,
      loose === null ? [...params, candidates] : [...params, candidates, Math.max(PHRASE_WINDOW, candidates)],
    );
    rows.sort((a, b) => b.score - a.score || b.id - a.id);
    ids = rows.slice(offset, offset + limit).map((r) => r.id);
  } else {
    const direction = sort === "newest" ? "DESC" : "ASC";
    ids = await sql.column<number>(`SELECT m.id ${base} ORDER BY m.id ${direction} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`, [
      ...params,
      limit,
      offset,
    ]);
  }
  if (ids.length === 0) return [];

  const terms = highlightTerms(parsed);
  // One round trip for the hits and both neighbours of each (not two queries per hit).
  const rows = await sql.all<HitRow & NeighbourColumns<"b"> & NeighbourColumns<"a">>(
    `SELECT m.id, m.session_id, m.role, m.content, m.content_kind, m.timestamp, m.tool_name,
            s.source, s.model, s.started_at,
            b.id AS b_id, b.role AS b_role, b.content AS b_content, b.content_kind AS b_content_kind, b.timestamp AS b_timestamp,
            a.id AS a_id, a.role AS a_role, a.content AS a_content, a.content_kind AS a_content_kind, a.timestamp AS a_timestamp
       FROM messages m
       JOIN sessions s ON s.id = m.session_id
       LEFT JOIN LATERAL (SELECT id, role, content, content_kind, timestamp FROM messages
                           WHERE session_id = m.session_id AND id < m.id AND rewound_at IS NULL
                           ORDER BY id DESC LIMIT 1) b ON true
       LEFT JOIN LATERAL (SELECT id, role, content, content_kind, timestamp FROM messages
                           WHERE session_id = m.session_id AND id > m.id AND rewound_at IS NULL
                           ORDER BY id LIMIT 1) a ON true
      WHERE m.id = ANY($1::bigint[])`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const hits: SearchHit[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row === undefined) continue;
    hits.push({
      messageId: row.id,
      sessionId: row.session_id,
      role: row.role as MessageRole,
      snippet: buildSnippet(contentText(rowContent(row)), terms),
      timestamp: row.timestamp,
      toolName: decodeText(row.tool_name),
      source: row.source,
      model: decodeText(row.model),
      sessionStartedAt: row.started_at,
      context: { before: neighbour(row, "b"), after: neighbour(row, "a") },
    });
  }
  return hits;
}

/** The columns of one neighbour in the hit query, prefixed `b_` (before) or `a_` (after). */
type NeighbourColumns<P extends string> = {
  [K in "id" | "role" | "content" | "content_kind" | "timestamp" as `${P}_${K}`]: K extends "id" | "content_kind" | "timestamp" ? number | null : string | null;
};

function neighbour<P extends "a" | "b">(row: NeighbourColumns<P>, prefix: P): ContextMessage | null {
  const r = row as unknown as Record<string, unknown>;
  const id = r[`${prefix}_id`] as number | null;
  if (id === null) return null;
  const content = rowContent({
    content: r[`${prefix}_content`] as string | null,
    content_kind: r[`${prefix}_content_kind`] as number,
  });
  return {
    id: Number(id),
    role: r[`${prefix}_role`] as MessageRole,
    content: contextText(contentText(content)),
    timestamp: r[`${prefix}_timestamp`] as number,
  };
}
