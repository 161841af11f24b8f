/**
 * Contract: the `userId` filter of `listSessions`, `searchMessages` and `exportSessions`
 * (tenant scoping): a user's calls see exactly that user's sessions, and an export of
 * another user's session by id is "not found".
 *
 * @module
 */

import { expect } from "vitest";
import type { SessionDB } from "../../../src/store/contract.js";
import { InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { collect, contractArea, expectReject, ids, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** Sessions of alice (2, one of them on telegram), bob (1) and nobody (1), each with one message about "deploy". */
async function seed(db: SessionDB): Promise<void> {
  const sessions: Array<[string, string | null, string, number]> = [
    ["a1", "alice", "cli", 1000],
    ["a2", "alice", "telegram", 1002],
    ["b1", "bob", "cli", 1001],
    ["n1", null, "cli", 1003],
  ];
  for (const [id, userId, source, startedAt] of sessions) {
    await db.createSession({ id, source, userId, startedAt });
    await db.appendMessage(id, user(`deploy notes of ${id}`, startedAt + 1));
  }
}

export function userScopeTests(init: SessionDBTestInitializer): void {
  contractArea(init, "user-scope", (test, { db }) => {
    test("listSessions with userId lists only that user's sessions, with the other filters and paging", async () => {
      await seed(db());
      expect(ids((await db().listSessions({ userId: "alice" })).items)).toEqual(["a2", "a1"]);
      expect(ids((await db().listSessions({ userId: "bob" })).items)).toEqual(["b1"]);
      expect(ids((await db().listSessions({ userId: "carol" })).items)).toEqual([]);
      expect(ids((await db().listSessions({ userId: "alice", sources: ["cli"] })).items)).toEqual(["a1"]);
      expect(ids((await db().listSessions({ userId: "alice", excludeSources: ["cli"] })).items)).toEqual(["a2"]);
      expect(ids((await db().listSessions({ userId: "alice", orderBy: "started", includeChildren: true })).items)).toEqual(["a2", "a1"]);
      const first = await db().listSessions({ userId: "alice", limit: 1 });
      expect(ids(first.items)).toEqual(["a2"]);
      const second = await db().listSessions({ userId: "alice", limit: 1, cursor: first.nextCursor });
      expect([ids(second.items), second.nextCursor]).toEqual([["a1"], null]);
      expect(ids((await db().listSessions()).items)).toHaveLength(4);
    });

    test("searchMessages with userId finds only that user's messages", async () => {
      await seed(db());
      expect((await db().searchMessages("deploy", { limit: 50 })).map((h) => h.sessionId).sort()).toEqual(["a1", "a2", "b1", "n1"]);
      expect((await db().searchMessages("deploy", { userId: "alice" })).map((h) => h.sessionId).sort()).toEqual(["a1", "a2"]);
      expect((await db().searchMessages("deploy", { userId: "bob", sort: "newest" })).map((h) => h.sessionId)).toEqual(["b1"]);
      expect(await db().searchMessages("deploy", { userId: "carol" })).toEqual([]);
      expect((await db().searchMessages("deploy", { userId: "alice", sources: ["telegram"] })).map((h) => h.sessionId)).toEqual(["a2"]);
      expect((await db().searchMessages("deploy", { userId: "alice", roles: ["user"], sort: "oldest" })).map((h) => h.sessionId)).toEqual(["a1", "a2"]);
    });

    test("exportSessions with userId exports only that user's sessions; another user's session by id is not found", async () => {
      await seed(db());
      expect((await collect(db().exportSessions({ userId: "alice" }))).map((r) => r.session.id)).toEqual(["a1", "a2"]);
      expect((await collect(db().exportSessions({ userId: "alice", sources: ["telegram"] }))).map((r) => r.session.id)).toEqual(["a2"]);
      expect((await collect(db().exportSessions({ userId: "bob", sessionId: "b1" }))).map((r) => r.session.id)).toEqual(["b1"]);
      const other = await expectReject(() => collect(db().exportSessions({ userId: "bob", sessionId: "a1" })), NotFoundError);
      const missing = await expectReject(() => collect(db().exportSessions({ userId: "bob", sessionId: "zz" })), NotFoundError);
      // The two are indistinguishable apart from the id.
      expect(other.message.replace("a1", "ID")).toBe(missing.message.replace("zz", "ID"));
    });

    test("userIds (any of these people) and chatId narrow listing and search; an empty userIds matches nothing", async () => {
      await seed(db());
      await db().createSession({ id: "g1", source: "telegram", userId: "alice", chatId: "-100", chatType: "group", startedAt: 1004 });
      await db().appendMessage("g1", user("deploy notes of g1", 1005));
      await db().createSession({ id: "g2", source: "telegram", userId: "bob", chatId: "-100", chatType: "group", startedAt: 1006 });
      await db().appendMessage("g2", user("deploy notes of g2", 1007));
      const listed = async (o: Parameters<SessionDB["listSessions"]>[0]) => ids((await db().listSessions(o)).items).sort();
      const found = async (o: Parameters<SessionDB["searchMessages"]>[1]) =>
        (await db().searchMessages("deploy", { limit: 50, ...o })).map((h) => h.sessionId).sort();
      expect(await listed({ userIds: ["alice", "alice-alias"] })).toEqual(["a1", "a2", "g1"]);
      expect(await found({ userIds: ["alice", "alice-alias"] })).toEqual(["a1", "a2", "g1"]);
      expect(await listed({ userIds: ["alice", "bob"], sources: ["telegram"] })).toEqual(["a2", "g1", "g2"]);
      expect(await found({ userIds: ["alice", "bob"], sources: ["telegram"], sort: "newest" })).toEqual(["a2", "g1", "g2"]);
      expect(await listed({ chatId: "-100" })).toEqual(["g1", "g2"]);
      expect(await found({ chatId: "-100", userIds: ["alice"] })).toEqual(["g1"]);
      expect(await listed({ userIds: [] })).toEqual([]);
      expect(await found({ userIds: [] })).toEqual([]);
      expect(await found({ userIds: ["carol"], chatId: "-100" })).toEqual([]);
      for (const bad of [["a\nb"], "alice", [""]]) {
        await expectReject(() => db().listSessions({ userIds: bad as string[] }), InvalidInputError);
        await expectReject(() => db().searchMessages("x", { userIds: bad as string[] }), InvalidInputError);
      }
      await expectReject(() => db().searchMessages("x", { chatId: "" }), InvalidInputError);
    });

    test("a userId that is not an id-like string is invalid input everywhere", async () => {
      for (const bad of ["", "a\nb", 7]) {
        await expectReject(() => db().listSessions({ userId: bad as string }), InvalidInputError);
        await expectReject(() => db().searchMessages("x", { userId: bad as string }), InvalidInputError);
        await expectReject(() => collect(db().exportSessions({ userId: bad as string })), InvalidInputError);
      }
    });
  });
}
