/**
 * Full-text search on SQLite (FTS5, contentless index). Matches are walked in
 * message-id order (FTS5 iterates its doclists by rowid and stops at the LIMIT), so
 * "newest" and "oldest" never touch more rows than they return; "relevance" ranks a
 * bounded candidate set (the newest {@link RELEVANCE_CANDIDATES} matches) with BM25
 * instead of scoring every match.
 *
 * @module
 */
import type { ContextMessage, MessageRole, SearchHit, SearchOptions } from "../contract.js";
import { checkSearchOptions } from "../input-validation.js";
import { contentText } from "../preview.js";
import { buildSnippet, contextText, highlightTerms, parseSearchQuery } from "../search/index.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { rowContent, type MessageRow } from "./sqlite-rows.js";
import { toFts5Match } from "./sqlite-search-query.js";

/** How many of the newest matches are ranked for a relevance search. */
export const RELEVANCE_CANDIDATES = 400;

type HitRow = Pick<MessageRow, "id" | "session_id" | "role" | "content" | "content_parts" | "timestamp" | "tool_name"> & {
  source: string;
  model: string | null;
  started_at: number;
};

/** Runs a search. Never throws on the query text; throws {@link InvalidInputError} on bad options. */
export function searchMessages(conn: SqliteConnection, query: string, options: SearchOptions = {}): SearchHit[] {
  const { limit, offset, sort, sources, excluded, roles, userId, userIds, identities, chatId } = checkSearchOptions(query, options);

  const parsed = parseSearchQuery(query);
  if (parsed === null) return [];
  const match = toFts5Match(parsed);

  const joins: string[] = [];
  const where: string[] = ["messages_fts MATCH ?"];
  const params: unknown[] = [match];
  if (roles !== null) {
    joins.push("JOIN messages m ON m.id = messages_fts.rowid");
    where.push(`m.role IN (${roles.map(() => "?").join(", ")})`);
    params.push(...roles);
  }
  if (sources !== null || excluded !== null || userId !== null || userIds !== null || identities !== null || chatId !== null) {
    if (roles === null) joins.push("JOIN messages m ON m.id = messages_fts.rowid");
    joins.push("JOIN sessions s ON s.id = m.session_id");
    if (userId !== null) {
      where.push("s.user_id = ?");
      params.push(userId);
    }
    if (userIds !== null) {
      where.push(userIds.length === 0 ? "0" : `s.user_id IN (${userIds.map(() => "?").join(", ")})`);
      params.push(...userIds);
    }
    if (identities !== null) {
      where.push(identities.length === 0 ? "0" : `(${identities.map(() => "(s.source = ? AND s.user_id = ?)").join(" OR ")})`);
      for (const identity of identities) params.push(identity.source, identity.userId);
    }
    if (chatId !== null) {
      where.push("s.chat_id = ?");
      params.push(chatId);
    }
    if (sources !== null) {
      where.push(`s.source IN (${sources.map(() => "?").join(", ")})`);
      params.push(...sources);
    }
    if (excluded !== null) {
      where.push(`s.source NOT IN (${excluded.map(() => "?").join(", ")})`);
      params.push(...excluded);
    }
  }
  const base = `FROM messages_fts ${joins.join(" ")} WHERE ${where.join(" AND ")}`;

  let ids: number[];
  if (sort === "relevance") {
    const candidates = Math.max(RELEVANCE_CANDIDATES, offset + limit);
    const rows = conn
      .stmt(`SELECT messages_fts.rowid AS id, bm25(messages_fts) AS score ${base} ORDER BY messages_fts.rowid DESC LIMIT ?`)
      .all(...params, candidates) as Array<{ id: number; score: number }>;
    rows.sort((a, b) => a.score - b.score || b.id - a.id);
    ids = rows.slice(offset, offset + limit).map((r) => r.id);
  } else {
    const direction = sort === "newest" ? "DESC" : "ASC";
    ids = conn
      .stmt(`SELECT messages_fts.rowid AS id ${base} ORDER BY messages_fts.rowid ${direction} LIMIT ? OFFSET ?`)
      .pluck()
      .all(...params, limit, offset) as number[];
  }

  const terms = highlightTerms(parsed);
  const hitStmt = conn.stmt(
    `SELECT m.id, m.session_id, m.role, m.content, m.content_parts, m.timestamp, m.tool_name,
            s.source, s.model, s.started_at
       FROM messages m JOIN sessions s ON s.id = m.session_id WHERE m.id = ?`,
  );
  const hits: SearchHit[] = [];
  for (const id of ids) {
    const row = hitStmt.get(id) as HitRow | undefined;
    if (row === undefined) continue;
    hits.push({
      messageId: row.id,
      sessionId: row.session_id,
      role: row.role as MessageRole,
      snippet: buildSnippet(contentText(rowContent(row)), terms),
      timestamp: row.timestamp,
      toolName: row.tool_name,
      source: row.source,
      model: row.model,
      sessionStartedAt: row.started_at,
      context: {
        before: neighbour(conn, row.session_id, row.id, "before"),
        after: neighbour(conn, row.session_id, row.id, "after"),
      },
    });
  }
  return hits;
}

function neighbour(conn: SqliteConnection, sessionId: string, id: number, side: "before" | "after"): ContextMessage | null {
  const sql =
    side === "before"
      ? `SELECT id, role, content, content_parts, timestamp FROM messages
          WHERE session_id = ? AND id < ? AND rewound_at IS NULL ORDER BY id DESC LIMIT 1`
      : `SELECT id, role, content, content_parts, timestamp FROM messages
          WHERE session_id = ? AND id > ? AND rewound_at IS NULL ORDER BY id LIMIT 1`;
  const row = conn.stmt(sql).get(sessionId, id) as Pick<MessageRow, "id" | "role" | "content" | "content_parts" | "timestamp"> | undefined;
  if (row === undefined) return null;
  return {
    id: row.id,
    role: row.role as MessageRole,
    content: contextText(contentText(rowContent(row))),
    timestamp: row.timestamp,
  };
}
