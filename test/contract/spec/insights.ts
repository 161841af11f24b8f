/**
 * Contract: `getInsights` — usage, cost, tool calls and activity over a period, from kept
 * aggregates (the per-session tool tally follows every transcript write).
 *
 * @module
 */

import { expect } from "vitest";
import type { Insights, NewMessage, ToolCall } from "../../../src/store/contract.js";
import { ConflictError, InvalidInputError, LeaseLostError, NotFoundError } from "../../../src/store/errors.js";
import { assistant, collect, contractArea, DAY, expectReject, nowSeconds, routeFields, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const call = (id: string, name: string): ToolCall => ({ id, type: "function", function: { name, arguments: "{}" } });

/** An assistant message calling `names`, one call each. */
function calling(names: string[], prefix = "c"): NewMessage {
  return { role: "assistant", content: null, toolCalls: names.map((n, i) => call(`${prefix}${i}`, n)) };
}

function tools(insights: Insights): Record<string, [number, number]> {
  return Object.fromEntries(insights.tools.map((t) => [t.tool, [t.calls, t.sessions]]));
}

/** Epoch seconds of a local wall-clock time. */
function local(year: number, month: number, day: number, hour: number, minute: number): number {
  return new Date(year, month - 1, day, hour, minute).getTime() / 1000;
}

export function insightsTests(init: SessionDBTestInitializer): void {
  contractArea(init, "insights", (test, { db }) => {
    test("an empty store: zero totals, empty lists, seven weekdays and 24 hours", async () => {
      const insights = await db().getInsights();
      expect(insights.totals).toEqual({
        sessions: 0,
        messages: 0,
        toolCalls: 0,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        apiCalls: 0,
        estimatedCostUsd: 0,
        actualCostUsd: 0,
      });
      expect(insights).toMatchObject({ byModel: [], bySource: [], tools: [], longest: [], costliest: [], until: null, sources: null });
      expect(insights.activity.byWeekday.map((d) => d.weekday)).toEqual(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]);
      expect(insights.activity.byHour.map((h) => h.hour)).toEqual(Array.from({ length: 24 }, (_, i) => i));
      expect(insights.activity.activeDays).toBe(0);
      expect(Math.abs(insights.since - (nowSeconds() - 30 * DAY))).toBeLessThan(600);
    });

    test("totals by model and by source over the sessions started in the period", async () => {
      const now = nowSeconds();
      await db().createSession({ id: "a", source: "cli", model: "gpt-4o", startedAt: now - 2 * DAY });
      await db().createSession({ id: "b", source: "telegram", model: "gpt-4o", startedAt: now - 3 * DAY });
      await db().createSession({ id: "c", source: "telegram", model: "claude", startedAt: now - 4 * DAY });
      await db().createSession({ id: "old", source: "cli", model: "gpt-4o", startedAt: now - 40 * DAY });
      await db().appendTurn("a", [user("one"), assistant("two")]);
      await db().appendTurn("b", [user("three"), assistant("four"), user("hidden")]);
      await db().rewind("b");
      await db().appendTurn("old", [user("x"), assistant("y")]);
      await db().recordUsage("a", {
        inputTokens: 100,
        outputTokens: 10,
        cacheReadTokens: 1,
        cacheWriteTokens: 2,
        reasoningTokens: 3,
        apiCalls: 1,
        estimatedCostUsd: 0.5,
        actualCostUsd: 0.4,
      });
      await db().recordUsage("b", { inputTokens: 200, outputTokens: 20, apiCalls: 2, estimatedCostUsd: 0.25 });
      await db().recordUsage("c", { inputTokens: 7, outputTokens: 7, estimatedCostUsd: 2 });
      await db().recordUsage("old", { inputTokens: 9999, estimatedCostUsd: 99 });

      const insights = await db().getInsights();
      expect(insights.totals).toMatchObject({
        sessions: 3,
        messages: 4,
        inputTokens: 307,
        outputTokens: 37,
        cacheReadTokens: 1,
        cacheWriteTokens: 2,
        reasoningTokens: 3,
        apiCalls: 3,
      });
      expect(insights.totals.estimatedCostUsd).toBeCloseTo(2.75, 10);
      expect(insights.totals.actualCostUsd).toBeCloseTo(0.4, 10);
      expect(insights.byModel.map((m) => [m.model, m.sessions, m.inputTokens])).toEqual([
        ["claude", 1, 7],
        ["gpt-4o", 2, 300],
      ]);
      expect(insights.bySource.map((s) => [s.source, s.sessions, s.messages])).toEqual([
        ["telegram", 2, 2],
        ["cli", 1, 2],
      ]);

      const telegram = await db().getInsights({ sources: ["telegram"] });
      expect(telegram.totals.sessions).toBe(2);
      expect(telegram.sources).toEqual(["telegram"]);
      const window = await db().getInsights({ since: now - 50 * DAY, until: now - 3.5 * DAY });
      expect(window.bySource.map((s) => [s.source, s.sessions])).toEqual([
        ["cli", 1],
        ["telegram", 1],
      ]);
      expect(window.totals.estimatedCostUsd).toBeCloseTo(101, 10);
    });

    test("tool calls by tool follow appends, rewind, restore, replace, clear, import and delete", async () => {
      const now = nowSeconds();
      await db().createSession({ id: "s1", source: "cli", startedAt: now - 60 });
      await db().createSession({ id: "s2", source: "cli", startedAt: now - 60 });
      await db().appendMessage("s1", user("go"));
      await db().appendMessage("s1", calling(["terminal", "web_search", "terminal"]));
      await db().appendTurn("s2", [user("go"), calling(["terminal"]), { role: "tool", toolCallId: "c0", toolName: "terminal", content: "ok" }]);
      expect(tools(await db().getInsights())).toEqual({ terminal: [3, 2], web_search: [1, 1] });
      expect((await db().getInsights()).totals.toolCalls).toBe(4);

      await db().appendTurn("s1", [user("again"), calling(["read_file", "terminal"], "d")]);
      expect(tools(await db().getInsights())).toEqual({ terminal: [4, 2], web_search: [1, 1], read_file: [1, 1] });
      await db().rewind("s1"); // hides the last turn
      expect(tools(await db().getInsights())).toEqual({ terminal: [3, 2], web_search: [1, 1] });
      await db().restoreRewound("s1");
      expect(tools(await db().getInsights())).toEqual({ terminal: [4, 2], web_search: [1, 1], read_file: [1, 1] });

      await db().replaceMessages("s2", [user("new"), calling(["browser"])]);
      expect(tools(await db().getInsights())).toEqual({ terminal: [3, 1], web_search: [1, 1], read_file: [1, 1], browser: [1, 1] });
      await db().clearMessages("s2");
      expect(tools(await db().getInsights())).toEqual({ terminal: [3, 1], web_search: [1, 1], read_file: [1, 1] });

      const exported = (await collect(db().exportSessions({ sessionId: "s1" }))).map((r) => JSON.stringify(r));
      await db().deleteSession("s1");
      expect(tools(await db().getInsights())).toEqual({});
      expect((await db().importSessions(exported)).imported).toBe(1);
      const imported = await db().getInsights();
      expect(tools(imported)).toEqual({ terminal: [3, 1], web_search: [1, 1], read_file: [1, 1] });
      expect(imported.totals.toolCalls).toBe(5);
      expect(imported.tools.map((t) => t.tool)).toEqual(["terminal", "read_file", "web_search"]); // most calls, then name
    });

    test("a refused append with tool calls (missing or ended session, lost lease) counts nothing", async () => {
      const now = nowSeconds();
      const key = "agent:main:cli:dm:1";
      await db().createSession({ id: "live", source: "cli", startedAt: now - 60 });
      await db().createSession({ id: "ended", source: "cli", startedAt: now - 60 });
      await db().appendTurn("live", [user("go"), calling(["terminal", "terminal"])]);
      await db().appendMessage("ended", calling(["browser"]));
      await db().endSession("ended", "done");
      const old = (await db().acquireLease(key, "a", { ttlSeconds: 30, now }))!;
      await db().acquireLease(key, "b", { ttlSeconds: 30, now: now + 60 });
      const state = async (): Promise<unknown> => {
        const { totals, tools: byTool } = await db().getInsights();
        return { totals, byTool, live: await db().getSession("live"), ended: await db().getSession("ended") };
      };
      const before = await state();
      expect(tools(await db().getInsights())).toEqual({ terminal: [2, 1], browser: [1, 1] });

      const one = calling(["terminal", "web_search"]);
      const turn = [user("more"), calling(["terminal"]), calling(["read_file"], "d")];
      await expectReject(() => db().appendMessage("ghost", one), NotFoundError);
      await expectReject(() => db().appendTurn("ghost", turn), NotFoundError);
      await expectReject(() => db().appendMessage("ended", one), ConflictError);
      await expectReject(() => db().appendTurn("ended", turn), ConflictError);
      const stale = { fence: { key, token: old.token } };
      await expectReject(() => db().appendMessage("live", one, stale), LeaseLostError);
      await expectReject(() => db().appendTurn("live", turn, stale), LeaseLostError);

      expect(await state()).toEqual(before);
      expect(await db().getMessages("live")).toHaveLength(2);
      expect(await db().getSession("ghost")).toBeNull();
    });

    test("tool calls appended through writeRoute are counted", async () => {
      const at = nowSeconds();
      await db().writeRoute({
        key: "agent:main:telegram:dm:7",
        expectedVersion: null,
        route: routeFields("20270115_080000_cccccccc", at),
        createSession: { id: "20270115_080000_cccccccc", source: "telegram", startedAt: at },
        appendMessages: [user("hi"), calling(["memory", "memory"])],
      });
      expect(tools(await db().getInsights())).toEqual({ memory: [2, 1] });
    });

    test("odd tool names are counted as written", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const names = ["\u0000nul", "\u0001mark", "名前", "a'b\"c\\d", "\u0001"];
      await db().appendMessage("s", calling([...names, names[0]!]));
      expect(tools(await db().getInsights())).toEqual({ "\u0000nul": [2, 1], "\u0001mark": [1, 1], 名前: [1, 1], "a'b\"c\\d": [1, 1], "\u0001": [1, 1] });
      await db().rewind("s"); // nothing to rewind without a user message: the tally is recomputed the same
      await db().appendMessage("s", user("x"));
      await db().rewind("s");
      expect(tools(await db().getInsights())).toEqual({ "\u0000nul": [2, 1], "\u0001mark": [1, 1], 名前: [1, 1], "a'b\"c\\d": [1, 1], "\u0001": [1, 1] });
    });

    test("activity counts session starts by local weekday and hour", async () => {
      // 2 March 2026 is a Monday; 7 March a Saturday.
      const starts = [local(2026, 3, 2, 9, 30), local(2026, 3, 2, 9, 59), local(2026, 3, 2, 23, 45), local(2026, 3, 7, 0, 5)];
      for (const [i, startedAt] of starts.entries()) await db().createSession({ id: `s${i}`, source: "cli", startedAt });
      const insights = await db().getInsights({ since: local(2026, 3, 1, 0, 0), until: local(2026, 3, 8, 0, 0) });
      expect(insights.activity.timeZone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
      expect(Object.fromEntries(insights.activity.byWeekday.map((d) => [d.weekday, d.sessions]))).toEqual({
        Mon: 3,
        Tue: 0,
        Wed: 0,
        Thu: 0,
        Fri: 0,
        Sat: 1,
        Sun: 0,
      });
      const hours = insights.activity.byHour.filter((h) => h.sessions > 0).map((h) => [h.hour, h.sessions]);
      expect(hours).toEqual([
        [0, 1],
        [9, 2],
        [23, 1],
      ]);
      expect(insights.activity.activeDays).toBe(2);
    });

    test("the longest and the costliest sessions, at most `top`", async () => {
      const now = nowSeconds();
      await db().createSession({ id: "short", source: "cli", startedAt: now - 1000, title: "Short one" });
      await db().appendMessage("short", user("hi", now - 990));
      await db().createSession({ id: "long", source: "cli", model: "m", startedAt: now - 5000 });
      await db().appendMessage("long", user("hi", now - 100));
      await db().createSession({ id: "ended", source: "cli", startedAt: now - 3000 });
      await db().endSession("ended", "user_exit", { endedAt: now - 1000 });
      await db().recordUsage("short", { estimatedCostUsd: 3, inputTokens: 5 });
      await db().recordUsage("long", { estimatedCostUsd: 1 });

      const insights = await db().getInsights({ top: 2 });
      expect(insights.longest.map((s) => [s.id, Math.round(s.durationSeconds)])).toEqual([
        ["long", 4900],
        ["ended", 2000],
      ]);
      expect(insights.longest[0]).toMatchObject({ model: "m", messageCount: 1, endedAt: null });
      expect(insights.costliest.map((s) => s.id)).toEqual(["short", "long"]); // "ended" cost nothing
      expect(insights.costliest[0]).toMatchObject({ title: "Short one", estimatedCostUsd: 3, inputTokens: 5, actualCostUsd: null });
      expect((await db().getInsights()).longest).toHaveLength(3);
    });

    test("byDay: sessions and messages per local day and source; userId scopes every figure", async () => {
      const d1 = local(2030, 3, 4, 9, 0);
      const d2 = local(2030, 3, 5, 23, 50);
      await db().createSession({ id: "u1", source: "cli", userId: "alice", model: "m", startedAt: d1 });
      await db().createSession({ id: "u2", source: "telegram", userId: "alice", startedAt: d1 + 60 });
      await db().createSession({ id: "u3", source: "cli", userId: "bob", startedAt: d1 + 120 });
      await db().createSession({ id: "u4", source: "cli", userId: "alice", startedAt: d2 });
      await db().appendTurn("u1", [user("a", d1 + 1), assistant("b", d1 + 2)]);
      await db().appendMessage("u3", user("c", d1 + 130));
      await db().appendTurn("u4", [user("d", d2 + 1), assistant("e", d2 + 2), user("f", d2 + 3)]);
      const all = await db().getInsights({ since: d1 - 10, until: d2 + 100 });
      expect(all.byDay).toEqual([
        { day: "2030-03-04", source: "cli", sessions: 2, messages: 3 },
        { day: "2030-03-04", source: "telegram", sessions: 1, messages: 0 },
        { day: "2030-03-05", source: "cli", sessions: 1, messages: 3 },
      ]);
      const alice = await db().getInsights({ since: d1 - 10, until: d2 + 100, userId: "alice" });
      expect(alice.byDay).toEqual([
        { day: "2030-03-04", source: "cli", sessions: 1, messages: 2 },
        { day: "2030-03-04", source: "telegram", sessions: 1, messages: 0 },
        { day: "2030-03-05", source: "cli", sessions: 1, messages: 3 },
      ]);
      expect(alice.totals.sessions).toBe(3);
      expect(alice.byModel.map((m) => [m.model, m.sessions])).toEqual([
        [null, 2],
        ["m", 1],
      ]);
      expect((await db().getInsights({ since: d1 - 10, userId: "carol" })).totals.sessions).toBe(0);
      await expectReject(() => db().getInsights({ userId: "" }), InvalidInputError, /userId/);
    });

    test("invalid options are InvalidInputError", async () => {
      await expectReject(() => db().getInsights({ since: Number.NaN }), InvalidInputError, /since/);
      await expectReject(() => db().getInsights({ since: 10, until: 5 }), InvalidInputError, /until/);
      await expectReject(() => db().getInsights({ top: 0 }), InvalidInputError, /top/);
      await expectReject(() => db().getInsights({ top: 101 }), InvalidInputError, /top/);
      await expectReject(() => db().getInsights({ sources: "cli" as unknown as string[] }), InvalidInputError, /sources/);
    });
  });
}
