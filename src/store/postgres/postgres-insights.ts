/**
 * Insights on PostgreSQL: group-by queries over the kept session columns and the
 * per-session tool tally (`session_tool_calls`), in one REPEATABLE READ transaction so
 * every figure describes the same snapshot. No message row is read.
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
import type { Sql } from "./postgres-connection.js";
import { decodeText, encodeText } from "./postgres-rows.js";

/** Reads the insights of the sessions the options select (run inside a transaction). */
export async function readInsights(sql: Sql, checked: CheckedInsightsOptions): Promise<Insights> {
  const params: unknown[] = [checked.since];
  let where = "s.started_at >= $1";
  if (checked.until !== null) where += ` AND s.started_at < $${params.push(checked.until)}`;
  if (checked.userId !== null) where += ` AND s.user_id = $${params.push(encodeText(checked.userId))}`;
  if (checked.sources !== null) where += ` AND s.source = ANY($${params.push(checked.sources)}::text[])`;
  const totals = totalsSelect((expr) => `(${expr})::float8`);
  const top = `$${params.length + 1}`;
  const totalsRow = await sql.one<TotalsRow>(`SELECT ${totals} FROM sessions s WHERE ${where}`, params);
  const byModel = await sql.all<TotalsRow & { model: string | null }>(
    `SELECT s.model AS model, ${totals} FROM sessions s WHERE ${where} GROUP BY s.model`,
    params,
  );
  const bySource = await sql.all<TotalsRow & { source: string }>(
    `SELECT s.source AS source, ${totals} FROM sessions s WHERE ${where} GROUP BY s.source`,
    params,
  );
  const tools = await sql.all<{ tool: string; calls: number; sessions: number }>(
    `SELECT t.tool_name AS tool, sum(t.calls)::float8 AS calls, count(*)::int AS sessions
       FROM sessions s JOIN session_tool_calls t ON t.session_id = s.id
      WHERE ${where} GROUP BY t.tool_name`,
    params,
  );
  const activity = await sql.all<{ bucket: number; source: string; sessions: number; messages: number }>(
    `SELECT floor(s.started_at / ${ACTIVITY_BUCKET_SECONDS})::float8 AS bucket, s.source AS source,
            count(*)::int AS sessions, coalesce(sum(s.message_count), 0)::float8 AS messages
       FROM sessions s WHERE ${where} GROUP BY 1, 2`,
    params,
  );
  const longest = await sql.all<RankedRow>(
    `SELECT ${RANKED_COLUMNS} FROM sessions s WHERE ${where}
      ORDER BY s.last_active_at - s.started_at DESC, s.id LIMIT ${top}`,
    [...params, checked.top],
  );
  const costliest = await sql.all<RankedRow>(
    `SELECT ${RANKED_COLUMNS} FROM sessions s WHERE ${where} AND s.estimated_cost_usd > 0
      ORDER BY s.estimated_cost_usd DESC, s.id LIMIT ${top}`,
    [...params, checked.top],
  );
  return assembleInsights(checked, {
    totals: totalsRow,
    byModel: byModel.map((row) => ({ ...row, model: decodeText(row.model) })),
    bySource,
    tools: tools.map((row) => ({ ...row, tool: decodeText(row.tool) })),
    activity,
    longest: longest.map((row) => toInsightsSession(row, decodeText)),
    costliest: costliest.map((row) => toInsightsSession(row, decodeText)),
  });
}
