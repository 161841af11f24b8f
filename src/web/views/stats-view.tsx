/**
 * Usage statistics (`GET /stats/usage`) as charts: sessions and messages per day by source
 * (stacked bars), tokens and cost per model, and the database size — each chart with its
 * numbers in a table below it. The period is in the URL (`?days=30`). A scoped key sees
 * its own sessions' figures only, and no database size (the server answers `null`).
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api } from "../api-client.js";
import { BarChart, type ChartSeries } from "../bar-chart.js";
import { ErrorBox, Loading } from "../components.js";
import { formatCost, formatCount } from "../format.js";
import { href, navigate, type PageLocation } from "../router.js";
import type { UsageStats } from "../ops-api-types.js";

const PERIODS = [7, 30, 90, 365] as const;

function readDays(query: URLSearchParams): number {
  const days = Number(query.get("days"));
  return Number.isInteger(days) && days >= 1 && days <= 3660 ? days : 30;
}

/** Bytes as `12.3 MB`. */
function formatBytes(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** Per-day series by source: the days in order, one series per source (sorted). */
function perDay(stats: UsageStats, field: "sessions" | "messages"): { labels: string[]; series: ChartSeries[] } {
  const labels = [...new Set(stats.byDay.map((d) => d.day))].sort();
  const sources = [...new Set(stats.byDay.map((d) => d.source))].sort();
  const series = sources.map((source) => ({
    label: source,
    values: labels.map((day) => stats.byDay.find((d) => d.day === day && d.source === source)?.[field] ?? 0),
  }));
  return { labels, series };
}

/** The stats view. */
export function StatsView(props: { location: PageLocation }): preact.JSX.Element {
  const days = readDays(props.location.query);
  const [stats, setStats] = useState<UsageStats | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    setStats(null);
    api<UsageStats>("stats/usage", { query: { days }, signal: abort.signal })
      .then(setStats)
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setError(e instanceof Error ? e : new Error(String(e)));
      });
    return () => abort.abort();
  }, [days, attempt]);

  const sessions = stats === null ? null : perDay(stats, "sessions");
  const messages = stats === null ? null : perDay(stats, "messages");
  const models = stats === null ? [] : stats.byModel.map((m) => m.model ?? "(no model)");

  return (
    <section class="view stats-view" aria-labelledby="stats-heading">
      <h1 id="stats-heading">Stats</h1>
      <form class="filters" aria-label="Stats period" onSubmit={(e) => e.preventDefault()}>
        <label>
          Period
          <select
            name="days"
            value={String(days)}
            onChange={(e) =>
              navigate(href(["stats"], { days: (e.currentTarget as HTMLSelectElement).value === "30" ? null : (e.currentTarget as HTMLSelectElement).value }))
            }
          >
            {(PERIODS.includes(days as (typeof PERIODS)[number]) ? PERIODS : [...PERIODS, days]).map((d) => (
              <option value={String(d)} key={d}>
                last {d} days
              </option>
            ))}
          </select>
        </label>
      </form>
      {error !== null ? <ErrorBox error={error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      {stats === null && error === null ? <Loading /> : null}
      {stats !== null && sessions !== null && messages !== null ? (
        <>
          <dl class="totals">
            <div>
              <dt>Sessions</dt>
              <dd id="total-sessions">{formatCount(stats.totals.sessions)}</dd>
            </div>
            <div>
              <dt>Messages</dt>
              <dd id="total-messages">{formatCount(stats.totals.messages)}</dd>
            </div>
            <div>
              <dt>Tokens</dt>
              <dd id="total-tokens">{formatCount(stats.totals.inputTokens + stats.totals.outputTokens)}</dd>
            </div>
            <div>
              <dt>Cost</dt>
              <dd id="total-cost">{formatCost(stats.totals.estimatedCostUsd)}</dd>
            </div>
            {stats.databaseBytes !== null ? (
              <div>
                <dt>Database</dt>
                <dd id="database-size">{formatBytes(stats.databaseBytes)}</dd>
              </div>
            ) : null}
          </dl>
          <p class="note">
            Sessions started in the last {days} days; days in the server's time zone ({stats.timeZone}); a session's messages count on the day it started.
          </p>
          {stats.totals.sessions === 0 ? <p class="empty">No sessions in this period.</p> : null}
          <div class="charts">
            <BarChart name="chart-sessions" title="Sessions per day by platform" labelHeader="Day" labels={sessions.labels} series={sessions.series} stacked />
            <BarChart name="chart-messages" title="Messages per day by platform" labelHeader="Day" labels={messages.labels} series={messages.series} stacked />
            <BarChart
              name="chart-tokens"
              title="Tokens per model"
              labelHeader="Model"
              labels={models}
              horizontal
              stacked
              format={formatCount}
              series={[
                { label: "input", values: stats.byModel.map((m) => m.inputTokens) },
                { label: "output", values: stats.byModel.map((m) => m.outputTokens) },
              ]}
            />
            <BarChart
              name="chart-cost"
              title="Cost per model (USD, estimated)"
              labelHeader="Model"
              labels={models}
              horizontal
              format={formatCost}
              series={[{ label: "cost", values: stats.byModel.map((m) => m.estimatedCostUsd) }]}
            />
            {stats.databaseBytes !== null ? (
              <BarChart
                name="chart-database"
                title="Database size (MB)"
                labelHeader="Part"
                labels={["database file", "search index"]}
                horizontal
                format={(mb) => `${mb.toFixed(2)} MB`}
                series={[{ label: "MB", values: [stats.databaseBytes / 1048576, (stats.searchIndexBytes ?? 0) / 1048576] }]}
              />
            ) : (
              <p class="note" id="database-size-hidden">
                The database size is shown to admin keys only.
              </p>
            )}
          </div>
        </>
      ) : null}
    </section>
  );
}
