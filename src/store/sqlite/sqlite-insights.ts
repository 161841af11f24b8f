/**
 * Insights on SQLite: group-by queries over the kept session columns and the per-session
 * tool tally (`session_tool_calls`), in one read transaction so every figure describes
 * the same moment. No message row is read.
 *
 * @module
 */
import type { Insights } from "../contract.js";
import {
  ACTIVITY_BUCKET_SECONDS,
  assembleInsights,
  RANKED_COLUMNS,
  toInsightsSession,
  totalsSelect,
  type CheckedInsightsOptions,
  type RankedRow,
  type TotalsRow,
} from "../insights.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** Reads the insights of the sessions the options select. */
export function readInsights(conn: SqliteConnection, checked: CheckedInsightsOptions): Insights {
  const params: unknown[] = [checked.since];
  let where = "s.started_at >= ?";
  if (checked.until !== null) {
    where += " AND s.started_at < ?";
    params.push(checked.until);
  }
  if (checked.userId !== null) {
    where += " AND s.user_id = ?";
    params.push(checked.userId);
  }
  if (checked.sources !== null) {
    where += ` AND s.source IN (${checked.sources.map(() => "?").join(", ")})`;
    params.push(...checked.sources);
  }
  const totals = totalsSelect();
  const read = conn.db.transaction(() => ({
    totals: conn.stmt(`SELECT ${totals} FROM sessions s WHERE ${where}`).get(...params) as TotalsRow | undefined,
    byModel: conn.stmt(`SELECT s.model AS model, ${totals} FROM sessions s WHERE ${where} GROUP BY s.model`).all(...params) as Array<
      TotalsRow & { model: string | null }
    >,
    bySource: conn.stmt(`SELECT s.source AS source, ${totals} FROM sessions s WHERE ${where} GROUP BY s.source`).all(...params) as Array<
      TotalsRow & { source: string }
    >,
    tools: conn
      .stmt(
        `SELECT t.tool_name AS tool, sum(t.calls) AS calls, count(*) AS sessions
           FROM sessions s JOIN session_tool_calls t ON t.session_id = s.id
          WHERE ${where} GROUP BY t.tool_name`,
      )
      .all(...params) as Array<{ tool: string; calls: number; sessions: number }>,
    activity: conn
      .stmt(
        `SELECT CAST(s.started_at / ${ACTIVITY_BUCKET_SECONDS} AS INTEGER) AS bucket, s.source AS source,
                count(*) AS sessions, coalesce(sum(s.message_count), 0) AS messages
           FROM sessions s WHERE ${where} GROUP BY bucket, s.source`,
      )
      .all(...params) as Array<{ bucket: number; source: string; sessions: number; messages: number }>,
    longest: (
      conn
        .stmt(
          `SELECT ${RANKED_COLUMNS} FROM sessions s WHERE ${where}
          ORDER BY s.last_active_at - s.started_at DESC, s.id LIMIT ?`,
        )
        .all(...params, checked.top) as RankedRow[]
    ).map((row) => toInsightsSession(row)),
    costliest: (
      conn
        .stmt(
          `SELECT ${RANKED_COLUMNS} FROM sessions s WHERE ${where} AND s.estimated_cost_usd > 0
          ORDER BY s.estimated_cost_usd DESC, s.id LIMIT ?`,
        )
        .all(...params, checked.top) as RankedRow[]
    ).map((row) => toInsightsSession(row)),
  }));
  return assembleInsights(checked, read.deferred());
}
