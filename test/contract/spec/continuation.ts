/**
 * Contract: a continuation written in one transaction — `continueSession` (the library's
 * compression, no routing entry) and the guarded `writeRoute` (the gateway's) — and
 * `compressSession` on top of them.
 *
 * @module
 */

import { expect } from "vitest";
import { compressSession } from "../../../src/context/index.js";
import type { ConversationMessage, NewMessage, RouteWrite, SummaryRequest } from "../../../src/index.js";
import { ConflictError, InvalidInputError, LeaseLostError, NotFoundError } from "../../../src/store/errors.js";
import { assistant, contractArea, expectReject, routeFields, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000;
const KEY = "agent:main:telegram:dm:77";

function conversation(turns: number, fact = "the launch code is ZEBRA-42"): NewMessage[] {
  const out: NewMessage[] = [];
  for (let i = 0; i < turns; i++) {
    out.push(user(i === 1 ? `remember: ${fact}` : `question ${i}`, T0 + i * 2));
    out.push(assistant(`answer ${i}`, T0 + i * 2 + 1));
  }
  return out;
}

export function continuationTests(init: SessionDBTestInitializer): void {
  contractArea(init, "continuation", (test, { db }) => {
    test("continueSession ends the parent and creates the child with its messages, in one write", async () => {
      await db().createSession({ id: "p", source: "telegram", title: "plans", sessionKey: KEY, chatId: "77", startedAt: T0 });
      const [, last] = await db().appendTurn("p", [user("hello", T0), assistant("hi", T0 + 1)]);
      const child = await db().continueSession({
        parentId: "p",
        reason: "compression",
        ifLastMessageId: last!,
        createSession: { id: "c", source: "telegram", title: "plans #2", sessionKey: KEY, chatId: "77" },
        messages: [{ role: "user", content: "[summary]", platformMessageId: "summary:p" }, assistant("hi", T0 + 1)],
        at: T0 + 5,
      });
      expect(child).toMatchObject({ id: "c", parentSessionId: "p", title: "plans #2", sessionKey: KEY, messageCount: 2, endedAt: null });
      expect(await db().getSession("p")).toMatchObject({ endReason: "compression", endedAt: T0 + 5 });
      expect((await db().getMessages("c")).map((m) => [m.role, m.content, m.platformMessageId])).toEqual([
        ["user", "[summary]", "summary:p"],
        ["assistant", "hi", null],
      ]);
      expect(await db().getCompressionTip("p")).toBe("c");
    });

    test("continueSession writes nothing when a message arrived after the one it was guarded by", async () => {
      await db().createSession({ id: "p", source: "cli", title: "guarded", startedAt: T0 });
      const [first] = await db().appendTurn("p", [user("one", T0)]);
      await db().appendMessage("p", assistant("two", T0 + 1));
      const write = {
        parentId: "p",
        reason: "compression",
        ifLastMessageId: first!,
        createSession: { id: "c", source: "cli", title: "guarded #2" },
        messages: [user("s")],
      };
      expect(await db().continueSession(write)).toBeNull();
      expect(await db().getSession("c")).toBeNull();
      expect((await db().getSession("p"))!.endedAt).toBeNull();
      // The title was not claimed either: the retry with the right guard takes it.
      const last = (await db().getMessages("p")).at(-1)!.id;
      expect((await db().continueSession({ ...write, ifLastMessageId: last }))!.title).toBe("guarded #2");
      // A session without messages is guarded by null.
      await db().createSession({ id: "empty", source: "cli", startedAt: T0 });
      expect(await db().continueSession({ ...write, parentId: "empty", ifLastMessageId: 7, createSession: { id: "e2", source: "cli" } })).toBeNull();
      expect(await db().continueSession({ ...write, parentId: "empty", ifLastMessageId: null, createSession: { id: "e2", source: "cli" } })).not.toBeNull();
    });

    test("continueSession is all or nothing: a bad message, a taken id, an ended or unknown parent write nothing", async () => {
      await db().createSession({ id: "p", source: "cli", startedAt: T0 });
      await db().createSession({ id: "taken", source: "cli", startedAt: T0 });
      const base = { parentId: "p", reason: "compression", ifLastMessageId: null, createSession: { id: "c", source: "cli" }, messages: [user("s")] };
      await expectReject(
        () => db().continueSession({ ...base, messages: [user("s"), { role: "" } as unknown as NewMessage] }),
        InvalidInputError,
        /messages\[1\]/u,
      );
      await expectReject(() => db().continueSession({ ...base, createSession: { id: "taken", source: "cli" } }), ConflictError);
      expect((await db().getSession("p"))!.endedAt).toBeNull();
      expect(await db().getSession("c")).toBeNull();
      await expectReject(() => db().continueSession({ ...base, parentId: "nope" }), NotFoundError);
      await expectReject(() => db().continueSession({ ...base, ifLastMessageId: undefined as unknown as null }), InvalidInputError, /ifLastMessageId/u);
      await db().endSession("p", "user_exit");
      await expectReject(() => db().continueSession(base), ConflictError, /has ended/u);
      expect(await db().getSession("c")).toBeNull();
    });

    test("continueSession is fenced by a lease", async () => {
      await db().createSession({ id: "p", source: "cli", startedAt: T0 });
      const lease = (await db().acquireLease("compress:k", "a", { ttlSeconds: 30 }))!;
      await db().releaseLease("compress:k", "a", lease.token);
      await db().acquireLease("compress:k", "b", { ttlSeconds: 30 });
      await expectReject(
        () =>
          db().continueSession({
            parentId: "p",
            reason: "compression",
            ifLastMessageId: null,
            createSession: { id: "c", source: "cli" },
            messages: [],
            fence: { key: "compress:k", token: lease.token },
          }),
        LeaseLostError,
      );
      expect((await db().getSession("p"))!.endedAt).toBeNull();
    });

    test("writeRoute's endSession.ifLastMessageId: a stale guard writes nothing (no child, no switch, no end)", async () => {
      const route = (await db().writeRoute({
        key: KEY,
        expectedVersion: null,
        route: routeFields("p", T0),
        createSession: { id: "p", source: "telegram", sessionKey: KEY, startedAt: T0 },
      }))!;
      const [first] = await db().appendTurn("p", [user("one", T0), assistant("two", T0 + 1)]);
      const write: RouteWrite = {
        key: KEY,
        expectedVersion: route.version,
        route: routeFields("c", T0 + 2),
        endSession: { id: "p", reason: "compression", ifLastMessageId: first! },
        createSession: { id: "c", source: "telegram", parentSessionId: "p", sessionKey: KEY },
        appendMessages: [user("summary")],
      };
      expect(await db().writeRoute(write)).toBeNull();
      expect(await db().getRoute(KEY)).toMatchObject({ sessionId: "p", version: route.version });
      expect(await db().getSession("c")).toBeNull();
      expect((await db().getSession("p"))!.endedAt).toBeNull();
      const last = (await db().getMessages("p")).at(-1)!.id;
      const switched = await db().writeRoute({ ...write, endSession: { id: "p", reason: "compression", ifLastMessageId: last } });
      expect(switched).toMatchObject({ sessionId: "c", version: route.version + 1 });
      expect((await db().getSession("p"))!.endReason).toBe("compression");
      expect((await db().getMessages("c")).map((m) => m.content)).toEqual(["summary"]);
      await expectReject(() => db().writeRoute({ ...write, endSession: { id: "p", reason: "x", ifLastMessageId: -1 } }), InvalidInputError, /ifLastMessageId/u);
    });

    test("compressSession: a lineage t, t #2, t #3; the summary is stored first, marked, searchable; early facts reach the summariser; head and tail are kept", async () => {
      await db().createSession({ id: "root", source: "telegram", title: "t", sessionKey: KEY, chatId: "77", userId: "u1", startedAt: T0 });
      await db().appendTurn("root", conversation(20));
      const calls: Array<{ messages: ConversationMessage[]; request: SummaryRequest }> = [];
      const summarize = async (messages: ConversationMessage[], request: SummaryRequest): Promise<string> => {
        calls.push({ messages, request });
        const facts = [request.previousSummary ?? "", ...messages.map((m) => String(m.content))].join(" ").match(/ZEBRA-\d+|PUMA-\d+/gu) ?? [];
        return `Facts: ${[...new Set(facts)].join(", ") || "none"}`;
      };
      const first = (await compressSession(db(), "root", { summarize, protectFirstN: 0, protectLastN: 4, contextWindow: 200, threshold: 0.5 }))!;
      expect(first).toMatchObject({ title: "t #2", summary: "Facts: ZEBRA-42" });
      expect(first.summarized + first.kept).toBe(40);
      expect(calls[0]!.request).toEqual({ focus: null, previousSummary: null });
      const child = (await db().getSession(first.childId))!;
      expect(child).toMatchObject({ parentSessionId: "root", sessionKey: KEY, chatId: "77", userId: "u1", source: "telegram", endedAt: null });
      expect((await db().getSession("root"))!.endReason).toBe("compression");
      const stored = await db().getMessages(first.childId);
      expect(stored[0]).toMatchObject({ role: "user", platformMessageId: "summary:root" });
      expect(stored[0]!.content).toBe("[Summary of the earlier conversation (session root)]\nFacts: ZEBRA-42");
      // The tail starts at a user message and ends with the newest one.
      expect(stored[1]!.role).toBe("user");
      expect(stored.at(-1)!.content).toBe("answer 19");
      expect(stored.length - 1).toBe(first.kept);
      expect((await db().searchMessages("ZEBRA")).map((h) => h.sessionId)).toContain(first.childId);

      await db().appendTurn(first.childId, [user("also PUMA-7 matters"), assistant("noted"), ...conversation(10).slice(4)]);
      const second = (await compressSession(db(), first.childId, {
        summarize,
        protectFirstN: 0,
        protectLastN: 2,
        contextWindow: 200,
        threshold: 0.5,
        focus: "  the launch  ",
      }))!;
      expect(second.title).toBe("t #3");
      expect(calls[1]!.request).toEqual({ focus: "the launch", previousSummary: "Facts: ZEBRA-42" });
      // The earlier summary is folded in, not summarised as a message again.
      expect(calls[1]!.messages.some((m) => String(m.content).startsWith("[Summary of"))).toBe(false);
      expect(second.summary).toBe("Facts: ZEBRA-42, PUMA-7");
      expect(await db().getCompressionTip("root")).toBe(second.childId);
    });

    test("compressSession returns null when the head and tail hold everything; with whenAllKept all, the child starts from the summary alone", async () => {
      await db().createSession({ id: "s", source: "cli", startedAt: T0 });
      await db().appendTurn("s", conversation(2));
      const summarize = async (): Promise<string> => "short";
      expect(await compressSession(db(), "s", { summarize })).toBeNull();
      expect((await db().getSession("s"))!.endedAt).toBeNull();
      const all = (await compressSession(db(), "s", { summarize, whenAllKept: "all" }))!;
      expect(all).toMatchObject({ summarized: 4, kept: 0, title: null });
      expect((await db().getMessages(all.childId)).map((m) => m.content)).toEqual(["[Summary of the earlier conversation (session s)]\nshort"]);
      // A session that holds only its summary has nothing more to compress.
      expect(await compressSession(db(), all.childId, { summarize, whenAllKept: "all" })).toBeNull();
      await db().appendTurn(all.childId, [user("more"), assistant("sure")]);
      await expectReject(() => compressSession(db(), all.childId, { summarize: async () => "  ", whenAllKept: "all" }), InvalidInputError, /empty summary/u);
      expect((await db().getSession(all.childId))!.endedAt).toBeNull();
    });

    test("compressSession copies a message stored while the summary was being written", async () => {
      await db().createSession({ id: "s", source: "cli", startedAt: T0 });
      await db().appendTurn("s", conversation(10));
      const result = (await compressSession(db(), "s", {
        protectFirstN: 0,
        protectLastN: 2,
        contextWindow: 100,
        summarize: async () => {
          await db().appendTurn("s", [user("late arrival"), assistant("late reply")]);
          return "sum";
        },
      }))!;
      const contents = (await db().getMessages(result.childId)).map((m) => m.content);
      expect(contents.slice(-2)).toEqual(["late arrival", "late reply"]);
    });
  });
}
