/**
 * Full-text search on PostgreSQL: a `tsvector` column (our own tokens, see
 * postgres-search-query.ts) with a GIN index. "newest" and "oldest" order matches
 * by message id; "relevance" ranks a bounded candidate set (the newest
 * {@link RELEVANCE_CANDIDATES} matches) with `ts_rank` instead of scoring every
 * match. Snippets and context come from the shared, backend-independent code.
 *
 * @module
 */
import type { ContextMessage, MessageRole, SearchHit, SearchOptions } from "../contract.js";
import type { InvalidInputError } from "../errors.js";
import { checkSearchOptions } from "../input-validation.js";
import { contentText } from "../preview.js";
import { buildSnippet, contextText, highlightTerms, parseSearchQuery } from "../search/index.js";
import type { Sql } from "./postgres-connection.js";
import { decodeText, rowContent, type MessageRow } from "./postgres-rows.js";
import { toTsQuery } from "./postgres-search-query.js";

/** How many of the newest matches are ranked for a relevance search. */
export const RELEVANCE_CANDIDATES = 400;

type HitRow = Pick<MessageRow, "id" | "session_id" | "role" | "content" | "content_kind" | "timestamp" | "tool_name"> & {
  source: string;
  model: string | null;
  started_at: number;
};

/** Runs a search. Never throws on the query text; throws {@link InvalidInputError} on bad options. */
export async function searchMessages(sql: Sql, query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
  const { limit, offset, sort, sources, excluded, roles } = checkSearchOptions(query, options);

  const parsed = parseSearchQuery(query);
  if (parsed === null) return [];

  const tsquery = toTsQuery(parsed);
  if (tsquery === null) return [];
  const params: unknown[] = [tsquery];
  const where = ["m.search_vector @@ $1::tsquery", "m.rewound_at IS NULL"];
  let join = "";
  if (roles !== null) where.push(`m.role = ANY($${params.push(roles)}::text[])`);
  if (sources !== null || excluded !== null) {
    join = "JOIN sessions s ON s.id = m.session_id";
    if (sources !== null) where.push(`s.source = ANY($${params.push(sources)}::text[])`);
    if (excluded !== null) where.push(`NOT (s.source = ANY($${params.push(excluded)}::text[]))`);
  }
  const base = `FROM messages m ${join} WHERE ${where.join(" AND ")}`;

  let ids: number[];
  if (sort === "relevance") {
    const candidates = Math.max(RELEVANCE_CANDIDATES, offset + limit);
    const rows = await sql.all<{ id: number; score: number }>(
      `SELECT m.id, ts_rank(m.search_vector, $1::tsquery) AS score ${base} ORDER BY m.id DESC LIMIT $${params.length + 1}`,
      [...params, candidates],
    );
    rows.sort((a, b) => b.score - a.score || b.id - a.id);
    ids = rows.slice(offset, offset + limit).map((r) => r.id);
  } else {
    const direction = sort === "newest" ? "DESC" : "ASC";
    ids = await sql.column<number>(
      `SELECT m.id ${base} ORDER BY m.id ${direction} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
  }
  if (ids.length === 0) return [];

  const terms = highlightTerms(parsed);
  const rows = await sql.all<HitRow>(
    `SELECT m.id, m.session_id, m.role, m.content, m.content_kind, m.timestamp, m.tool_name, s.source, s.model, s.started_at
       FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ANY($1::bigint[])`,
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
      context: {
        before: await neighbour(sql, row.session_id, row.id, "before"),
        after: await neighbour(sql, row.session_id, row.id, "after"),
      },
    });
  }
  return hits;
}

async function neighbour(sql: Sql, sessionId: string, id: number, side: "before" | "after"): Promise<ContextMessage | null> {
  const text =
    side === "before"
      ? `SELECT id, role, content, content_kind, timestamp FROM messages
          WHERE session_id = $1 AND id < $2 AND rewound_at IS NULL ORDER BY id DESC LIMIT 1`
      : `SELECT id, role, content, content_kind, timestamp FROM messages
          WHERE session_id = $1 AND id > $2 AND rewound_at IS NULL ORDER BY id LIMIT 1`;
  const row = await sql.one<Pick<MessageRow, "id" | "role" | "content" | "content_kind" | "timestamp">>(text, [sessionId, id]);
  if (row === undefined) return null;
  return {
    id: row.id,
    role: row.role as MessageRole,
    content: contextText(contentText(rowContent(row))),
    timestamp: row.timestamp,
  };
}
