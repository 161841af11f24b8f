/**
 * Session listing on PostgreSQL: bounded, index-backed, keyset-paged, with the same
 * walk-and-merge plan as the SQLite backend (one index range per source and hidden
 * flag, newest first), so a page never costs more as the database grows.
 *
 * @module
 */
import type { ListSessionsOptions, Page, SessionSummary } from "../contract.js";
import { decodeCursor, encodeCursor, type CursorPosition } from "../cursor.js";
import { InvalidInputError } from "../errors.js";
import { checkLimit, checkNameList } from "../input-validation.js";
import type { Sql } from "./postgres-connection.js";
import { SUMMARY_COLUMNS, toSummary, type SummaryRow } from "./postgres-rows.js";

/** Default page size. */
export const DEFAULT_LIST_LIMIT = 20;

/** Every distinct source, by a loose index scan (one index seek per source). */
export async function distinctSources(sql: Sql): Promise<string[]> {
  return sql.column<string>(
    `WITH RECURSIVE s(source) AS (
       SELECT min(source) FROM sessions
       UNION ALL
       SELECT (SELECT min(source) FROM sessions WHERE source > s.source) FROM s WHERE s.source IS NOT NULL
     ) SELECT source FROM s WHERE source IS NOT NULL`,
  );
}

/** One page of sessions. */
export async function listSessions(sql: Sql, options: ListSessionsOptions = {}): Promise<Page<SessionSummary>> {
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

  let walk: Array<string | null> = [null];
  if (sources !== null) walk = excluded ? sources.filter((s) => !excluded.includes(s)) : sources;
  else if (excluded !== null) walk = (await distinctSources(sql)).filter((s) => !excluded.includes(s));

  let key: "last_active_at" | "started_at" | "chain_started_at";
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
      if (source !== null) where.push(`source = $${params.push(source)}`);
      if (hidden !== null) where.push(`list_hidden = $${params.push(hidden)}`);
      if (after !== null) where.push(`(${key}, id) < ($${params.push(after.key)}, $${params.push(after.id)})`);
      const text =
        `SELECT ${SUMMARY_COLUMNS} FROM sessions` +
        (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
        ` ORDER BY ${key} DESC, id DESC LIMIT $${params.push(limit + 1)}`;
      rows.push(...(await sql.all<SummaryRow>(text, params)));
    }
  }
  const sortKey = (row: SummaryRow): number => row[key];
  if (walk.length * hiddenValues.length > 1) {
    rows.sort((a, b) => sortKey(b) - sortKey(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > limit && last !== undefined ? encodeCursor({ order, key: sortKey(last), id: last.id }) : null;
  return { items: page.map((row) => toSummary(row, !includeChildren)), nextCursor };
}
