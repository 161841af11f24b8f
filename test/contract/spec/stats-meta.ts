/**
 * Contract: database statistics and the meta key/value table.
 *
 * @module
 */

import { expect } from "vitest";
import type { ModelStats } from "../../../src/store/contract.js";
import { assistant, contractArea, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

function byModel(a: ModelStats, b: ModelStats): number {
  return String(a.model) < String(b.model) ? -1 : String(a.model) > String(b.model) ? 1 : 0;
}

export function statsMetaTests(init: SessionDBTestInitializer): void {
  contractArea(init, "stats-meta", (test, { db }) => {
    test("capabilities: several processes may write; multiHost exactly for a database server (not a local file)", async () => {
      const caps = db().capabilities;
      expect(caps.multiProcess).toBe(true);
      expect(caps.multiHost).toBe(/^postgres(ql)?:\/\//u.test(db().location));
    });

    test("an empty store has zero totals and a positive size", async () => {
      const stats = await db().getStats();
      expect(stats.totalSessions).toBe(0);
      expect(stats.totalMessages).toBe(0);
      expect(stats.sessionsBySource).toEqual({});
      expect(stats.byModel).toEqual([]);
      expect(stats.databaseBytes).toBeGreaterThan(0);
      if (stats.searchIndexBytes !== null) expect(stats.searchIndexBytes).toBeGreaterThanOrEqual(0);
    });

    test("getStats({ searchIndexBytes: false }) leaves the index size out and nothing else", async () => {
      await db().createSession({ id: "a", source: "cli", model: "m" });
      await db().appendMessage("a", { role: "user", content: "hello there" });
      const full = await db().getStats();
      const light = await db().getStats({ searchIndexBytes: false });
      expect(full.searchIndexBytes).not.toBeNull();
      expect(light.searchIndexBytes).toBeNull();
      expect({ ...light, searchIndexBytes: full.searchIndexBytes, databaseBytes: 0 }).toEqual({ ...full, databaseBytes: 0 });
      expect(light.databaseBytes).toBeGreaterThan(0);
    });

    test("totals, per-source counts and per-model usage", async () => {
      await db().createSession({ id: "a", source: "cli", model: "gpt-4o" });
      await db().createSession({ id: "b", source: "cli", model: "gpt-4o" });
      await db().createSession({ id: "c", source: "telegram", model: "claude" });
      await db().createSession({ id: "d", source: "discord" });
      await db().appendTurn("a", [user("one"), assistant("two")]);
      await db().appendTurn("b", [user("three"), assistant("four")]);
      await db().appendTurn("c", [user("five"), assistant("six"), user("seven")]);
      await db().rewind("c"); // "seven" is hidden and not counted
      await db().recordUsage("a", {
        inputTokens: 10,
        outputTokens: 1,
        cacheReadTokens: 2,
        cacheWriteTokens: 3,
        reasoningTokens: 4,
        estimatedCostUsd: 0.5,
        actualCostUsd: 0.25,
      });
      await db().recordUsage("b", { inputTokens: 20, outputTokens: 2, estimatedCostUsd: 0.25 });
      await db().recordUsage("c", { inputTokens: 7, outputTokens: 7, actualCostUsd: 1 });

      const stats = await db().getStats();
      expect(stats.totalSessions).toBe(4);
      expect(stats.totalMessages).toBe(6);
      expect(stats.sessionsBySource).toEqual({ cli: 2, telegram: 1, discord: 1 });
      expect(stats.databaseBytes).toBeGreaterThan(0);
      const models = [...stats.byModel].sort(byModel);
      expect(models).toHaveLength(3);
      expect(models[0]).toMatchObject({
        model: "claude",
        sessions: 1,
        inputTokens: 7,
        outputTokens: 7,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        estimatedCostUsd: 0,
      });
      expect(models[0]?.actualCostUsd).toBeCloseTo(1, 10);
      expect(models[1]).toMatchObject({
        model: "gpt-4o",
        sessions: 2,
        inputTokens: 30,
        outputTokens: 3,
        cacheReadTokens: 2,
        cacheWriteTokens: 3,
        reasoningTokens: 4,
      });
      expect(models[1]?.estimatedCostUsd).toBeCloseTo(0.75, 10);
      expect(models[1]?.actualCostUsd).toBeCloseTo(0.25, 10);
      expect(models[2]).toMatchObject({ model: null, sessions: 1, inputTokens: 0, outputTokens: 0, actualCostUsd: 0 });
    });

    test("the database size grows with the data", async () => {
      const before = (await db().getStats()).databaseBytes;
      await db().createSession({ id: "s", source: "cli" });
      const text = "lorem ipsum dolor sit amet ".repeat(400);
      await db().appendTurn(
        "s",
        Array.from({ length: 50 }, (_, i) => user(`${i} ${text}`)),
      );
      const after = (await db().getStats()).databaseBytes;
      expect(after).toBeGreaterThan(before);
      expect(after).toBeGreaterThan(50 * text.length * 0.5);
    });

    test("meta get, set, overwrite and delete", async () => {
      expect(await db().getMeta("missing")).toBeNull();
      await db().setMeta("k", "v1");
      expect(await db().getMeta("k")).toBe("v1");
      await db().setMeta("k", 'v2 ünïcode 日本 😀\n{"json":true}');
      expect(await db().getMeta("k")).toBe('v2 ünïcode 日本 😀\n{"json":true}');
      await db().setMeta("empty", "");
      expect(await db().getMeta("empty")).toBe("");
      await db().setMeta("other", "x");
      expect(await db().deleteMeta("k")).toBe(true);
      expect(await db().getMeta("k")).toBeNull();
      expect(await db().deleteMeta("k")).toBe(false);
      expect(await db().deleteMeta("never")).toBe(false);
      expect(await db().getMeta("other")).toBe("x");
    });

    test("listMeta pages through every value callers stored, in key order, without the store's own bookkeeping", async () => {
      expect(await db().listMeta()).toEqual({ items: [], nextCursor: null });
      for (const key of ["home_channels", "c2", "a", "c10", "b"]) await db().setMeta(key, `value of ${key}`);
      // The store's own keys: SQLite's search-index watermark (moved by a message), the last automatic prune.
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("indexed words"));
      expect((await db().autoPrune({ olderThanDays: 30, intervalSeconds: 1 })).ran).toBe(true);
      const seen: Array<{ key: string; value: string }> = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const result: Awaited<ReturnType<ReturnType<typeof db>["listMeta"]>> = await db().listMeta({ limit: 2, cursor });
        expect(result.items.length).toBeLessThanOrEqual(2);
        seen.push(...result.items);
        cursor = result.nextCursor;
        if (cursor === null) break;
      }
      expect(cursor).toBeNull();
      expect(seen).toEqual(["a", "b", "c10", "c2", "home_channels"].map((key) => ({ key, value: `value of ${key}` })));
      await expect(db().listMeta({ limit: 0 })).rejects.toMatchObject({ code: "TL_ERR_INVALID_INPUT" });
      await expect(db().listMeta({ cursor: "not a cursor" })).rejects.toMatchObject({ code: "TL_ERR_INVALID_INPUT" });
    });

    test("meta does not touch sessions", async () => {
      await db().setMeta("note", "value");
      const stats = await db().getStats();
      expect(stats.totalSessions).toBe(0);
      expect((await db().listSessions()).items).toEqual([]);
    });
  });
}
