/**
 * Contract: edge rules found in review — title moves on create and import, empty
 * turns, validation before bookkeeping, preview and rewind text, usage totals.
 *
 * @module
 */

import { expect } from "vitest";
import { ConflictError, InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { contractArea, expectReject, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const DAY = 86_400;

export function edgeRulesTests(init: SessionDBTestInitializer): void {
  contractArea(init, "edge-rules", (test, { db }) => {
    test("createSession of a continuation takes the title of its compression ancestor", async () => {
      await db().createSession({ id: "root", source: "cli", title: "Big refactor" });
      await db().endSession("root", "compression");
      const child = await db().createSession({ id: "child", source: "cli", parentSessionId: "root", title: "Big refactor" });
      expect(child.title).toBe("Big refactor");
      expect(await db().getTitle("root")).toBeNull();
    });

    test("a title is not taken across a parent that did not end with compression", async () => {
      await db().createSession({ id: "a", source: "cli", title: "Shared" });
      await db().endSession("a", "compression");
      await db().createSession({ id: "b", source: "cli", parentSessionId: "a" });
      await db().endSession("b", "user_exit"); // a branch, not a continuation
      await expectReject(() => db().createSession({ id: "c", source: "cli", parentSessionId: "b", title: "Shared" }), ConflictError, /a\b/);
      expect(await db().getSession("c")).toBeNull();
      expect(await db().getTitle("a")).toBe("Shared");
    });

    test("appendTurn with no messages still checks the session", async () => {
      await expectReject(() => db().appendTurn("ghost", []), NotFoundError);
      await db().createSession({ id: "s", source: "cli" });
      await db().endSession("s", "user_exit");
      await expectReject(() => db().appendTurn("s", []), ConflictError);
    });

    test("appendTurn with no messages on a live session returns no ids and changes nothing", async () => {
      await db().createSession({ id: "fresh", source: "cli", startedAt: 1_000 });
      await db().createSession({ id: "s", source: "cli", startedAt: 1_000 });
      await db().appendMessage("s", user("hello", 2_000));
      const before = [await db().getSession("fresh"), await db().getSession("s")];
      expect(await db().appendTurn("fresh", [])).toEqual([]);
      expect(await db().appendTurn("s", [])).toEqual([]);
      expect([await db().getSession("fresh"), await db().getSession("s")]).toEqual(before);
      expect(before[0]).toMatchObject({ messageCount: 0, lastActiveAt: 1_000, preview: null });
    });

    test("autoPrune with invalid options writes no bookkeeping", async () => {
      const now = 10_000 * DAY;
      await expectReject(() => db().autoPrune({ olderThanDays: -1, now }), InvalidInputError, /olderThanDays/);
      expect((await db().autoPrune({ olderThanDays: 30, now })).ran).toBe(true);
    });

    test("the preview skips user messages without text, after a rewind as on append", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", { role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] });
      await db().appendMessage("s", { role: "user", content: "describe the picture" });
      await db().appendMessage("s", { role: "user", content: "and again" });
      expect((await db().getSession("s"))?.preview).toBe("describe the picture");
      await db().rewind("s", 1);
      expect((await db().getSession("s"))?.preview).toBe("describe the picture");
    });

    test("rewind of a user message without text reports targetText null", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", { role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] });
      expect(await db().rewind("s")).toEqual({ rewound: 1, turnsUndone: 1, targetText: null });
    });

    test("nextTitleInLineage refuses a numbered title over the length limit", async () => {
      const base = "b".repeat(99);
      await db().createSession({ id: "s", source: "cli", title: base });
      await expectReject(() => db().nextTitleInLineage(base), InvalidInputError, /100/);
    });

    test("updateSession rejects fields it cannot change, and changes nothing", async () => {
      await db().createSession({ id: "s", source: "cli", model: "m1" });
      await expectReject(() => db().updateSession("s", { model: "m2", title: "x" } as never), InvalidInputError, /title/);
      expect((await db().getSession("s"))?.model).toBe("m1");
    });

    test("recordUsage never takes a total below zero, and token counts are whole numbers", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().recordUsage("s", { inputTokens: 10 });
      await expectReject(() => db().recordUsage("s", { inputTokens: -11 }), InvalidInputError, /negative/);
      expect((await db().getSession("s"))?.usage.inputTokens).toBe(10);
      await expectReject(() => db().recordUsage("s", { outputTokens: 1.5 }), InvalidInputError, /whole/);
      expect((await db().recordUsage("s", { inputTokens: -4 })).inputTokens).toBe(6);
    });
  });
}
