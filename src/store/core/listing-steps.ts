/**
 * Session listing, once for every backend: bounded, index-backed, keyset-paged. Each filter
 * combination is answered by walking one or more index ranges newest-first and merging them
 * (listing-plan.ts), so the cost of a page never grows with the number of sessions or
 * messages in the database. The ranges of one listing are walked in one statement (each its own
 * limited subquery under `UNION ALL`): one round trip on PostgreSQL however many ranges.
 *
 * @module
 */
import type { ListSessionsOptions, Page, SessionSummary } from "../contract.js";
import { mergeListing, planListing } from "../listing-plan.js";
import { SUMMARY_COLUMNS, type SummaryRow, type TextDecoder } from "../session-rows.js";
import { all, column, placeholders, type Steps } from "./steps.js";

/** Every distinct source, by a loose index scan (one index seek per source). */
function* distinctSources(): Steps<string[]> {
  return yield* column<string>(
    `WITH RECURSIVE s(source) AS (
       SELECT min(source) FROM sessions
       UNION ALL
       SELECT (SELECT min(source) FROM sessions WHERE source > s.source) FROM s WHERE s.source IS NOT NULL
     ) SELECT source FROM s WHERE source IS NOT NULL`,
  );
}

/** One page of sessions; `encode`/`decode` are the dialect's free-text encoding. */
export function* listSessionsPage(
  options: ListSessionsOptions,
  encode: (value: string | null) => string | null,
  decode: TextDecoder,
): Steps<Page<SessionSummary>> {
  // Every source is needed only when some are excluded without a list to include.
  const sources = options.sources == null && options.excludeSources != null ? yield* distinctSources() : [];
  const plan = planListing(options, () => sources);
  const rows: SummaryRow[] = [];
  let batch: RangeQuery[] = [];
  let batchParams = 0;
  for (const { source, hidden } of plan.ranges) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (plan.userId !== null) {
      where.push("user_id = ?");
      params.push(encode(plan.userId));
    }
    if (plan.userIds !== null) {
      where.push(plan.userIds.length === 0 ? "1 = 0" : `user_id IN (${placeholders(plan.userIds.length)})`);
      params.push(...plan.userIds.map(encode));
    }
    if (plan.identities !== null) {
      where.push(plan.identities.length === 0 ? "1 = 0" : `(${plan.identities.map(() => "(source = ? AND user_id = ?)").join(" OR ")})`);
      for (const identity of plan.identities) params.push(identity.source, encode(identity.userId));
    }
    if (plan.chatId !== null) {
      where.push("chat_id = ?");
      params.push(encode(plan.chatId));
    }
    if (plan.sessionKey !== null) {
      where.push("session_key = ?");
      params.push(encode(plan.sessionKey));
    }
    if (plan.models !== null) {
      where.push(plan.models.length === 0 ? "1 = 0" : `model IN (${placeholders(plan.models.length)})`);
      params.push(...plan.models.map(encode));
    }
    if (plan.titled !== null) where.push(plan.titled ? "title IS NOT NULL" : "title IS NULL");
    if (plan.since !== null) {
      where.push(`${plan.key} >= ?`);
      params.push(plan.since);
    }
    if (plan.until !== null) {
      where.push(`${plan.key} < ?`);
      params.push(plan.until);
    }
    if (source !== null) {
      where.push("source = ?");
      params.push(source);
    }
    if (hidden !== null) {
      where.push("list_hidden = ?");
      params.push(hidden);
    }
    if (plan.after !== null) {
      where.push(`(${plan.key}, id) < (?, ?)`);
      params.push(plan.after.key, plan.after.id);
    }
    const sql = `SELECT ${SUMMARY_COLUMNS} FROM sessions${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${plan.key} DESC, id DESC LIMIT ?`;
    if (batch.length > 0 && (batch.length >= MAX_RANGES_PER_STATEMENT || batchParams + params.length + 1 > MAX_PARAMS_PER_STATEMENT)) {
      rows.push(...(yield* walkRanges(batch)));
      batch = [];
      batchParams = 0;
    }
    batch.push({ sql, params: [...params, plan.limit + 1] });
    batchParams += params.length + 1;
  }
  if (batch.length > 0) rows.push(...(yield* walkRanges(batch)));
  return mergeListing(plan, rows, decode);
}

/** One range's walk: its statement (`?` placeholders) and parameters. */
interface RangeQuery {
  sql: string;
  params: unknown[];
}

/**
 * Ranges walked in one statement (one round trip on PostgreSQL), at most this many: far below
 * SQLite's limit of 500 terms in a compound SELECT.
 */
const MAX_RANGES_PER_STATEMENT = 32;

/** Parameters of one statement at most (filters with long `IN` lists split the ranges over more statements). */
const MAX_PARAMS_PER_STATEMENT = 2_000;

/**
 * The rows of several range walks in one statement: each walk stays its own index-ordered,
 * limited subquery (`UNION ALL` only concatenates them; the page is merged in `mergeListing`).
 */
function* walkRanges(ranges: RangeQuery[]): Steps<SummaryRow[]> {
  if (ranges.length === 1) return yield* all<SummaryRow>(ranges[0]!.sql, ranges[0]!.params);
  const sql = ranges.map((range, i) => `SELECT * FROM (${range.sql}) AS r${i}`).join(" UNION ALL ");
  return yield* all<SummaryRow>(
    sql,
    ranges.flatMap((range) => range.params),
  );
}
