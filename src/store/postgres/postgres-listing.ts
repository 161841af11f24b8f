/**
 * Session listing on PostgreSQL: bounded, index-backed, keyset-paged, with the same
 * walk-and-merge plan as the SQLite backend (one index range per source and hidden
 * flag, newest first), so a page never costs more as the database grows.
 *
 * @module
 */
import type { ListSessionsOptions, Page, SessionSummary } from "../contract.js";
import { mergeListing, planListing } from "../listing-plan.js";
import { SUMMARY_COLUMNS, type SummaryRow } from "../session-rows.js";
import type { Sql } from "./postgres-connection.js";
import { decodeText, encodeText } from "./postgres-rows.js";

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
  const plan = await planListing(options, () => distinctSources(sql));
  const rows: SummaryRow[] = [];
  for (const { source, hidden } of plan.ranges) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (plan.userId !== null) where.push(`user_id = $${params.push(encodeText(plan.userId))}`);
    if (plan.userIds !== null) where.push(`user_id = ANY($${params.push(plan.userIds.map(encodeText))}::text[])`);
    if (plan.chatId !== null) where.push(`chat_id = $${params.push(encodeText(plan.chatId))}`);
    if (plan.sessionKey !== null) where.push(`session_key = $${params.push(encodeText(plan.sessionKey))}`);
    if (plan.models !== null) where.push(`model = ANY($${params.push(plan.models.map(encodeText))}::text[])`);
    if (plan.titled !== null) where.push(plan.titled ? "title IS NOT NULL" : "title IS NULL");
    if (plan.since !== null) where.push(`${plan.key} >= $${params.push(plan.since)}`);
    if (plan.until !== null) where.push(`${plan.key} < $${params.push(plan.until)}`);
    if (source !== null) where.push(`source = $${params.push(source)}`);
    if (hidden !== null) where.push(`list_hidden = $${params.push(hidden)}`);
    if (plan.after !== null) {
      where.push(`(${plan.key}, id) < ($${params.push(plan.after.key)}, $${params.push(plan.after.id)})`);
    }
    const text =
      `SELECT ${SUMMARY_COLUMNS} FROM sessions` +
      (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
      ` ORDER BY ${plan.key} DESC, id DESC LIMIT $${params.push(plan.limit + 1)}`;
    rows.push(...(await sql.all<SummaryRow>(text, params)));
  }
  return mergeListing(plan, rows, decodeText);
}
