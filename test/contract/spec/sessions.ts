/**
 * Contract: creating, reading, ending, reopening, resolving and updating sessions.
 *
 * @module
 */

import { expect } from "vitest";
import type { Session } from "../../../src/store/contract.js";
import { ConflictError, NotFoundError } from "../../../src/store/errors.js";
import { contractArea, expectReject, nowSeconds, user, ZERO_USAGE } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

function localStamp(date: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(date.getFullYear(), 4)}${p(date.getMonth() + 1)}${p(date.getDate())}_` + `${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

export function sessionsTests(init: SessionDBTestInitializer): void {
  contractArea(init, "sessions", (test, { db, freshStore }) => {
    test("every store from createStore is empty and isolated from the others", async () => {
      const other = await freshStore();
      expect((await other.listSessions()).items).toEqual([]);
      await db().createSession({ id: "mine", source: "cli" });
      await db().setMeta("k", "v");
      expect(await other.getSession("mine")).toBeNull();
      expect(await other.getMeta("k")).toBeNull();
      expect((await other.getStats()).totalSessions).toBe(0);
      await other.createSession({ id: "mine", source: "telegram" });
      expect((await db().getSession("mine"))?.source).toBe("cli");
    });

    test("createSession stores every field and getSession returns them", async () => {
      await db().createSession({ id: "parent-1", source: "cli", startedAt: 1_700_000_000 });
      const modelConfig = {
        temperature: 0.2,
        max_tokens: 1000,
        stop: ["\n\n", "END"],
        nested: { a: [1, "x", null, true], unicode: "héllo 日本" },
      };
      const created = await db().createSession({
        id: "child-1",
        source: "telegram",
        userId: "user-42",
        model: "gpt-4o",
        modelConfig,
        systemPrompt: "You are helpful.\nBe brief.",
        parentSessionId: "parent-1",
        startedAt: 1_700_000_100.25,
        title: "Trip planning",
        sessionKey: "agent:main:telegram:dm:42",
        chatId: "chat-99",
        chatType: "dm",
        threadId: "thread-7",
      });
      const expected: Session = {
        id: "child-1",
        source: "telegram",
        userId: "user-42",
        model: "gpt-4o",
        modelConfig,
        systemPrompt: "You are helpful.\nBe brief.",
        parentSessionId: "parent-1",
        startedAt: 1_700_000_100.25,
        endedAt: null,
        endReason: null,
        title: "Trip planning",
        sessionKey: "agent:main:telegram:dm:42",
        chatId: "chat-99",
        chatType: "dm",
        threadId: "thread-7",
        messageCount: 0,
        toolCallCount: 0,
        lastActiveAt: 1_700_000_100.25,
        preview: null,
        usage: ZERO_USAGE,
      };
      expect(created).toEqual(expected);
      expect(await db().getSession("child-1")).toEqual(expected);
    });

    test("optional fields default to null and startedAt to now", async () => {
      const before = nowSeconds();
      const created = await db().createSession({ id: "minimal", source: "cli" });
      const after = nowSeconds();
      expect(created.startedAt).toBeGreaterThanOrEqual(before - 1);
      expect(created.startedAt).toBeLessThanOrEqual(after + 1);
      const got = await db().getSession("minimal");
      expect(got).toEqual({
        id: "minimal",
        source: "cli",
        userId: null,
        model: null,
        modelConfig: null,
        systemPrompt: null,
        parentSessionId: null,
        startedAt: created.startedAt,
        endedAt: null,
        endReason: null,
        title: null,
        sessionKey: null,
        chatId: null,
        chatType: null,
        threadId: null,
        messageCount: 0,
        toolCallCount: 0,
        lastActiveAt: created.startedAt,
        preview: null,
        usage: ZERO_USAGE,
      });
    });

    test("a generated id has the form YYYYMMDD_HHMMSS_<8 hex> in local time and is unique", async () => {
      const before = localStamp(new Date());
      const created: Session[] = [];
      for (let i = 0; i < 20; i++) created.push(await db().createSession({ source: "cli" }));
      const after = localStamp(new Date());
      for (const session of created) {
        expect(session.id).toMatch(/^\d{8}_\d{6}_[0-9a-f]{8}$/);
        const stamp = session.id.slice(0, 15);
        expect(stamp >= before && stamp <= after, `${stamp} not within [${before}, ${after}]`).toBe(true);
        expect((await db().getSession(session.id))?.id).toBe(session.id);
      }
      expect(new Set(created.map((s) => s.id)).size).toBe(20);
    });

    test("a duplicate id is a ConflictError and leaves the original unchanged", async () => {
      await db().createSession({ id: "dup", source: "cli", model: "m1" });
      await expectReject(() => db().createSession({ id: "dup", source: "telegram", model: "m2" }), ConflictError);
      const got = await db().getSession("dup");
      expect(got?.source).toBe("cli");
      expect(got?.model).toBe("m1");
    });

    test("an unknown parent is a NotFoundError and creates nothing", async () => {
      await expectReject(() => db().createSession({ id: "orphan", source: "cli", parentSessionId: "no-such-parent" }), NotFoundError);
      expect(await db().getSession("orphan")).toBeNull();
    });

    test("getSession of an unknown id is null", async () => {
      expect(await db().getSession("nope")).toBeNull();
    });

    test("endSession sets endedAt and reason; the first reason wins", async () => {
      await db().createSession({ id: "s", source: "cli", startedAt: 1000 });
      expect(await db().endSession("s", "user_exit", { endedAt: 2000.5 })).toBe(true);
      let got = await db().getSession("s");
      expect(got?.endedAt).toBe(2000.5);
      expect(got?.endReason).toBe("user_exit");
      expect(await db().endSession("s", "compression", { endedAt: 3000 })).toBe(false);
      got = await db().getSession("s");
      expect(got?.endedAt).toBe(2000.5);
      expect(got?.endReason).toBe("user_exit");
    });

    test("endSession without endedAt uses now", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const before = nowSeconds();
      await db().endSession("s", "idle");
      const got = await db().getSession("s");
      expect(got?.endedAt).toBeGreaterThanOrEqual(before - 1);
      expect(got?.endedAt).toBeLessThanOrEqual(nowSeconds() + 1);
    });

    test("endSession of an unknown session is a NotFoundError", async () => {
      await expectReject(() => db().endSession("ghost", "x"), NotFoundError);
    });

    test("reopenSession clears the end; false when it was not ended", async () => {
      await db().createSession({ id: "s", source: "cli" });
      expect(await db().reopenSession("s")).toBe(false);
      await db().endSession("s", "idle", { endedAt: 5000 });
      expect(await db().reopenSession("s")).toBe(true);
      const got = await db().getSession("s");
      expect(got?.endedAt).toBeNull();
      expect(got?.endReason).toBeNull();
      expect(await db().reopenSession("s")).toBe(false);
      // It accepts messages again, and can be ended again with a new reason.
      await db().appendMessage("s", user("back again"));
      expect((await db().getSession("s"))?.messageCount).toBe(1);
      expect(await db().endSession("s", "second")).toBe(true);
      expect((await db().getSession("s"))?.endReason).toBe("second");
    });

    test("reopenSession of an unknown session is a NotFoundError", async () => {
      await expectReject(() => db().reopenSession("ghost"), NotFoundError);
    });

    test("appending to an ended session is a ConflictError and writes nothing", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("hello"));
      await db().endSession("s", "done");
      await expectReject(() => db().appendMessage("s", user("too late")), ConflictError);
      await expectReject(() => db().appendTurn("s", [user("too"), user("late")]), ConflictError);
      expect((await db().getSession("s"))?.messageCount).toBe(1);
      expect((await db().getMessages("s")).map((m) => m.content)).toEqual(["hello"]);
    });

    test("resolveSessionId: exact id, unique prefix, ambiguous and unknown", async () => {
      for (const id of ["20240101_120000_aaaa1111", "20240101_120000_aaaa2222", "20240102_090000_bbbb3333"]) {
        await db().createSession({ id, source: "cli" });
      }
      expect(await db().resolveSessionId("20240101_120000_aaaa2222")).toBe("20240101_120000_aaaa2222");
      expect(await db().resolveSessionId("20240102")).toBe("20240102_090000_bbbb3333");
      expect(await db().resolveSessionId("20240101_120000_aaaa1")).toBe("20240101_120000_aaaa1111");
      expect(await db().resolveSessionId("20240101")).toBeNull();
      expect(await db().resolveSessionId("2024")).toBeNull();
      expect(await db().resolveSessionId("zzz")).toBeNull();
      expect(await db().resolveSessionId("20240103")).toBeNull();
    });

    test("resolveSessionId prefers an exact id that is also a prefix of another id", async () => {
      await db().createSession({ id: "abc", source: "cli" });
      await db().createSession({ id: "abcdef", source: "cli" });
      expect(await db().resolveSessionId("abc")).toBe("abc");
      expect(await db().resolveSessionId("abcd")).toBe("abcdef");
      expect(await db().resolveSessionId("ab")).toBeNull();
    });

    test("resolveSessionId treats LIKE/GLOB wildcards literally", async () => {
      await db().createSession({ id: "only-session", source: "cli" });
      expect(await db().resolveSessionId("%")).toBeNull();
      expect(await db().resolveSessionId("o_ly")).toBeNull();
      expect(await db().resolveSessionId("*")).toBeNull();
      expect(await db().resolveSessionId("only")).toBe("only-session");
    });

    test("updateSession changes model, modelConfig and systemPrompt, leaving the rest", async () => {
      await db().createSession({
        id: "s",
        source: "cli",
        model: "m1",
        modelConfig: { temperature: 1 },
        systemPrompt: "old",
        title: "Keep me",
        startedAt: 100,
      });
      const updated = await db().updateSession("s", { model: "m2", modelConfig: { temperature: 0, top_p: 0.9 } });
      expect(updated.model).toBe("m2");
      expect(updated.modelConfig).toEqual({ temperature: 0, top_p: 0.9 });
      expect(updated.systemPrompt).toBe("old");
      expect(updated.title).toBe("Keep me");
      expect(updated.startedAt).toBe(100);
      expect(await db().getSession("s")).toEqual(updated);

      const cleared = await db().updateSession("s", { systemPrompt: null, modelConfig: null });
      expect(cleared.systemPrompt).toBeNull();
      expect(cleared.modelConfig).toBeNull();
      expect(cleared.model).toBe("m2");
      expect(await db().getSession("s")).toEqual(cleared);
    });

    test("updateSession of an unknown session is a NotFoundError", async () => {
      await expectReject(() => db().updateSession("ghost", { model: "x" }), NotFoundError);
    });
  });
}
