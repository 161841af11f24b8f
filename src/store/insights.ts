/**
 * What both backends share for {@link SessionDB.getInsights}: checking the options,
 * turning aggregate rows into {@link Insights}, and placing session starts in the local
 * week and day.
 *
 * Activity comes from the database as counts per quarter hour of absolute time (every
 * time zone's offset is a whole number of quarter hours), so the local weekday and hour
 * of each bucket are computed here, in the asking process's time zone, daylight saving
 * included — the database needs no notion of time zones.
 *
 * @module
 */
import type { Insights, InsightsDay, InsightsOptions, InsightsSession, InsightsTotals, ToolUsage } from "./contract.js";
import { InvalidInputError } from "./errors.js";
import { checkLimit, checkNameList, checkUserIdFilter } from "./input-validation.js";

/** Seconds per activity bucket (a quarter hour). */
export const ACTIVITY_BUCKET_SECONDS = 900;

/** The default period: the last 30 days. */
const DEFAULT_DAYS = 30;

/** Validated {@link InsightsOptions}. */
export interface CheckedInsightsOptions {
  since: number;
  until: number | null;
  sources: string[] | null;
  top: number;
  userId: string | null;
}

function checkEpoch(value: unknown, field: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidInputError(`${field} must be a time in epoch seconds (a finite number).`, { field });
  }
  return value;
}

/** Checks the options; `now` (epoch seconds) anchors the default period. */
export function checkInsightsOptions(options: InsightsOptions, now: number): CheckedInsightsOptions {
  if (options === null || typeof options !== "object") {
    throw new InvalidInputError("getInsights options must be an object.", { field: "options" });
  }
  const since = checkEpoch(options.since, "since") ?? now - DEFAULT_DAYS * 86_400;
  const until = checkEpoch(options.until, "until");
  if (until !== null && until < since) {
    throw new InvalidInputError("until must not be before since.", { field: "until" });
  }
  return {
    since,
    until,
    sources: checkNameList(options.sources, "sources"),
    top: checkLimit(options.top, 5, 100, "top"),
    userId: checkUserIdFilter(options.userId),
  };
}

/** A row of summed session columns, as both backends select them (numbers, maybe null when no row matched). */
export interface TotalsRow {
  sessions: number | null;
  messages: number | null;
  toolCalls: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  reasoningTokens: number | null;
  apiCalls: number | null;
  estimatedCostUsd: number | null;
  actualCostUsd: number | null;
}

/** The aggregate columns of a {@link TotalsRow} as SQL select items over `sessions` (cast `cast` wraps each sum). */
export function totalsSelect(cast: (expr: string) => string = (e) => e): string {
  const sum = (column: string, alias: string): string => `${cast(`coalesce(sum(${column}), 0)`)} AS "${alias}"`;
  return [
    `${cast("count(*)")} AS "sessions"`,
    sum("message_count", "messages"),
    sum("tool_call_count", "toolCalls"),
    sum("input_tokens", "inputTokens"),
    sum("output_tokens", "outputTokens"),
    sum("cache_read_tokens", "cacheReadTokens"),
    sum("cache_write_tokens", "cacheWriteTokens"),
    sum("reasoning_tokens", "reasoningTokens"),
    sum("api_calls", "apiCalls"),
    sum("estimated_cost_usd", "estimatedCostUsd"),
    sum("actual_cost_usd", "actualCostUsd"),
  ].join(", ");
}

/** Numbers of a totals row. */
export function toTotals(row: TotalsRow | undefined): InsightsTotals {
  const n = (v: number | null | undefined): number => Number(v ?? 0);
  return {
    sessions: n(row?.sessions),
    messages: n(row?.messages),
    toolCalls: n(row?.toolCalls),
    inputTokens: n(row?.inputTokens),
    outputTokens: n(row?.outputTokens),
    cacheReadTokens: n(row?.cacheReadTokens),
    cacheWriteTokens: n(row?.cacheWriteTokens),
    reasoningTokens: n(row?.reasoningTokens),
    apiCalls: n(row?.apiCalls),
    estimatedCostUsd: n(row?.estimatedCostUsd),
    actualCostUsd: n(row?.actualCostUsd),
  };
}

/** The session columns a ranked list selects (both backends). */
export const RANKED_COLUMNS =
  "id, title, source, model, started_at, ended_at, last_active_at, message_count, tool_call_count, " +
  "input_tokens, output_tokens, estimated_cost_usd, actual_cost_usd";

/** A row of {@link RANKED_COLUMNS}. */
export interface RankedRow {
  id: string;
  title: string | null;
  source: string;
  model: string | null;
  started_at: number;
  ended_at: number | null;
  last_active_at: number;
  message_count: number;
  tool_call_count: number;
  input_tokens: number | string;
  output_tokens: number | string;
  estimated_cost_usd: number;
  actual_cost_usd: number | null;
}

/** A ranked-list entry from its row (`decode` undoes a backend's encoding of free text such as the model). */
export function toInsightsSession(row: RankedRow, decode: (v: string | null) => string | null = (v) => v): InsightsSession {
  return {
    id: row.id,
    title: row.title,
    source: row.source,
    model: decode(row.model),
    startedAt: Number(row.started_at),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    lastActiveAt: Number(row.last_active_at),
    durationSeconds: Math.max(0, Number(row.last_active_at) - Number(row.started_at)),
    messageCount: Number(row.message_count),
    toolCallCount: Number(row.tool_call_count),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    estimatedCostUsd: Number(row.estimated_cost_usd),
    actualCostUsd: row.actual_cost_usd === null ? null : Number(row.actual_cost_usd),
  };
}

const byName = (a: string | null, b: string | null): number => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);

/** Session starts per quarter-hour bucket and source → sessions and messages per local day and source. */
export function localDays(buckets: ReadonlyArray<{ bucket: number; source: string; sessions: number; messages: number }>): InsightsDay[] {
  const days = new Map<string, InsightsDay>();
  const two = (n: number): string => String(n).padStart(2, "0");
  for (const row of buckets) {
    const d = new Date(Number(row.bucket) * ACTIVITY_BUCKET_SECONDS * 1000);
    const day = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
    const key = `${day}\u0000${row.source}`;
    const entry = days.get(key) ?? { day, source: row.source, sessions: 0, messages: 0 };
    entry.sessions += Number(row.sessions);
    entry.messages += Number(row.messages);
    days.set(key, entry);
  }
  return [...days.values()].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : byName(a.source, b.source)));
}

const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"] as const;

/** Session starts per quarter-hour bucket (`bucket` = floor(started_at / 900)) → local weekday, hour and active days. */
export function localActivity(buckets: ReadonlyArray<{ bucket: number; sessions: number }>): Insights["activity"] {
  const byWeekday = new Array<number>(7).fill(0);
  const byHour = new Array<number>(24).fill(0);
  const days = new Set<string>();
  for (const { bucket, sessions } of buckets) {
    const n = Number(sessions);
    if (n <= 0) continue;
    const d = new Date(Number(bucket) * ACTIVITY_BUCKET_SECONDS * 1000);
    byWeekday[(d.getDay() + 6) % 7]! += n;
    byHour[d.getHours()]! += n;
    days.add(`${d.getFullYear()}-${d.getMonth()}-${d.getDate()}`);
  }
  return {
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    byWeekday: WEEKDAYS.map((weekday, i) => ({ weekday, sessions: byWeekday[i]! })),
    byHour: byHour.map((sessions, hour) => ({ hour, sessions })),
    activeDays: days.size,
  };
}

/** The rows a backend gathers, put together in the documented orders. */
export function assembleInsights(
  checked: CheckedInsightsOptions,
  parts: {
    totals: TotalsRow | undefined;
    byModel: Array<TotalsRow & { model: string | null }>;
    bySource: Array<TotalsRow & { source: string }>;
    tools: Array<{ tool: string; calls: number | string; sessions: number | string }>;
    activity: ReadonlyArray<{ bucket: number; source: string; sessions: number; messages: number }>;
    longest: InsightsSession[];
    costliest: InsightsSession[];
  },
): Insights {
  const byModel = parts.byModel
    .map((row) => ({ model: row.model, ...toTotals(row) }))
    .sort((a, b) => b.estimatedCostUsd - a.estimatedCostUsd || b.sessions - a.sessions || byName(a.model, b.model));
  const bySource = parts.bySource
    .map((row) => ({ source: row.source, ...toTotals(row) }))
    .sort((a, b) => b.sessions - a.sessions || byName(a.source, b.source));
  // Rows are merged by name: a backend may store one name in two encodings.
  const merged = new Map<string, ToolUsage>();
  for (const row of parts.tools) {
    const entry = merged.get(row.tool) ?? { tool: row.tool, calls: 0, sessions: 0 };
    entry.calls += Number(row.calls);
    entry.sessions += Number(row.sessions);
    merged.set(row.tool, entry);
  }
  const tools = [...merged.values()].sort((a, b) => b.calls - a.calls || byName(a.tool, b.tool));
  return {
    since: checked.since,
    until: checked.until,
    sources: checked.sources,
    totals: toTotals(parts.totals),
    byModel,
    bySource,
    tools,
    activity: localActivity(parts.activity),
    byDay: localDays(parts.activity),
    longest: parts.longest,
    costliest: parts.costliest,
  };
}

/** Tool names called by a message's tool calls (one entry per call), for the per-session tally. */
export function calledToolNames(toolCalls: ReadonlyArray<{ function: { name: string } }> | null): string[] {
  return toolCalls === null ? [] : toolCalls.map((call) => call.function.name);
}

/** Adds one message's called tool names into a tally. */
export function tallyTools(tally: Map<string, number>, names: readonly string[]): void {
  for (const name of names) tally.set(name, (tally.get(name) ?? 0) + 1);
}
