/**
 * Contract: `listSessions`: bounded pages, keyset cursors, order, filters, compression
 * chains and previews.
 *
 * @module
 */

import { expect } from "vitest";
import type { ListSessionsOptions, SessionDB, SessionSummary } from "../../../src/store/contract.js";
import { InvalidInputError } from "../../../src/store/errors.js";
import { assistant, contractArea, expectReject, ids, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** Every page of a listing, following `nextCursor` (at most 200 pages). */
async function pages(db: SessionDB, options: ListSessionsOptions = {}): Promise<SessionSummary[][]> {
  const out: SessionSummary[][] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 200; i++) {
    const page = await db.listSessions({ ...options, cursor });
    out.push(page.items);
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
  throw new Error("listing did not end after 200 pages");
}

function pad(i: number): string {
  return String(i).padStart(2, "0");
}

/** Sessions `s00`… with start times 1000, 1001, … (no messages). */
async function seedSessions(db: SessionDB, n: number, source = "cli", prefix = "s", start = 1000): Promise<void> {
  for (let i = 0; i < n; i++) await db.createSession({ id: `${prefix}${pad(i)}`, source, startedAt: start + i });
}

export function listingTests(init: SessionDBTestInitializer): void {
  contractArea(init, "listing", (test, { db }) => {
    test("an empty store lists nothing", async () => {
      expect(await db().listSessions()).toEqual({ items: [], nextCursor: null });
    });

    test("the default page is 20 rows, newest first, with a cursor to the rest", async () => {
      await seedSessions(db(), 25);
      const first = await db().listSessions();
      expect(ids(first.items)).toEqual(Array.from({ length: 20 }, (_, i) => `s${pad(24 - i)}`));
      expect(first.nextCursor).not.toBeNull();
      const second = await db().listSessions({ cursor: first.nextCursor });
      expect(ids(second.items)).toEqual(["s04", "s03", "s02", "s01", "s00"]);
      expect(second.nextCursor).toBeNull();
    });

    test("each row carries the session's token and cost totals (usage), as getSession does", async () => {
      await db().createSession({ id: "paid", source: "cli", model: "gpt-4o", startedAt: 100 });
      await db().appendMessage("paid", user("hello", 101));
      await db().recordUsage("paid", { inputTokens: 1200, outputTokens: 300, estimatedCostUsd: 0.0123 });
      await db().createSession({ id: "free", source: "cli", startedAt: 200 });
      const rows = (await db().listSessions()).items;
      expect(rows.map((r) => r.id)).toEqual(["free", "paid"]);
      const paid = rows.find((r) => r.id === "paid")!;
      expect(paid.usage).toEqual((await db().getSession("paid"))!.usage);
      expect(paid.usage).toMatchObject({ inputTokens: 1200, outputTokens: 300, estimatedCostUsd: 0.0123, actualCostUsd: null });
      expect(rows.find((r) => r.id === "free")!.usage).toMatchObject({ inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0 });
    });

    test("a full last page has no next cursor", async () => {
      await seedSessions(db(), 20);
      const page = await db().listSessions();
      expect(page.items).toHaveLength(20);
      expect(page.nextCursor).toBeNull();
      const byFive = await pages(db(), { limit: 5 });
      expect(byFive.map((p) => p.length)).toEqual([5, 5, 5, 5]);
    });

    test("limit is 1 to 1,000: outside that is an InvalidInputError", async () => {
      await seedSessions(db(), 3);
      expect((await db().listSessions({ limit: 1000 })).items).toHaveLength(3);
      expect((await db().listSessions({ limit: 1 })).items).toHaveLength(1);
      for (const limit of [1001, 0, -1, 100_000]) {
        await expectReject(() => db().listSessions({ limit }), InvalidInputError, /limit/i);
      }
    });

    test("a page of 1,000 rows is capped, not truncated silently", async () => {
      for (let i = 0; i < 1005; i++) await db().createSession({ id: `bulk${String(i).padStart(4, "0")}`, source: "cli", startedAt: i });
      const first = await db().listSessions({ limit: 1000 });
      expect(first.items).toHaveLength(1000);
      expect(first.nextCursor).not.toBeNull();
      const rest = await db().listSessions({ limit: 1000, cursor: first.nextCursor });
      expect(ids(rest.items)).toEqual(["bulk0004", "bulk0003", "bulk0002", "bulk0001", "bulk0000"]);
    }, 120_000);

    test("a bad cursor is an InvalidInputError", async () => {
      await seedSessions(db(), 3);
      for (const cursor of ["garbage", "eyJ4IjoxfQ", "%%%", "{}", "null", "a".repeat(500)]) {
        await expectReject(() => db().listSessions({ cursor }), InvalidInputError, /cursor/i);
      }
    });

    test("the cursor pages through every session once, even with equal sort keys", async () => {
      for (let i = 0; i < 30; i++) await db().createSession({ id: `tie${pad(i)}`, source: "cli", startedAt: 1000 });
      for (const orderBy of ["lastActive", "started"] as const) {
        const all = await pages(db(), { limit: 7, orderBy });
        expect(all.map((p) => p.length)).toEqual([7, 7, 7, 7, 2]);
        const seen = all.flat().map((r) => r.id);
        expect(new Set(seen).size).toBe(30);
      }
    });

    test("sessions added between pages cause no duplicates or gaps", async () => {
      await seedSessions(db(), 25);
      const first = await db().listSessions({ limit: 10 });
      expect(ids(first.items)).toEqual(Array.from({ length: 10 }, (_, i) => `s${pad(24 - i)}`));
      // A new session newer than the whole listing, and one that sorts into the unread part.
      await db().createSession({ id: "newer", source: "cli", startedAt: 2000 });
      await db().createSession({ id: "inside", source: "cli", startedAt: 1012.5 });
      const rest: SessionSummary[] = [];
      let cursor = first.nextCursor;
      for (let guard = 0; cursor !== null; guard++) {
        if (guard > 50) throw new Error("listing did not end after 50 pages");
        const page = await db().listSessions({ limit: 10, cursor });
        rest.push(...page.items);
        cursor = page.nextCursor;
        // And another one while paging, older than everything.
        if (!(await db().getSession("oldest"))) await db().createSession({ id: "oldest", source: "cli", startedAt: 10 });
      }
      expect(ids(rest)).toEqual(["s14", "s13", "inside", ...Array.from({ length: 13 }, (_, i) => `s${pad(12 - i)}`), "oldest"]);
    });

    test("order: last activity by default, start time with orderBy started", async () => {
      await db().createSession({ id: "a", source: "cli", startedAt: 1000 });
      await db().appendMessage("a", user("late message", 5000));
      await db().createSession({ id: "b", source: "cli", startedAt: 2000 });
      await db().createSession({ id: "c", source: "cli", startedAt: 3000 });
      await db().appendMessage("c", user("message", 4000));
      await db().createSession({ id: "d", source: "cli", startedAt: 1500 });
      await db().endSession("d", "done", { endedAt: 4500 });
      expect(ids((await db().listSessions()).items)).toEqual(["a", "d", "c", "b"]);
      expect(ids((await db().listSessions({ orderBy: "lastActive" })).items)).toEqual(["a", "d", "c", "b"]);
      expect(ids((await db().listSessions({ orderBy: "started" })).items)).toEqual(["c", "b", "d", "a"]);
      // New activity moves a session to the top.
      await db().appendMessage("b", user("now active", 6000));
      expect(ids((await db().listSessions()).items)).toEqual(["b", "a", "d", "c"]);
      expect(ids((await db().listSessions({ orderBy: "started" })).items)).toEqual(["c", "b", "d", "a"]);
    });

    test("lastActiveAt is the latest of the last message time and endedAt", async () => {
      await db().createSession({ id: "ended-later", source: "cli", startedAt: 100 });
      await db().appendMessage("ended-later", user("x", 1000));
      await db().endSession("ended-later", "done", { endedAt: 3000 });
      await db().createSession({ id: "message-later", source: "cli", startedAt: 100 });
      await db().appendMessage("message-later", user("x", 5000));
      await db().endSession("message-later", "done", { endedAt: 4000 });
      await db().createSession({ id: "idle", source: "cli", startedAt: 700 });
      const rows = (await db().listSessions()).items;
      expect(rows.map((r) => [r.id, r.lastActiveAt])).toEqual([
        ["message-later", 5000],
        ["ended-later", 3000],
        ["idle", 700],
      ]);
      expect((await db().getSession("ended-later"))?.lastActiveAt).toBe(3000);
      expect((await db().getSession("message-later"))?.lastActiveAt).toBe(5000);
    });

    test("a row carries the summary fields of its session", async () => {
      await db().createSession({ id: "p", source: "cli", startedAt: 10 });
      await db().createSession({
        id: "s",
        source: "telegram",
        model: "gpt-4o",
        title: "Weekend plans",
        parentSessionId: "p",
        startedAt: 100,
      });
      await db().appendTurn("s", [user("Where should we go?", 110), assistant("The coast.", 120)]);
      await db().endSession("s", "user_exit", { endedAt: 130 });
      const row = (await db().listSessions()).items.find((r) => r.id === "s");
      expect(row).toMatchObject({
        id: "s",
        source: "telegram",
        title: "Weekend plans",
        preview: "Where should we go?",
        model: "gpt-4o",
        startedAt: 100,
        lastActiveAt: 130,
        endedAt: 130,
        endReason: "user_exit",
        messageCount: 2,
        parentSessionId: "p",
      });
    });

    test("sources and excludeSources filter, also across pages", async () => {
      await seedSessions(db(), 12, "telegram", "tg", 1000);
      await seedSessions(db(), 5, "cli", "cli", 1003);
      await seedSessions(db(), 4, "discord", "dc", 1001);
      const tg = (await pages(db(), { sources: ["telegram"], limit: 5 })).flat();
      expect(tg).toHaveLength(12);
      expect(tg.every((r) => r.source === "telegram")).toBe(true);
      const two = (await pages(db(), { sources: ["telegram", "discord"], limit: 4 })).flat();
      expect(two).toHaveLength(16);
      expect(new Set(two.map((r) => r.source))).toEqual(new Set(["telegram", "discord"]));
      const notCli = (await pages(db(), { excludeSources: ["cli"], limit: 3 })).flat();
      expect(notCli).toHaveLength(16);
      expect(notCli.some((r) => r.source === "cli")).toBe(false);
      const notTwo = (await db().listSessions({ excludeSources: ["cli", "telegram"], limit: 100 })).items;
      expect(ids(notTwo)).toEqual(["dc03", "dc02", "dc01", "dc00"]);
      expect((await db().listSessions({ sources: ["nowhere"] })).items).toEqual([]);
      const both = (await db().listSessions({ sources: ["telegram", "cli"], excludeSources: ["telegram"], limit: 100 })).items;
      expect(both.every((r) => r.source === "cli")).toBe(true);
      expect(both).toHaveLength(5);
    });

    test("a listing over many sources (more ranges than one statement walks) pages like the whole listing", async () => {
      for (let i = 0; i < 40; i++) await db().createSession({ id: `m${pad(i)}`, source: `src${pad(i)}`, model: "m-a", startedAt: 1000 + ((i * 7) % 40) });
      const everySource = Array.from({ length: 40 }, (_, i) => `src${pad(i)}`);
      const whole = ids((await db().listSessions({ limit: 100, includeChildren: true })).items);
      expect(whole).toHaveLength(40);
      // 40 sources × 2 hidden flags = 80 ranges; with a long model list too, several statements.
      for (const extra of [{}, { models: Array.from({ length: 300 }, (_, i) => `model-${i}`).concat(["m-a"]) }]) {
        const paged = (await pages(db(), { sources: everySource, includeChildren: true, limit: 7, ...extra })).flat();
        expect(ids(paged)).toEqual(whole);
      }
    });

    test("a compression chain is listed once, as its tip with the root's start time", async () => {
      await db().createSession({ id: "root", source: "cli", startedAt: 1000, title: "Chain" });
      await db().appendMessage("root", user("root question", 1001));
      await db().endSession("root", "compression", { endedAt: 1100 });
      await db().createSession({ id: "mid", source: "cli", parentSessionId: "root", startedAt: 1100 });
      await db().endSession("mid", "compression", { endedAt: 1200 });
      await db().createSession({ id: "tip", source: "cli", parentSessionId: "mid", startedAt: 1200 });
      await db().appendMessage("tip", user("tip question", 1300));
      await db().createSession({ id: "x", source: "cli", startedAt: 1150 });
      await db().createSession({ id: "p", source: "cli", startedAt: 1050 });
      await db().createSession({ id: "q", source: "cli", parentSessionId: "p", startedAt: 1060 });
      await db().createSession({ id: "e", source: "cli", startedAt: 900 });
      await db().endSession("e", "user_exit", { endedAt: 950 });
      await db().createSession({ id: "f", source: "cli", parentSessionId: "e", startedAt: 960 });

      const rows = (await db().listSessions()).items;
      expect(ids(rows)).toEqual(["tip", "x", "q", "p", "f", "e"]);
      const tip = rows[0]!;
      expect(tip.startedAt).toBe(1000);
      expect(tip.lastActiveAt).toBe(1300);
      expect(tip.parentSessionId).toBe("mid");
      expect(tip.preview).toBe("tip question");
      expect(tip.messageCount).toBe(1);

      const byStart = (await db().listSessions({ orderBy: "started" })).items;
      expect(ids(byStart)).toEqual(["x", "q", "p", "tip", "f", "e"]);
      expect(ids((await pages(db(), { limit: 2 })).flat())).toEqual(ids(rows));
      expect(ids((await pages(db(), { limit: 2, orderBy: "started" })).flat())).toEqual(ids(byStart));

      const every = (await db().listSessions({ includeChildren: true })).items;
      expect(new Set(ids(every))).toEqual(new Set(["root", "mid", "tip", "x", "p", "q", "e", "f"]));
      expect(every).toHaveLength(8);
      expect(every.find((r) => r.id === "tip")?.startedAt).toBe(1200);
      expect(every.find((r) => r.id === "root")?.startedAt).toBe(1000);
      expect(ids((await pages(db(), { limit: 3, includeChildren: true })).flat())).toEqual(ids(every));
    });

    test("the preview is the first user message, whitespace folded, 60 code points + ...", async () => {
      const cases: Array<[string, unknown, string | null]> = [
        ["folded", "  Line one\n\nline   two\r\nthree\tfour  ", "Line one line two three four"],
        ["exact60", "a".repeat(60), "a".repeat(60)],
        ["long61", "b".repeat(61), `${"b".repeat(60)}...`],
        ["long200", "c".repeat(200), `${"c".repeat(60)}...`],
        ["emoji", "😀".repeat(61), `${"😀".repeat(60)}...`],
        ["emoji60", "😀".repeat(60), "😀".repeat(60)],
        ["folded-then-cut", `${"d".repeat(30)}\n\n\n${"e".repeat(40)}`, `${"d".repeat(30)} ${"e".repeat(29)}...`],
        [
          "parts",
          [
            { type: "text", text: "hello" },
            { type: "image_url", image_url: { url: "https://x/y.png" } },
            { type: "text", text: "world" },
          ],
          "hello world",
        ],
      ];
      for (const [id, content] of cases) {
        await db().createSession({ id, source: "cli", startedAt: 1 });
        await db().appendMessage(id, { role: "system", content: "system text", timestamp: 2 });
        await db().appendMessage(id, assistant("assistant text", 3));
        await db().appendMessage(id, { role: "user", content: content as string, timestamp: 4 });
        await db().appendMessage(id, user("second user message", 5));
      }
      const rows = (await db().listSessions({ limit: 100 })).items;
      for (const [id, , expected] of cases) {
        expect((await db().getSession(id))?.preview, `getSession(${id}).preview`).toBe(expected);
        expect(rows.find((r) => r.id === id)?.preview, `listSessions row ${id}`).toBe(expected);
      }
    });

    test("the preview skips a compression summary and a handoff note (they are not user messages), on append and on recompute", async () => {
      const summary = {
        role: "user" as const,
        content: "[Summary of the earlier conversation (session p)]\nWe planned the trip.",
        platformMessageId: "summary:p",
        timestamp: 2,
      };
      const note = {
        role: "user" as const,
        content: "[System note: This conversation was handed off from the terminal to telegram]",
        platformMessageId: "handoff:h1",
        timestamp: 3,
      };
      await db().createSession({ id: "cont", source: "cli", startedAt: 1 });
      await db().appendMessage("cont", summary);
      expect((await db().getSession("cont"))?.preview).toBeNull();
      await db().appendTurn("cont", [note, assistant("Here is where things stand.", 4)]);
      await db().appendMessage("cont", user("and the hotel?", 5));
      expect((await db().getSession("cont"))?.preview).toBe("and the hotel?");
      expect((await db().listSessions()).items.find((r) => r.id === "cont")?.preview).toBe("and the hotel?");
      // Recomputed from the rows (replace, rewind): the same rule.
      await db().replaceMessages("cont", [summary, note, user("first real question", 6)]);
      expect((await db().getSession("cont"))?.preview).toBe("first real question");
      await db().rewind("cont", 1);
      expect((await db().getSession("cont"))?.preview).toBeNull();
      // A platform's own message id is not a marker.
      await db().appendMessage("cont", { role: "user", content: "from telegram", platformMessageId: "4711", timestamp: 7 });
      expect((await db().getSession("cont"))?.preview).toBe("from telegram");
    });

    test("since/until bound the ordering time; models and titled filter; across pages", async () => {
      // started 1000..1009; even ones model m1, odd m2; every third titled.
      for (let i = 0; i < 10; i++) {
        await db().createSession({
          id: `f${pad(i)}`,
          source: "cli",
          startedAt: 1000 + i,
          model: i % 2 === 0 ? "m1" : "m2",
          ...(i % 3 === 0 ? { title: `t${i}` } : {}),
        });
      }
      const started = (o: ListSessionsOptions) => pages(db(), { orderBy: "started", limit: 2, ...o }).then((p) => p.flat().map((s) => s.id));
      expect(await started({ since: 1003, until: 1007 })).toEqual(["f06", "f05", "f04", "f03"]);
      expect(await started({ models: ["m1"] })).toEqual(["f08", "f06", "f04", "f02", "f00"]);
      expect(await started({ models: ["m2", "m1"], since: 1008 })).toEqual(["f09", "f08"]);
      expect(await started({ titled: true })).toEqual(["f09", "f06", "f03", "f00"]);
      expect(await started({ titled: false, models: ["m1"] })).toEqual(["f08", "f04", "f02"]);
      // lastActive: the bound applies to the last activity (a message moves f00 to 5000).
      await db().appendMessage("f00", user("late", 5000));
      const active = await pages(db(), { since: 4000 });
      expect(active.flat().map((s) => s.id)).toEqual(["f00"]);
      expect((await pages(db(), { until: 4000, limit: 3 })).flat().map((s) => s.id)).toEqual(["f09", "f08", "f07", "f06", "f05", "f04", "f03", "f02", "f01"]);
      await expectReject(() => db().listSessions({ since: 10, until: 5 }), InvalidInputError, /until/);
      await expectReject(() => db().listSessions({ since: Number.NaN }), InvalidInputError, /since/);
      await expectReject(() => db().listSessions({ titled: "yes" as unknown as boolean }), InvalidInputError, /titled/);
      await expectReject(() => db().listSessions({ models: [""] }), InvalidInputError, /models/);
    });
  });
}
