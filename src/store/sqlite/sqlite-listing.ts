/**
 * Session listing on SQLite: bounded, index-backed, keyset-paged. Each filter
 * combination is answered by walking one or more index ranges newest-first and
 * merging them, so the cost of a page never grows with the number of sessions or
 * messages in the database.
 *
 * @module
 */
import type { ListSessionsOptions, Page, SessionSummary } from "../contract.js";
import { mergeListing, planListing } from "../listing-plan.js";
import { SUMMARY_COLUMNS, type SummaryRow } from "../session-rows.js";
import type { SqliteConnection } from "./sqlite-connection.js";

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
export async function listSessions(conn: SqliteConnection, options: ListSessionsOptions = {}): Promise<Page<SessionSummary>> {
  const plan = await planListing(options, () => distinctSources(conn));
  const rows: SummaryRow[] = [];
  for (const { source, hidden } of plan.ranges) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (plan.userId !== null) {
      where.push("user_id = ?");
      params.push(plan.userId);
    }
    if (plan.userIds !== null) {
      where.push(plan.userIds.length === 0 ? "0" : `user_id IN (${plan.userIds.map(() => "?").join(", ")})`);
      params.push(...plan.userIds);
    }
    if (plan.chatId !== null) {
      where.push("chat_id = ?");
      params.push(plan.chatId);
    }
    if (plan.sessionKey !== null) {
      where.push("session_key = ?");
      params.push(plan.sessionKey);
    }
    if (plan.models !== null) {
      where.push(plan.models.length === 0 ? "0" : `model IN (${plan.models.map(() => "?").join(", ")})`);
      params.push(...plan.models);
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
    const sql =
      `SELECT ${SUMMARY_COLUMNS} FROM sessions` +
      (where.length ? ` WHERE ${where.join(" AND ")}` : "") +
      ` ORDER BY ${plan.key} DESC, id DESC LIMIT ?`;
    rows.push(...(conn.stmt(sql).all(...params, plan.limit + 1) as SummaryRow[]));
  }
  return mergeListing(plan, rows);
}
