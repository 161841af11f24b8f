import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, nowSeconds, parseJson, type TempHome } from "./sessions/cli-harness.js";
import { addSession, addToolSession, DAY } from "./sessions/fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

interface InsightsJson {
  location: string;
  backend: string;
  days: number;
  since: number;
  sources: string[] | null;
  totals: { sessions: number; messages: number; toolCalls: number; inputTokens: number; estimatedCostUsd: number };
  byModel: Array<{ model: string | null; sessions: number; inputTokens: number; estimatedCostUsd: number }>;
  bySource: Array<{ source: string; sessions: number }>;
  tools: Array<{ tool: string; calls: number; sessions: number }>;
  activity: {
    timeZone: string;
    byWeekday: Array<{ weekday: string; sessions: number }>;
    byHour: Array<{ hour: number; sessions: number }>;
    activeDays: number;
  };
  longest: Array<{ id: string; durationSeconds: number }>;
  costliest: Array<{ id: string; estimatedCostUsd: number }>;
}

describe("threadline insights", { timeout: 120_000 }, () => {
  it("prints usage and cost by model and source, tool calls, activity and the notable sessions", async () => {
    const toolSession = await t.seed(async (db) => {
      const id = await addToolSession(db);
      await addSession(db, { text: "a", source: "telegram", model: "claude" });
      await addSession(db, { text: "old", source: "telegram", ago: 40 * DAY });
      return id;
    });
    const result = await t.run(["insights", "--db", t.db]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/^Insights: sessions started in the last 30 days, since \d{4}-\d\d-\d\d \d\d:\d\d$/mu);
    expect(out).toMatch(/^ {2}Sessions +2$/mu); // the 40-day-old one is outside the period
    expect(out).toMatch(/^ {2}Tool calls +3$/mu);
    expect(out).toMatch(/^ {2}Est\. cost +\$0\.0123$/mu);
    expect(out).toMatch(/^ {2}gpt-4o +1 +7 +1,200 +300 +\$0\.0123$/mu);
    expect(out).toMatch(/^ {2}claude +1 +1 +0 +0 +\$0\.00$/mu);
    expect(out).toMatch(/^ {2}terminal +2 +66\.7% +1$/mu);
    expect(out).toMatch(/^ {2}web_search +1 +33\.3% +1$/mu);
    expect(out).toMatch(/^Sessions started by weekday \(.+\)$/mu);
    expect(out).toMatch(/^ {2}23:00 +\d+( +█+)?$/mu);
    expect(out).toMatch(/^Longest sessions$/mu);
    expect(out).toMatch(new RegExp(`^ {2}\\$0\\.0123 +\\d{4}-.* ${toolSession}$`, "mu"));
  });

  it("--json carries every figure; --days and --source narrow the period and the sources", async () => {
    await t.seed(async (db) => {
      await addToolSession(db);
      await addSession(db, { text: "a", source: "telegram" });
      await addSession(db, { text: "old", source: "telegram", ago: 40 * DAY });
    });
    const json = parseJson<InsightsJson>(await t.run(["insights", "--json", "--db", t.db]));
    expect(json).toMatchObject({ location: t.db, backend: "sqlite", days: 30, sources: null });
    expect(Math.abs(json.since - (nowSeconds() - 30 * DAY))).toBeLessThan(600);
    expect(json.totals).toMatchObject({ sessions: 2, messages: 8, toolCalls: 3, inputTokens: 1200, estimatedCostUsd: 0.0123 });
    expect(json.tools).toEqual([
      { tool: "terminal", calls: 2, sessions: 1 },
      { tool: "web_search", calls: 1, sessions: 1 },
    ]);
    expect(json.bySource).toMatchObject([
      { source: "cli", sessions: 1 },
      { source: "telegram", sessions: 1 },
    ]);
    expect(json.activity.byWeekday).toHaveLength(7);
    expect(json.activity.byHour.reduce((n, h) => n + h.sessions, 0)).toBe(2);
    expect(json.costliest.map((s) => s.estimatedCostUsd)).toEqual([0.0123]);

    const wide = parseJson<InsightsJson>(await t.run(["insights", "--json", "--days", "60", "--source", "telegram", "--db", t.db]));
    expect(wide).toMatchObject({ days: 60, sources: ["telegram"], totals: { sessions: 2, toolCalls: 0 }, tools: [] });
  });

  it("weekday and hour are in the local time zone of the command", async () => {
    // 2026-03-02 03:45 UTC is Monday 09:15 in India (UTC+05:30).
    // The time zone is the process's (TZ): these runs are child processes.
    const startedAt = Date.UTC(2026, 2, 2, 3, 45) / 1000;
    await t.seed((db) => db.createSession({ source: "cli", startedAt }));
    const days = String(Math.ceil((nowSeconds() - startedAt) / DAY) + 1);
    const hours = (json: InsightsJson): number[] => json.activity.byHour.filter((h) => h.sessions > 0).map((h) => h.hour);
    const india = parseJson<InsightsJson>(await t.runChild(["insights", "--json", "--days", days, "--db", t.db], { env: { TZ: "Asia/Kolkata" } }));
    expect(["Asia/Kolkata", "Asia/Calcutta"]).toContain(india.activity.timeZone);
    expect(hours(india)).toEqual([9]);
    expect(india.activity.byWeekday.find((d) => d.sessions > 0)?.weekday).toBe("Mon");
    const honolulu = parseJson<InsightsJson>(await t.runChild(["insights", "--json", "--days", days, "--db", t.db], { env: { TZ: "Pacific/Honolulu" } }));
    expect(hours(honolulu)).toEqual([17]); // Sunday 17:45 (UTC−10)
    expect(honolulu.activity.byWeekday.find((d) => d.sessions > 0)?.weekday).toBe("Sun");
    const text = await t.runChild(["insights", "--days", days, "--db", t.db], { env: { TZ: "Asia/Kolkata" } });
    expect(text.stdout).toMatch(/^ {2}09:00 +1 +█+$/mu);
  });

  it("an empty period says so", async () => {
    await t.seed((db) => addSession(db, { text: "old", ago: 40 * DAY }));
    const result = await t.run(["insights", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^No sessions in this period\.$/mu);
  });

  it("stored tool names cannot drive the terminal", async () => {
    await t.seed(async (db) => {
      const s = await db.createSession({ source: "cli" });
      await db.appendMessage(s.id, {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "c", type: "function", function: { name: "evil\u001b[2Jname", arguments: "{}" } }],
      });
    });
    const result = await t.run(["insights", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("\u001b");
    expect(result.stdout).toMatch(/^ {2}evil\?\[2Jname +1 /mu);
  });

  it("refuses a missing database file it was given without creating it; the default one missing reads as empty", async () => {
    const missing = join(t.dir, "nope.db");
    const result = await t.run(["insights", "--db", missing]);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      `threadline: No database at ${missing}. Check the path (--db, THREADLINE_DB or the config file's database); only chat, serve, import and api create a new database.\n`,
    );
    expect(existsSync(missing)).toBe(false);
    // The default database not created yet is a first run: no sessions (exit 0), and nothing is created.
    const byDefault = await t.run(["insights"]);
    expect(byDefault.code).toBe(0);
    expect(byDefault.stdout).toContain("No sessions in this period.");
    expect(existsSync(join(t.home, "state.db"))).toBe(false);
  });

  it("bad --days and --top are usage errors", async () => {
    await t.seed((db) => addSession(db, { text: "a" }));
    for (const args of [
      ["--days", "0"],
      ["--days", "abc"],
      ["--days", "36501"],
      ["--top", "0"],
      ["--top", "101"],
    ]) {
      const result = await t.run(["insights", ...args, "--db", t.db]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(/^threadline: --(days|top) must be/u);
    }
  });
});
