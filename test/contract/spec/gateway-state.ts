/**
 * Contract: gateway state — routing entries written atomically with the session rows
 * they imply, the identity alias registry and the durable inbound queue.
 *
 * @module
 */

import { expect } from "vitest";
import type { RouteFields, RouteWrite } from "../../../src/store/contract.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { assistant, contractArea, expectReject, routeFields, user, ZERO_USAGE } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000;

function fields(sessionId: string, overrides: Partial<RouteFields> = {}): RouteFields {
  return routeFields(sessionId, T0, { origin: { platform: "telegram", chatId: "42", chatType: "dm" }, displayName: "Alice", ...overrides });
}

const KEY = "agent:main:telegram:dm:42";
const S1 = "20270115_080000_aaaaaaaa";
const S2 = "20270115_090000_bbbbbbbb";

function create(key: string, sessionId: string, overrides: Partial<RouteFields> = {}): RouteWrite {
  return {
    key,
    expectedVersion: null,
    route: fields(sessionId, overrides),
    createSession: { id: sessionId, source: "telegram", sessionKey: key, startedAt: T0 },
  };
}

export function gatewayStateTests(init: SessionDBTestInitializer): void {
  contractArea(init, "gateway-state", (test, { db }) => {
    test("writeRoute creates the session and the entry together; every field round-trips", async () => {
      const route = await db().writeRoute(create(KEY, S1, { resumeReason: "x", lastResumeMarkedAt: T0 + 1.5, lastPromptTokens: 77 }));
      expect(route).toEqual({ key: KEY, version: 1, ...fields(S1, { resumeReason: "x", lastResumeMarkedAt: T0 + 1.5, lastPromptTokens: 77 }) });
      expect(await db().getRoute(KEY)).toEqual(route);
      const session = await db().getSession(S1);
      expect(session?.sessionKey).toBe(KEY);
      expect(session?.endedAt).toBeNull();
      expect(await db().getRoute("agent:main:telegram:dm:43")).toBeNull();
    });

    test("a reset ends the old session, creates the new one and moves the entry in one write", async () => {
      const first = (await db().writeRoute(create(KEY, S1)))!;
      const second = await db().writeRoute({
        key: KEY,
        expectedVersion: first.version,
        route: fields(S2, { wasAutoReset: true, autoResetReason: "idle", updatedAt: T0 + 100, createdAt: T0 + 100 }),
        endSession: { id: S1, reason: "session_reset", endedAt: T0 + 100 },
        createSession: { id: S2, source: "telegram", sessionKey: KEY, startedAt: T0 + 100 },
      });
      expect(second?.version).toBe(2);
      expect(second?.sessionId).toBe(S2);
      expect(second?.autoResetReason).toBe("idle");
      const old = await db().getSession(S1);
      expect(old?.endedAt).toBe(T0 + 100);
      expect(old?.endReason).toBe("session_reset");
      expect(await db().findLiveSessionByKey(KEY)).toMatchObject({ id: S2 });
    });

    test("a stale expectedVersion writes nothing and returns null", async () => {
      const first = (await db().writeRoute(create(KEY, S1)))!;
      await db().writeRoute({ key: KEY, expectedVersion: 1, route: fields(S1, { updatedAt: T0 + 5 }) });
      const lost = await db().writeRoute({
        key: KEY,
        expectedVersion: first.version,
        route: fields(S2),
        endSession: { id: S1, reason: "session_reset" },
        createSession: { id: S2, source: "telegram", sessionKey: KEY },
      });
      expect(lost).toBeNull();
      expect(await db().getSession(S2)).toBeNull();
      expect((await db().getSession(S1))?.endedAt).toBeNull();
      expect((await db().getRoute(KEY))?.updatedAt).toBe(T0 + 5);
      // A second create of the same key is also a lost race.
      expect(await db().writeRoute(create(KEY, S2))).toBeNull();
    });

    test("a failing part rolls the whole write back", async () => {
      const first = (await db().writeRoute(create(KEY, S1)))!;
      await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: first.version,
            route: fields(S2),
            endSession: { id: S1, reason: "session_reset" },
            createSession: { id: S2, source: "telegram", sessionKey: KEY, parentSessionId: "no-such-parent" },
          }),
        NotFoundError,
      );
      expect((await db().getSession(S1))?.endedAt).toBeNull();
      expect(await db().getRoute(KEY)).toEqual(first);
      // An entry must route to an existing session.
      await expectReject(() => db().writeRoute({ key: "agent:main:cli:dm", expectedVersion: null, route: fields("20270101_000000_cccccccc") }), NotFoundError);
      expect(await db().getRoute("agent:main:cli:dm")).toBeNull();
    });

    test("reopenSession in a write brings an ended session back (a /resume switch)", async () => {
      const first = (await db().writeRoute(create(KEY, S1)))!;
      await db().createSession({ id: S2, source: "telegram", sessionKey: KEY });
      await db().endSession(S2, "session_reset");
      const switched = await db().writeRoute({
        key: KEY,
        expectedVersion: first.version,
        route: fields(S2),
        endSession: { id: S1, reason: "session_switch" },
        reopenSession: S2,
      });
      expect(switched?.sessionId).toBe(S2);
      expect((await db().getSession(S2))?.endedAt).toBeNull();
      expect((await db().getSession(S1))?.endReason).toBe("session_switch");
    });

    test("keys and session ids with path separators, '..' or a drive prefix are rejected", async () => {
      for (const key of ["a/b", "a\\b", "../x", "agent:..:x", "C:evil"]) {
        await expectReject(() => db().writeRoute(create(key, S1)), InvalidInputError, /path separator/);
      }
      await expectReject(() => db().writeRoute(create(KEY, "../etc")), InvalidInputError, /route\.sessionId/);
      await expectReject(() => db().enqueue("x/y", { payload: 1 }), InvalidInputError);
      expect(await db().getSession(S1)).toBeNull();
    });

    test("bad routing fields are rejected with the field's name", async () => {
      await expectReject(() => db().writeRoute(create(KEY, S1, { suspended: "yes" as unknown as boolean })), InvalidInputError, /suspended/);
      await expectReject(() => db().writeRoute(create(KEY, S1, { interruptedRestarts: -1 })), InvalidInputError, /interruptedRestarts/);
      await expectReject(() => db().writeRoute({ ...create(KEY, S1), expectedVersion: 0 }), InvalidInputError, /expectedVersion/);
      await expectReject(() => db().writeRoute({ ...create(KEY, S1), createSession: { id: S2, source: "telegram" } }), InvalidInputError, /createSession\.id/);
    });

    test("findRouteBySession, deleteRoute with and without a version", async () => {
      const first = (await db().writeRoute(create(KEY, S1)))!;
      expect(await db().findRouteBySession(S1)).toEqual(first);
      expect(await db().findRouteBySession(S2)).toBeNull();
      expect(await db().deleteRoute(KEY, { expectedVersion: 7 })).toBe(false);
      expect(await db().deleteRoute(KEY, { expectedVersion: 1 })).toBe(true);
      expect(await db().deleteRoute(KEY)).toBe(false);
      expect(await db().getRoute(KEY)).toBeNull();
      // The session and its history stay.
      expect(await db().getSession(S1)).not.toBeNull();
    });

    test("listRoutes pages in key order and filters", async () => {
      const keys: string[] = [];
      for (let i = 0; i < 7; i++) {
        const key = `agent:main:telegram:dm:${i}`;
        const id = `20270115_08000${i}_0000000${i}`;
        keys.push(key);
        await db().writeRoute(
          create(key, id, {
            updatedAt: T0 + i * 60,
            suspended: i === 2,
            resumePending: i === 3,
            expiryFinalized: i === 4,
            turnStartedAt: i === 5 ? T0 : null,
          }),
        );
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await db().listRoutes({ limit: 3, cursor });
        expect(page.items.length).toBeLessThanOrEqual(3);
        seen.push(...page.items.map((r) => r.key));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(seen).toEqual([...keys].sort());
      const since = await db().listRoutes({ updatedSince: T0 + 300 });
      expect(since.items.map((r) => r.key)).toEqual(keys.slice(5));
      const before = await db().listRoutes({ updatedBefore: T0 + 120 });
      expect(before.items.map((r) => r.key)).toEqual(keys.slice(0, 2));
      expect((await db().listRoutes({ suspended: true })).items.map((r) => r.key)).toEqual([keys[2]]);
      expect((await db().listRoutes({ resumePending: true })).items.map((r) => r.key)).toEqual([keys[3]]);
      expect((await db().listRoutes({ expiryFinalized: true })).items.map((r) => r.key)).toEqual([keys[4]]);
      expect((await db().listRoutes({ turnInProgress: true })).items.map((r) => r.key)).toEqual([keys[5]]);
      expect((await db().listRoutes({ turnInProgress: false })).items).toHaveLength(6);
      await expectReject(() => db().listRoutes({ cursor: "nonsense" }), InvalidInputError, /cursor/);
      await expectReject(() => db().listRoutes({ limit: 0 }), InvalidInputError, /limit/);
    });

    test("findLiveSessionByKey: the newest live session of a key, never an ended one", async () => {
      expect(await db().findLiveSessionByKey(KEY)).toBeNull();
      await db().createSession({ id: S1, source: "telegram", sessionKey: KEY, startedAt: T0 });
      await db().createSession({ id: S2, source: "telegram", sessionKey: KEY, startedAt: T0 + 10 });
      expect((await db().findLiveSessionByKey(KEY))?.id).toBe(S2);
      await db().endSession(S2, "session_reset");
      expect((await db().findLiveSessionByKey(KEY))?.id).toBe(S1);
      await db().endSession(S1, "session_reset");
      expect(await db().findLiveSessionByKey(KEY)).toBeNull();
    });

    test("aliases: chains resolve to the shortest id, ties lexicographic, namespaces apart", async () => {
      expect(await db().resolveAlias("whatsapp", "999999999999999")).toBe("999999999999999");
      expect(await db().recordAlias("whatsapp", "999999999999999", "15551234567")).toBe("15551234567");
      expect(await db().resolveAlias("whatsapp", "999999999999999")).toBe("15551234567");
      // A chain: a third id joins through the long one.
      expect(await db().recordAlias("whatsapp", "88888888888888888", "999999999999999")).toBe("15551234567");
      expect(await db().resolveAlias("whatsapp", "88888888888888888")).toBe("15551234567");
      // Two groups merge; the shorter canonical wins for every member.
      expect(await db().recordAlias("whatsapp", "7777", "66666666")).toBe("7777");
      expect(await db().recordAlias("whatsapp", "66666666", "15551234567")).toBe("7777");
      for (const id of ["999999999999999", "88888888888888888", "15551234567", "66666666", "7777"]) {
        expect(await db().resolveAlias("whatsapp", id)).toBe("7777");
      }
      // listAliases: the whole group from any member, canonical first; an unknown id is its own group.
      for (const id of ["7777", "88888888888888888"]) {
        expect(await db().listAliases("whatsapp", id)).toEqual(["7777", "15551234567", "66666666", "88888888888888888", "999999999999999"]);
      }
      expect(await db().listAliases("whatsapp", "123")).toEqual(["123"]);
      expect(await db().listAliases("telegram", "7777")).toEqual(["7777"]);
      // Ties: same length, lexicographically first.
      expect(await db().recordAlias("signal", "bbb", "aab")).toBe("aab");
      expect(await db().resolveAlias("signal", "bbb")).toBe("aab");
      // Recording a known pair again changes nothing.
      expect(await db().recordAlias("signal", "aab", "bbb")).toBe("aab");
      expect(await db().resolveAlias("telegram", "bbb")).toBe("bbb");
      await expectReject(() => db().recordAlias("whatsapp", "", "x"), InvalidInputError);
    });

    test("queue: FIFO order, depth counts waiting items, cap refuses with 'full'", async () => {
      for (let i = 1; i <= 5; i++) {
        const result = await db().enqueue(KEY, { payload: { text: `m${i}` }, messageId: `p${i}`, at: T0 + i });
        expect(result).toMatchObject({ status: "queued", depth: i });
      }
      const items = await db().listQueue(KEY);
      expect(items.map((i) => i.payloads)).toEqual([1, 2, 3, 4, 5].map((n) => [{ text: `m${n}` }]));
      expect(items[0]).toMatchObject({ key: KEY, messageIds: ["p1"], mergeKey: null, enqueuedAt: T0 + 1, lastEventAt: T0 + 1, claimedAt: null });
      expect(await db().enqueue(KEY, { payload: "x" }, { maxDepth: 5 })).toEqual({ status: "full", depth: 5 });
      expect(await db().listQueue(KEY)).toHaveLength(5);
      expect(await db().listQueuedKeys()).toEqual([KEY]);
      await expectReject(() => db().enqueue(KEY, { payload: undefined }), InvalidInputError, /payload/);
      await expectReject(() => db().enqueue(KEY, { payload: 1 }, { maxDepth: 0 }), InvalidInputError, /maxDepth/);
    });

    test("queue: a platform message id already queued is a duplicate and changes nothing", async () => {
      await db().enqueue(KEY, { payload: "a", messageId: "m1" });
      expect(await db().enqueue(KEY, { payload: "again", messageId: "m1" })).toEqual({ status: "duplicate", depth: 1 });
      // The same id under another key is another message.
      expect((await db().enqueue("agent:main:telegram:dm:7", { payload: "a", messageId: "m1" })).status).toBe("queued");
      expect((await db().listQueue(KEY)).map((i) => i.payloads)).toEqual([["a"]]);
    });

    test("queue: claim keeps the item until completed, so it is replayed; clear keeps the claimed one", async () => {
      await db().enqueue(KEY, { payload: "one", messageId: "1" });
      await db().enqueue(KEY, { payload: "two", messageId: "2" });
      const claimed = await db().claimQueued(KEY, { at: T0 + 50 });
      expect(claimed).toMatchObject({ payloads: ["one"], claimedAt: T0 + 50 });
      // A claimed item is not waiting any more; claiming again returns it (replay after a crash).
      expect((await db().enqueue(KEY, { payload: "three" })).depth).toBe(2);
      expect(await db().claimQueued(KEY, { at: T0 + 99 })).toMatchObject({ id: claimed!.id, claimedAt: T0 + 50 });
      // A duplicate of a claimed message is still a duplicate.
      expect((await db().enqueue(KEY, { payload: "one", messageId: "1" })).status).toBe("duplicate");
      expect(await db().clearQueue(KEY)).toBe(2);
      expect((await db().listQueue(KEY)).map((i) => i.id)).toEqual([claimed!.id]);
      expect(await db().completeQueued(KEY, claimed!.id)).toBe(true);
      expect(await db().completeQueued(KEY, claimed!.id)).toBe(false);
      expect(await db().claimQueued(KEY)).toBeNull();
      expect(await db().listQueuedKeys()).toEqual([]);
    });

    test("queue: media events with one merge key merge into one item; text never merges", async () => {
      const album = { mergeKey: "media:u1:album9", mergeWithinSeconds: null };
      await db().enqueue(KEY, { payload: "caption text", messageId: "t0", at: T0 });
      expect((await db().enqueue(KEY, { payload: { photo: 1 }, messageId: "a1", at: T0 + 1, ...album })).status).toBe("queued");
      const merged = await db().enqueue(KEY, { payload: { photo: 2 }, messageId: "a2", at: T0 + 30, ...album });
      expect(merged).toMatchObject({ status: "merged", depth: 2 });
      if (merged.status === "merged") {
        expect(merged.item.payloads).toEqual([{ photo: 1 }, { photo: 2 }]);
        expect(merged.item.messageIds).toEqual(["a1", "a2"]);
        expect(merged.item.lastEventAt).toBe(T0 + 30);
      }
      // Without an album id: a window of 2 s.
      const loose = { mergeKey: "media:u1:", mergeWithinSeconds: 2 };
      await db().enqueue(KEY, { payload: { photo: 3 }, at: T0 + 100, ...loose });
      expect((await db().enqueue(KEY, { payload: { photo: 4 }, at: T0 + 102, ...loose })).status).toBe("merged");
      expect((await db().enqueue(KEY, { payload: { photo: 5 }, at: T0 + 104.5, ...loose })).status).toBe("queued");
      // A text in between breaks a burst.
      await db().enqueue(KEY, { payload: "text", at: T0 + 105 });
      expect((await db().enqueue(KEY, { payload: { photo: 6 }, at: T0 + 105.5, ...loose })).status).toBe("queued");
      // A claimed item is never merged into.
      await db().claimQueued("agent:x");
      const other = "agent:main:telegram:dm:9";
      await db().enqueue(other, { payload: { photo: 1 }, at: T0, ...album });
      await db().claimQueued(other);
      expect((await db().enqueue(other, { payload: { photo: 2 }, at: T0 + 1, ...album })).status).toBe("queued");
      expect((await db().listQueue(KEY)).map((i) => i.payloads.length)).toEqual([1, 2, 2, 1, 1, 1]);
    });

    test("listSessions with sessionKey: the sessions of one key, newest first, ended ones included", async () => {
      await db().createSession({ id: S1, source: "telegram", sessionKey: KEY, startedAt: T0 });
      await db().createSession({ id: S2, source: "telegram", sessionKey: KEY, startedAt: T0 + 10, title: "second" });
      await db().createSession({ id: "other", source: "telegram", sessionKey: "agent:main:telegram:dm:7", startedAt: T0 + 20 });
      await db().endSession(S1, "session_reset");
      const ofKey = { sessionKey: KEY, orderBy: "started", includeChildren: true } as const;
      const listed = await db().listSessions(ofKey);
      expect(listed.items.map((s) => s.id)).toEqual([S2, S1]);
      expect(listed.nextCursor).toBeNull();
      expect(listed.items[0]).toMatchObject({ title: "second", endedAt: null });
      expect(listed.items[1]?.endReason).toBe("session_reset");
      const first = await db().listSessions({ ...ofKey, limit: 1 });
      expect(first.items.map((s) => s.id)).toEqual([S2]);
      const second = await db().listSessions({ ...ofKey, limit: 1, cursor: first.nextCursor });
      expect([second.items.map((s) => s.id), second.nextCursor]).toEqual([[S1], null]);
      // Combined with the default ordering (last activity, chains as tips) and other filters.
      expect((await db().listSessions({ sessionKey: KEY })).items.map((s) => s.id).sort()).toEqual([S1, S2].sort());
      expect((await db().listSessions({ sessionKey: KEY, titled: true })).items.map((s) => s.id)).toEqual([S2]);
      expect((await db().listSessions({ sessionKey: "agent:main:cli:dm" })).items).toEqual([]);
      await expectReject(() => db().listSessions({ ...ofKey, limit: 0 }), InvalidInputError, /limit/);
      await expectReject(() => db().listSessions({ sessionKey: "" }), InvalidInputError, /sessionKey/);
    });

    test("a bounded history window: the last N messages, starting at a user turn", async () => {
      await db().createSession({ id: S1, source: "telegram" });
      await db().appendTurn(S1, [
        user("q1"),
        { role: "assistant", content: null, toolCalls: [{ id: "c1", type: "function", function: { name: "search", arguments: "{}" } }] },
        { role: "tool", toolCallId: "c1", toolName: "search", content: "result" },
        { role: "assistant", content: "a1" },
        user("q2"),
        { role: "assistant", content: "a2" },
      ]);
      expect((await db().getMessages(S1, { lastMessages: 3 })).map((m) => m.content)).toEqual(["a1", "q2", "a2"]);
      // The conversation window never starts with a tool result or an orphaned reply.
      expect((await db().getConversation(S1, { lastMessages: 4 })).map((m) => m.content)).toEqual(["q2", "a2"]);
      expect((await db().getConversation(S1, { lastMessages: 6 })).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"]);
      expect(await db().getConversation(S1, { lastMessages: 100 })).toHaveLength(6);
      await db().rewind(S1);
      expect((await db().getMessages(S1, { lastMessages: 2 })).map((m) => m.content)).toEqual(["result", "a1"]);
      expect((await db().getMessages(S1, { lastMessages: 2, includeRewound: true })).map((m) => m.content)).toEqual(["q2", "a2"]);
      await expectReject(() => db().getMessages(S1, { lastMessages: 0 }), InvalidInputError, /lastMessages/);
    });

    test("appendMessages and recordUsage commit with the entry in one write", async () => {
      await db().writeRoute(create(KEY, S1));
      const route = await db().writeRoute({
        key: KEY,
        expectedVersion: 1,
        route: fields(S1, { updatedAt: T0 + 10, lastPromptTokens: 120 }),
        appendMessages: [user("  what is   the weather ", T0 + 5), assistant("sunny", T0 + 6)],
        recordUsage: { inputTokens: 120, outputTokens: 30, apiCalls: 1, estimatedCostUsd: 0.25, costStatus: "estimated" },
      });
      expect(route).toMatchObject({ version: 2, sessionId: S1, updatedAt: T0 + 10, lastPromptTokens: 120 });
      expect(await db().getRoute(KEY)).toEqual(route);
      const messages = await db().getMessages(S1);
      expect(messages.map((m) => [m.role, m.content, m.timestamp])).toEqual([
        ["user", "  what is   the weather ", T0 + 5],
        ["assistant", "sunny", T0 + 6],
      ]);
      expect(messages[1]!.id).toBeGreaterThan(messages[0]!.id);
      const session = await db().getSession(S1);
      expect(session).toMatchObject({ messageCount: 2, toolCallCount: 0, lastActiveAt: T0 + 6, preview: "what is the weather" });
      expect(session?.usage).toEqual({
        ...ZERO_USAGE,
        inputTokens: 120,
        outputTokens: 30,
        apiCalls: 1,
        estimatedCostUsd: 0.25,
        costStatus: "estimated",
      });
      // The next turn adds (delta), counters grow, the preview stays the first user message.
      await db().writeRoute({
        key: KEY,
        expectedVersion: 2,
        route: fields(S1, { updatedAt: T0 + 20 }),
        appendMessages: [
          user("and tomorrow?", T0 + 15),
          {
            role: "assistant",
            content: null,
            toolCalls: [{ id: "c1", type: "function", function: { name: "forecast", arguments: "{}" } }],
            timestamp: T0 + 16,
          },
        ],
        recordUsage: { inputTokens: 80, apiCalls: 1, actualCostUsd: 0.5 },
      });
      const after = await db().getSession(S1);
      expect(after).toMatchObject({ messageCount: 4, toolCallCount: 1, lastActiveAt: T0 + 16, preview: "what is the weather" });
      expect(after?.usage).toMatchObject({ inputTokens: 200, outputTokens: 30, apiCalls: 2, actualCostUsd: 0.5 });
      // An empty appendMessages is a no-op; bad messages are named by their place.
      expect(await db().writeRoute({ key: KEY, expectedVersion: 3, route: fields(S1), appendMessages: [] })).toMatchObject({ version: 4 });
      expect(await db().getMessages(S1)).toHaveLength(4);
      await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 4,
            route: fields(S1),
            appendMessages: [user("fine"), { role: "bogus" as "user", content: "x" }],
          }),
        InvalidInputError,
        /appendMessages\[1\]\.role/,
      );
      await expectReject(
        () => db().writeRoute({ key: KEY, expectedVersion: 4, route: fields(S1), recordUsage: { inputTokens: 1.5 } }),
        InvalidInputError,
        /inputTokens/,
      );
      expect((await db().getRoute(KEY))?.version).toBe(4);
      expect(await db().getMessages(S1)).toHaveLength(4);
    });

    test("a stale expectedVersion appends and records nothing", async () => {
      await db().writeRoute(create(KEY, S1));
      await db().writeRoute({ key: KEY, expectedVersion: 1, route: fields(S1, { updatedAt: T0 + 5 }) });
      const lost = await db().writeRoute({
        key: KEY,
        expectedVersion: 1,
        route: fields(S1, { updatedAt: T0 + 9 }),
        appendMessages: [user("late"), assistant("reply")],
        recordUsage: { inputTokens: 10, apiCalls: 1 },
      });
      expect(lost).toBeNull();
      expect(await db().getMessages(S1)).toEqual([]);
      const session = await db().getSession(S1);
      expect(session).toMatchObject({ messageCount: 0, preview: null });
      expect(session?.usage).toEqual(ZERO_USAGE);
      expect(await db().getRoute(KEY)).toMatchObject({ version: 2, updatedAt: T0 + 5 });
      // A lost create of an existing key appends nothing either.
      expect(await db().writeRoute({ ...create(KEY, S2), appendMessages: [user("x")] })).toBeNull();
      expect(await db().getSession(S2)).toBeNull();
    });

    test("a usage update that would go negative rolls the whole write back", async () => {
      await db().writeRoute(create(KEY, S1));
      const second = (await db().writeRoute({
        key: KEY,
        expectedVersion: 1,
        route: fields(S1, { updatedAt: T0 + 5 }),
        appendMessages: [user("first")],
        recordUsage: { inputTokens: 10, outputTokens: 5 },
      }))!;
      expect(second.version).toBe(2);
      await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 2,
            route: fields(S1, { updatedAt: T0 + 9 }),
            appendMessages: [user("second"), assistant("answer")],
            recordUsage: { inputTokens: 5, outputTokens: -6 },
          }),
        InvalidInputError,
        /outputTokens negative/,
      );
      expect(await db().getRoute(KEY)).toEqual(second);
      expect((await db().getMessages(S1)).map((m) => m.content)).toEqual(["first"]);
      const session = await db().getSession(S1);
      expect(session?.messageCount).toBe(1);
      expect(session?.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
      // With a reset in the same write: the old session stays live, the new one is never created.
      await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 2,
            route: fields(S2),
            endSession: { id: S1, reason: "session_reset" },
            createSession: { id: S2, source: "telegram", sessionKey: KEY },
            appendMessages: [user("new start")],
            recordUsage: { apiCalls: -1 },
          }),
        InvalidInputError,
        /apiCalls/,
      );
      expect(await db().getSession(S2)).toBeNull();
      expect((await db().getSession(S1))?.endedAt).toBeNull();
      expect(await db().getRoute(KEY)).toEqual(second);
      // The route's version still works for the next write.
      expect((await db().writeRoute({ key: KEY, expectedVersion: 2, route: fields(S1), recordUsage: { outputTokens: -5 } }))?.version).toBe(3);
      expect((await db().getSession(S1))?.usage.outputTokens).toBe(0);
    });

    test("appending to an ended session through writeRoute is a ConflictError and writes nothing", async () => {
      await db().writeRoute(create(KEY, S1));
      await db().appendMessage(S1, user("before"));
      await db().endSession(S1, "session_reset", { endedAt: T0 + 50 });
      await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 1,
            route: fields(S1, { updatedAt: T0 + 60 }),
            appendMessages: [user("after the end")],
            recordUsage: { inputTokens: 7 },
          }),
        ConflictError,
        /has ended/,
      );
      expect((await db().getRoute(KEY))?.version).toBe(1);
      expect((await db().getMessages(S1)).map((m) => m.content)).toEqual(["before"]);
      expect((await db().getSession(S1))?.usage.inputTokens).toBe(0);
      // Ending it in the same write comes first, so the append conflicts too.
      await db().reopenSession(S1);
      await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 1,
            route: fields(S1),
            endSession: { id: S1, reason: "session_reset" },
            appendMessages: [user("x")],
          }),
        ConflictError,
      );
      expect((await db().getSession(S1))?.endedAt).toBeNull();
      // Reopening in the same write comes first, so the append goes through.
      await db().endSession(S1, "session_reset");
      const resumed = await db().writeRoute({
        key: KEY,
        expectedVersion: 1,
        route: fields(S1, { updatedAt: T0 + 70 }),
        reopenSession: S1,
        appendMessages: [user("resumed")],
      });
      expect(resumed?.version).toBe(2);
      expect((await db().getMessages(S1)).map((m) => m.content)).toEqual(["before", "resumed"]);
    });

    test("messages appended through writeRoute are found by searchMessages", async () => {
      await db().writeRoute({ ...create(KEY, S1), appendMessages: [user("where do quokkas live?"), assistant("on Rottnest island")] });
      const hits = await db().searchMessages("quokkas");
      expect(hits.map((h) => [h.sessionId, h.role])).toEqual([[S1, "user"]]);
      expect(hits[0]!.context.after?.content).toBe("on Rottnest island");
      expect((await db().searchMessages("Rottnest")).map((h) => h.role)).toEqual(["assistant"]);
      // A rolled-back append is never found.
      await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 1,
            route: fields(S1),
            appendMessages: [user("wombats burrow")],
            recordUsage: { inputTokens: -1 },
          }),
        InvalidInputError,
      );
      expect(await db().searchMessages("wombats")).toEqual([]);
      // Many appends through writeRoute, then a search: every one is found.
      for (let i = 0; i < 20; i++) {
        await db().writeRoute({ key: KEY, expectedVersion: i + 1, route: fields(S1), appendMessages: [user(`numbat ${i}`)] });
      }
      expect(await db().searchMessages("numbat", { limit: 100 })).toHaveLength(20);
    });

    test("createSession and appendMessages in one write: the new session starts with the turn", async () => {
      const created = await db().writeRoute({
        ...create(KEY, S1),
        appendMessages: [user("hello", T0 + 1), assistant("hi", T0 + 2)],
        recordUsage: { inputTokens: 3, outputTokens: 2, apiCalls: 1, billingProvider: "openrouter" },
      });
      expect(created?.version).toBe(1);
      expect(await db().getSession(S1)).toMatchObject({ messageCount: 2, preview: "hello", lastActiveAt: T0 + 2 });
      expect((await db().getSession(S1))?.usage).toMatchObject({ inputTokens: 3, outputTokens: 2, apiCalls: 1, billingProvider: "openrouter" });
      // A reset: the old session ends, the new one is created and gets the turn; the old one keeps its own.
      const reset = await db().writeRoute({
        key: KEY,
        expectedVersion: 1,
        route: fields(S2, { updatedAt: T0 + 100, createdAt: T0 + 100 }),
        endSession: { id: S1, reason: "session_reset", endedAt: T0 + 100 },
        createSession: { id: S2, source: "telegram", sessionKey: KEY, startedAt: T0 + 100 },
        appendMessages: [user("fresh start", T0 + 101)],
        recordUsage: { inputTokens: 9 },
      });
      expect(reset).toMatchObject({ version: 2, sessionId: S2 });
      expect((await db().getMessages(S2)).map((m) => m.content)).toEqual(["fresh start"]);
      expect((await db().getMessages(S1)).map((m) => m.content)).toEqual(["hello", "hi"]);
      expect((await db().getSession(S2))?.usage.inputTokens).toBe(9);
      expect((await db().getSession(S1))?.usage.inputTokens).toBe(3);
      expect((await db().getSession(S1))?.endReason).toBe("session_reset");
      expect((await db().getConversation(S2)).map((m) => m.content)).toEqual(["fresh start"]);
    });

    test("listAliasEntries pages through every registered id of every namespace, each with its canonical id", async () => {
      expect(await db().listAliasEntries()).toEqual({ items: [], nextCursor: null });
      await db().recordAlias("whatsapp", "999999999999999", "15551234567");
      await db().recordAlias("whatsapp", "88888888888888888", "999999999999999");
      await db().recordAlias("signal", "bbb", "aab");
      const seen: Array<{ namespace: string; alias: string; canonical: string }> = [];
      let cursor: string | null = null;
      for (let page = 0; page < 10; page++) {
        const result: Awaited<ReturnType<ReturnType<typeof db>["listAliasEntries"]>> = await db().listAliasEntries({ limit: 2, cursor });
        expect(result.items.length).toBeLessThanOrEqual(2);
        seen.push(...result.items);
        cursor = result.nextCursor;
        if (cursor === null) break;
      }
      expect(cursor).toBeNull();
      expect(seen).toEqual([
        { namespace: "signal", alias: "aab", canonical: "aab" },
        { namespace: "signal", alias: "bbb", canonical: "aab" },
        { namespace: "whatsapp", alias: "15551234567", canonical: "15551234567" },
        { namespace: "whatsapp", alias: "88888888888888888", canonical: "15551234567" },
        { namespace: "whatsapp", alias: "999999999999999", canonical: "15551234567" },
      ]);
      // Recording every entry again elsewhere rebuilds the same groups (what `db copy` does).
      for (const entry of seen) expect(await db().recordAlias(entry.namespace, entry.alias, entry.canonical)).toBe(entry.canonical);
      await expect(db().listAliasEntries({ cursor: "bad" })).rejects.toMatchObject({ code: "TL_ERR_INVALID_INPUT" });
    });

    test("a routing entry does not change the transcript of its session", async () => {
      await db().writeRoute(create(KEY, S1));
      await db().appendMessage(S1, user("hello"));
      await db().writeRoute({ key: KEY, expectedVersion: 1, route: fields(S1, { updatedAt: T0 + 9 }) });
      expect((await db().getMessages(S1)).map((m) => m.content)).toEqual(["hello"]);
    });
  });
}
