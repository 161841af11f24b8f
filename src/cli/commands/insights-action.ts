/**
 * `threadline insights [--days 30] [--source S] [--top 5] [--json]`: token usage and
 * estimated cost by model and by source, tool calls by tool, activity by weekday and hour
 * (local time), and the longest and costliest sessions of a period — answered from the
 * store's kept aggregates ({@link SessionDB.getInsights}), never by reading messages.
 *
 * The action of the command defined in insights-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import type { Insights, InsightsSession, InsightsTotals } from "../../store/index.js";
import { styles, table, truncate, useColor, writeJson, type CliIo } from "../cli-output.js";
import { CliError, parseCount, withExistingDatabase } from "../cli-context.js";
import { formatLocalDateTime } from "../local-time.js";
import { MAX_DAYS } from "./insights-command.js";

interface InsightsOptions {
  db?: string;
  days: string;
  source?: string[];
  top: string;
  json?: boolean;
}

/** Tools listed in the text output (JSON lists every tool). */
const TOOLS_SHOWN = 15;

/** Control characters of stored names shown as `?`, so stored text cannot drive the terminal. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/gu, "?");
}

const count = (v: number): string => Math.round(v).toLocaleString("en-US");
const usd = (v: number): string => `$${v.toFixed(v !== 0 && Math.abs(v) < 1 ? 4 : 2)}`;

function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

function bar(value: number, peak: number, width = 20): string {
  return value <= 0 || peak <= 0 ? "" : "█".repeat(Math.max(1, Math.round((value / peak) * width)));
}

function groupRows(rows: Array<InsightsTotals & { name: string }>): string[][] {
  return rows.map((r) => [
    printable(truncate(r.name, 32)),
    count(r.sessions),
    count(r.messages),
    count(r.inputTokens),
    count(r.outputTokens),
    usd(r.estimatedCostUsd),
  ]);
}

function sessionRows(sessions: InsightsSession[], value: (s: InsightsSession) => string): string[][] {
  return sessions.map((s) => [value(s), formatLocalDateTime(s.startedAt), printable(truncate(s.title ?? "-", 30)), s.id]);
}

/** The report as text lines. */
function render(insights: Insights, days: number, color: boolean): string[] {
  const s = styles(color);
  const section = (title: string, body: string): string[] => {
    const [header, ...rows] = body.split("\n");
    return ["", s.bold(title), `  ${s.dim(header ?? "")}`, ...rows.map((r) => `  ${r}`)];
  };
  const t = insights.totals;
  const scope = insights.sources === null ? "" : ` (source: ${insights.sources.map(printable).join(", ")})`;
  const lines = [s.bold(`Insights: sessions started in the last ${days} day${days === 1 ? "" : "s"}${scope}, since ${formatLocalDateTime(insights.since)}`)];
  if (t.sessions === 0) {
    lines.push("", "No sessions in this period.");
    return lines;
  }
  const actual = t.actualCostUsd > 0 ? ` (actual, where known: ${usd(t.actualCostUsd)})` : "";
  lines.push(
    "",
    `  Sessions     ${count(t.sessions)}`,
    `  Messages     ${count(t.messages)}`,
    `  Tool calls   ${count(t.toolCalls)}`,
    `  Tokens       ${count(t.inputTokens)} in, ${count(t.outputTokens)} out, ${count(t.cacheReadTokens)} cache read, ${count(t.cacheWriteTokens)} cache write`,
    `  Est. cost    ${usd(t.estimatedCostUsd)}${actual}`,
  );
  const groupHeader = ["", "Sessions", "Messages", "Input tok", "Output tok", "Est. cost"];
  lines.push(...section("By model", table(["Model", ...groupHeader.slice(1)], groupRows(insights.byModel.map((m) => ({ ...m, name: m.model ?? "(none)" }))))));
  lines.push(...section("By source", table(["Source", ...groupHeader.slice(1)], groupRows(insights.bySource.map((m) => ({ ...m, name: m.source }))))));
  if (insights.tools.length > 0) {
    const shown = insights.tools.slice(0, TOOLS_SHOWN);
    const totalCalls = insights.tools.reduce((sum, tool) => sum + tool.calls, 0);
    lines.push(
      ...section(
        "Tool calls",
        table(
          ["Tool", "Calls", "Share", "Sessions"],
          shown.map((tool) => [
            printable(truncate(tool.tool, 32)),
            count(tool.calls),
            `${((tool.calls / totalCalls) * 100).toFixed(1)}%`,
            count(tool.sessions),
          ]),
        ),
      ),
    );
    if (insights.tools.length > shown.length) lines.push(`  … and ${insights.tools.length - shown.length} more tools (--json lists all)`);
  }
  const activity = insights.activity;
  const dayPeak = Math.max(...activity.byWeekday.map((d) => d.sessions));
  lines.push("", s.bold(`Sessions started by weekday (${activity.timeZone})`));
  for (const d of activity.byWeekday) lines.push(`  ${d.weekday}  ${String(d.sessions).padStart(6)}  ${bar(d.sessions, dayPeak)}`.trimEnd());
  const hourPeak = Math.max(...activity.byHour.map((h) => h.sessions));
  lines.push("", s.bold(`Sessions started by hour (${activity.timeZone})`));
  for (const h of activity.byHour)
    lines.push(`  ${String(h.hour).padStart(2, "0")}:00  ${String(h.sessions).padStart(6)}  ${bar(h.sessions, hourPeak)}`.trimEnd());
  lines.push(`  Active days: ${activity.activeDays}`);
  lines.push(
    ...section(
      "Longest sessions",
      table(
        ["Duration", "Started", "Title", "ID"],
        sessionRows(insights.longest, (x) => duration(x.durationSeconds)),
      ),
    ),
  );
  if (insights.costliest.length > 0) {
    lines.push(
      ...section(
        "Costliest sessions",
        table(
          ["Est. cost", "Started", "Title", "ID"],
          sessionRows(insights.costliest, (x) => usd(x.estimatedCostUsd)),
        ),
      ),
    );
  }
  return lines;
}

/** Runs `insights`: the action of makeInsightsCommand (in insights-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: InsightsOptions): Promise<void> {
  const days = parseCount(options.days, "--days");
  if (days > MAX_DAYS) throw new CliError("TL_ERR_USAGE", `--days must be at most ${MAX_DAYS} (got ${days}).`);
  const top = parseCount(options.top, "--top");
  if (top > 100) throw new CliError("TL_ERR_USAGE", `--top must be at most 100 (got ${top}).`);
  await withExistingDatabase(options.db, io.env, async (db, where) => {
    const sources = options.source !== undefined && options.source.length > 0 ? options.source : undefined;
    const insights = await db.getInsights({ since: Date.now() / 1000 - days * 86_400, top, ...(sources === undefined ? {} : { sources }) });
    if (options.json) {
      writeJson(io, { location: where.location, backend: db.capabilities.backend, days, ...insights });
      return;
    }
    io.stdout.write(`${render(insights, days, useColor(io)).join("\n")}\n`);
  });
}
