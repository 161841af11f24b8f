/**
 * Contract: invalid input is rejected with typed errors and writes nothing; a closed
 * store refuses every call; concurrent calls within one process all land exactly once.
 *
 * @module
 */

import { expect } from "vitest";
import type { NewMessage, SessionDB } from "../../../src/store/contract.js";
import { InvalidInputError, NotFoundError, StoreClosedError } from "../../../src/store/errors.js";
import { collect, contractArea, expectReject, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const MiB = 1024 * 1024;

/** The transcript of a session, including rewound rows, and its counters. */
async function snapshot(db: SessionDB, id: string): Promise<unknown> {
  return { session: await db.getSession(id), messages: await db.getMessages(id, { includeRewound: true }) };
}

/** Asserts that every way of writing `message` is rejected with InvalidInputError and writes nothing. */
async function rejectedEverywhere(db: SessionDB, message: NewMessage, pattern: RegExp): Promise<void> {
  const before = await snapshot(db, "s");
  await expectReject(() => db.appendMessage("s", message), InvalidInputError, pattern);
  await expectReject(() => db.appendTurn("s", [user("valid first"), message]), InvalidInputError, pattern);
  await expectReject(() => db.replaceMessages("s", [user("valid first"), message]), InvalidInputError, pattern);
  expect(await snapshot(db, "s")).toEqual(before);
}

export function errorsTests(init: SessionDBTestInitializer): void {
  contractArea(init, "errors", (test, { db }) => {
    test("writing messages to an unknown session is a NotFoundError", async () => {
      for (const call of [
        () => db().appendMessage("ghost", user("x")),
        () => db().appendTurn("ghost", [user("x")]),
        () => db().replaceMessages("ghost", [user("x")]),
        () => db().clearMessages("ghost"),
      ]) {
        const error = await expectReject(call, NotFoundError, /ghost/);
        expect(error.code).toBe("TL_ERR_NOT_FOUND");
      }
      expect(await db().getSession("ghost")).toBeNull();
      expect((await db().getStats()).totalMessages).toBe(0);
    });

    test("an empty, missing or unknown role is an InvalidInputError naming the role", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("existing", 1));
      for (const role of ["", "robot", "USER", " user", undefined, null, 42]) {
        await rejectedEverywhere(db(), { role: role as never, content: "x" }, /role/i);
      }
      const error = await expectReject(() => db().appendMessage("s", { role: "" as never }), InvalidInputError);
      expect(error.code).toBe("TL_ERR_INVALID_INPUT");
    });

    test("a lone surrogate (not encodable as UTF-8) is an InvalidInputError", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("existing", 1));
      const bad = /UTF-?8|surrogate|unicode|encod/i;
      await rejectedEverywhere(db(), user("high \uD800 alone"), bad);
      await rejectedEverywhere(db(), user("ends with low \uDC00"), bad);
      await rejectedEverywhere(db(), user("\uDFFF\uD800 reversed pair"), bad);
      await rejectedEverywhere(db(), { role: "user", content: [{ type: "text", text: "part \uD83D" }] }, bad);
      await rejectedEverywhere(db(), { role: "tool", content: "ok", toolCallId: "c", toolName: "bad\uD800name" }, bad);
      await expectReject(() => db().setTitle("s", "title \uD800"), InvalidInputError);
      expect(await db().getTitle("s")).toBeNull();
      await expectReject(() => db().createSession({ id: "t", source: "cli", systemPrompt: "x\uDBFFy" }), InvalidInputError);
      expect(await db().getSession("t")).toBeNull();
      // A proper surrogate pair is fine.
      await db().appendMessage("s", user("pair 😀 ok"));
      expect((await db().getMessages("s")).at(-1)?.content).toBe("pair 😀 ok");
    });

    test("content over 16 MiB is an InvalidInputError; large content below it is fine", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("existing", 1));
      const size = /content|large|size|MiB|bytes|long|limit/i;
      await rejectedEverywhere(db(), user("x".repeat(16 * MiB + 1)), size);
      // Measured in UTF-8 bytes: 8 Mi + 1 two-byte characters are over 16 MiB.
      await rejectedEverywhere(db(), user("é".repeat(8 * MiB + 1)), size);
      await rejectedEverywhere(
        db(),
        {
          role: "user",
          content: [
            { type: "text", text: "y".repeat(10 * MiB) },
            { type: "text", text: "z".repeat(7 * MiB) },
          ],
        },
        size,
      );
      const big = `${"lorem ipsum ".repeat(MiB / 12)}needle`;
      await db().appendMessage("s", user(big));
      expect((await db().getMessages("s")).at(-1)?.content).toBe(big);
    }, 120_000);

    test("a non-finite timestamp is an InvalidInputError", async () => {
      await db().createSession({ id: "s", source: "cli" });
      for (const timestamp of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        await rejectedEverywhere(db(), { role: "user", content: "x", timestamp }, /timestamp/i);
        await expectReject(() => db().createSession({ id: "t", source: "cli", startedAt: timestamp }), InvalidInputError, /start/i);
      }
      expect(await db().getSession("t")).toBeNull();
    });

    test("content and tool calls of the wrong type are InvalidInputErrors", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await rejectedEverywhere(db(), { role: "user", content: 42 as never }, /content/i);
      await rejectedEverywhere(db(), { role: "user", content: { text: "x" } as never }, /content/i);
      await rejectedEverywhere(db(), { role: "user", content: ["plain string part"] as never }, /content/i);
      await rejectedEverywhere(db(), { role: "assistant", content: null, toolCalls: "nope" as never }, /tool/i);
    });

    test("a session without source, or with an empty id, is an InvalidInputError", async () => {
      await expectReject(() => db().createSession({} as never), InvalidInputError, /source/i);
      await expectReject(() => db().createSession({ id: "", source: "cli" }), InvalidInputError, /id/i);
      expect((await db().getStats()).totalSessions).toBe(0);
    });

    test("a title over 100 code points is an InvalidInputError naming the title", async () => {
      await db().createSession({ id: "s", source: "cli", title: "keep" });
      const error = await expectReject(() => db().setTitle("s", "t".repeat(101)), InvalidInputError, /title/i);
      expect(error.message).toMatch(/100/);
      expect(await db().getTitle("s")).toBe("keep");
    });

    test("bad listing arguments are InvalidInputErrors naming the argument", async () => {
      await expectReject(() => db().listSessions({ limit: 1001 }), InvalidInputError, /limit/i);
      await expectReject(() => db().listSessions({ cursor: "not-a-cursor" }), InvalidInputError, /cursor/i);
    });

    test("every method of a closed store throws StoreClosedError", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().close();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ["createSession", () => db().createSession({ source: "cli" })],
        ["getSession", () => db().getSession("s")],
        ["endSession", () => db().endSession("s", "x")],
        ["reopenSession", () => db().reopenSession("s")],
        ["resolveSessionId", () => db().resolveSessionId("s")],
        ["updateSession", () => db().updateSession("s", { model: "m" })],
        ["recordUsage", () => db().recordUsage("s", { inputTokens: 1 })],
        ["appendMessage", () => db().appendMessage("s", user("x"))],
        ["appendTurn", () => db().appendTurn("s", [user("x")])],
        ["getMessages", () => db().getMessages("s")],
        ["getConversation", () => db().getConversation("s")],
        ["replaceMessages", () => db().replaceMessages("s", [])],
        ["rewind", () => db().rewind("s")],
        ["rewindMessages", () => db().rewindMessages("s")],
        ["restoreRewound", () => db().restoreRewound("s")],
        ["clearMessages", () => db().clearMessages("s")],
        ["setTitle", () => db().setTitle("s", "t")],
        ["getTitle", () => db().getTitle("s")],
        ["resolveByTitle", () => db().resolveByTitle("t")],
        ["nextTitleInLineage", () => db().nextTitleInLineage("t")],
        ["similarTitles", () => db().similarTitles("t")],
        ["freeTitle", () => db().freeTitle("t")],
        ["getAncestors", () => db().getAncestors("s")],
        ["getDescendants", () => db().getDescendants("s")],
        ["getCompressionTip", () => db().getCompressionTip("s")],
        ["listSessions", () => db().listSessions()],
        ["searchMessages", () => db().searchMessages("x")],
        ["exportSessions", () => collect(db().exportSessions())],
        ["importSessions", () => db().importSessions([])],
        ["deleteSession", () => db().deleteSession("s")],
        ["pruneSessions", () => db().pruneSessions({ olderThanDays: 1 })],
        ["autoPrune", () => db().autoPrune({ olderThanDays: 1 })],
        ["getStats", () => db().getStats()],
        ["getMeta", () => db().getMeta("k")],
        ["setMeta", () => db().setMeta("k", "v")],
        ["deleteMeta", () => db().deleteMeta("k")],
        ["listMeta", () => db().listMeta()],
        ["listAliasEntries", () => db().listAliasEntries()],
      ];
      for (const [name, call] of calls) {
        let caught: unknown;
        try {
          await call();
        } catch (error) {
          caught = error;
        }
        expect(caught, `${name} after close`).toBeInstanceOf(StoreClosedError);
        expect((caught as StoreClosedError).code).toBe("TL_ERR_STORE_CLOSED");
      }
    });

    test("close() finishes the writes already asked for", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const pending = Array.from({ length: 50 }, (_, i) => db().appendMessage("s", user(`m${i}`)));
      await db().close();
      const results = await Promise.allSettled(pending);
      expect(results.filter((r) => r.status === "rejected")).toEqual([]);
      const got = results.map((r) => (r.status === "fulfilled" ? r.value : -1));
      expect(new Set(got).size).toBe(50);
    });

    test("200 concurrent appends on 4 sessions all land exactly once, in call order", async () => {
      const sessions = ["c0", "c1", "c2", "c3"];
      for (const id of sessions) await db().createSession({ id, source: "cli" });
      const calls = Array.from({ length: 200 }, (_, i) => ({ session: sessions[i % 4]!, text: `msg-${i}` }));
      const returned = await Promise.all(calls.map((c) => db().appendMessage(c.session, user(c.text))));
      expect(new Set(returned).size).toBe(200);
      for (const id of sessions) {
        const messages = await db().getMessages(id);
        const expected = calls.filter((c) => c.session === id);
        expect(messages.map((m) => m.content)).toEqual(expected.map((c) => c.text));
        expect(messages.map((m) => m.id)).toEqual(calls.map((c, i) => (c.session === id ? returned[i] : undefined)).filter((x) => x !== undefined));
        const session = await db().getSession(id);
        expect(session?.messageCount).toBe(50);
      }
      expect((await db().getStats()).totalMessages).toBe(200);
    });

    test("concurrent callers each see their own writes in order", async () => {
      const sessions = ["w0", "w1", "w2", "w3"];
      for (const id of sessions) await db().createSession({ id, source: "cli" });
      // Four callers, each appending 50 messages one after another, all at the same time,
      // interleaved with reads, a turn and usage updates.
      await Promise.all(
        sessions.map(async (id, k) => {
          for (let i = 0; i < 50; i++) {
            if (i === 25) await db().appendTurn(id, [user(`${id}-turn-a`), user(`${id}-turn-b`)]);
            await db().appendMessage(id, {
              role: "assistant",
              content: `${id}-${i}`,
              toolCalls: i % 10 === 0 ? [{ id: `c${i}`, type: "function", function: { name: "f", arguments: "{}" } }] : null,
            });
            if (i % 7 === k) await db().recordUsage(id, { inputTokens: 1 });
          }
        }),
      );
      for (const id of sessions) {
        const contents = (await db().getMessages(id)).map((m) => m.content);
        const expected = Array.from({ length: 50 }, (_, i) => `${id}-${i}`);
        expected.splice(25, 0, `${id}-turn-a`, `${id}-turn-b`);
        expect(contents).toEqual(expected);
        const session = await db().getSession(id);
        expect(session?.messageCount).toBe(52);
        expect(session?.toolCallCount).toBe(5);
      }
    });
  });
}
