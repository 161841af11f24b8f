/**
 * Session listing on SQLite: bounded, index-backed, keyset-paged. Each filter
 * combination is answered by walking one or more index ranges newest-first and
 * merging them, so the cost of a page never grows with the number of sessions or
 * messages in the database.
 *
 * @module
 */
import type { ListSessionsOptions, Page, SessionSummary } from "../contract.js";
import { decodeCursor, encodeCursor, type CursorPosition } from "../cursor.js";
import { InvalidInputError } from "../errors.js";
import { checkLimit, checkNameList } from "../input-validation.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { SUMMARY_COLUMNS, toSummary, type SummaryRow } from "./sqlite-rows.js";

/** Default page size. */
export const DEFAULT_LIST_LIMIT = 20;

/** Every distinct source, by a loose index scan (one index seek per source). */
export function distinctSources(conn: SqliteConnection): string[] {
  return conn
    .stmt(
      `WITH RECURSIVE s(source) AS (
         SELECT min(source) FROM sessions
         UNION ALL
         SELECT (SELECT min(source) FROM sessions WHERE source > s.source) FROM s WHERE s.source IS NOT NULL
       ) SELECT source FROM s WHERE source IS NOT NULL`,
    )
    .pluck()
    .all() as string[];
}

/** One page of sessions. */
export function listSessions(conn: SqliteConnection, options: ListSessionsOptions = {}): Page<SessionSummary> {
  const limit = checkLimit(options.limit, DEFAULT_LIST_LIMIT);
  const orderBy = options.orderBy ?? "lastActive";
  if (orderBy !== "lastActive" && orderBy !== "started") {
    throw new InvalidInputError(`orderBy must be "lastActive" or "started", not "${String(orderBy)}".`, { field: "orderBy" });
  }
  const includeChildren = options.includeChildren === true;
  const sources = checkNameList(options.sources, "sources");
  const excluded = checkNameList(options.excludeSources, "excludeSources");
  const order = `${orderBy}:${includeChildren ? "all" : "tips"}`;
  const after: CursorPosition | null =
    options.cursor === undefined || options.cursor === null ? null : decodeCursor(options.cursor, order);

  // Which sources to walk: null = no source constraint (one range over all sources).
  let walk: Array<string | null> = [null];
  if (sources !== null) walk = excluded ? sources.filter((s) => !excluded.includes(s)) : sources;
  else if (excluded !== null) walk = distinctSources(conn).filter((s) => !excluded.includes(s));

  // Which hidden flags to walk, and the column that orders the rows.
  let key: string;
  let hiddenValues: Array<number | null>;
  if (orderBy === "lastActive") {
    key = "last_active_at";
    hiddenValues = includeChildren ? [0, 1] : [0];
  } else if (includeChildren) {
    key = "started_at";
    hiddenValues = [null];
  } else {
    key = "chain_started_at";
    hiddenValues = [0];
  }

  const rows: SummaryRow[] = [];
  for (const source of walk) {
    for (const hidden of hiddenValues) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (source !== null) {
        where.push("source = ?");
        params.push(source);
      }
      if (hidden !== null) {
        where.push("list_hidden = ?");
        params.push(hidden);
      }
      if (after !== null) {
        where.push(`(${key}, id) < (?, ?)`);
        params.push(after.key, after.id);
      }
      const sql =
        `SELECT ${SUMMARY_COLUMNS} FROM sessions` +
        (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
        ` ORDER BY ${key} DESC, id DESC LIMIT ?`;
      rows.push(...(conn.stmt(sql).all(...params, limit + 1) as SummaryRow[]));
    }
  }
  const sortKey = (row: SummaryRow): number => row[key as "last_active_at"];
  if (walk.length * hiddenValues.length > 1) {
    rows.sort((a, b) => sortKey(b) - sortKey(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last !== undefined ? encodeCursor({ order, key: sortKey(last), id: last.id }) : null;
  return { items: page.map((row) => toSummary(row, !includeChildren)), nextCursor };
}
