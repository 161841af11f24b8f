/**
 * Contract: the `identities` filter of `listSessions` and `searchMessages`: a list of
 * (source, user id) pairs, one person known on several platforms. A session matches when its
 * source and user id are one of the pairs together — never the cross product (alice's id on
 * telegram does not match a cli session of another person who happens to be called alice).
 *
 * @module
 */

import { expect } from "vitest";
import type { SessionDB } from "../../../src/store/contract.js";
import { InvalidInputError } from "../../../src/store/errors.js";
import { contractArea, expectReject, ids, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** The owner is 123 on telegram and "ops" on cli; 456 is a stranger on telegram; "123" on cli is somebody else. */
async function seed(db: SessionDB): Promise<void> {
  const sessions: Array<[string, string | null, string, number, string | null]> = [
    ["tg-owner", "123", "telegram", 1000, null],
    ["cli-owner", "ops", "cli", 1001, null],
    ["tg-stranger", "456", "telegram", 1002, null],
    ["cli-other", "123", "cli", 1003, null],
    ["tg-ops", "ops", "telegram", 1004, null],
    ["tg-group", "123", "telegram", 1005, "-100"],
    ["nobody", null, "cli", 1006, null],
  ];
  for (const [id, userId, source, startedAt, chatId] of sessions) {
    await db.createSession({ id, source, userId, startedAt, ...(chatId === null ? {} : { chatId, chatType: "group" }) });
    await db.appendMessage(id, user(`kubernetes notes of ${id}`, startedAt + 1));
  }
}

const OWNER = [
  { source: "telegram", userId: "123" },
  { source: "cli", userId: "ops" },
];

export function identityScopeTests(init: SessionDBTestInitializer): void {
  contractArea(init, "identity-scope", (test, { db }) => {
    test("identities match (source, userId) pairs in listing and search, not their cross product", async () => {
      await seed(db());
      const listed = async (o: Parameters<SessionDB["listSessions"]>[0]) => ids((await db().listSessions(o)).items).sort();
      const found = async (o: Parameters<SessionDB["searchMessages"]>[1]) =>
        (await db().searchMessages("kubernetes", { limit: 50, ...o })).map((h) => h.sessionId).sort();
      expect(await listed({ identities: OWNER })).toEqual(["cli-owner", "tg-group", "tg-owner"]);
      expect(await found({ identities: OWNER })).toEqual(["cli-owner", "tg-group", "tg-owner"]);
      for (const sort of ["newest", "oldest"] as const) expect(await found({ identities: OWNER, sort })).toEqual(["cli-owner", "tg-group", "tg-owner"]);
      // Combined with the other filters.
      expect(await listed({ identities: OWNER, sources: ["cli"] })).toEqual(["cli-owner"]);
      expect(await found({ identities: OWNER, sources: ["telegram"] })).toEqual(["tg-group", "tg-owner"]);
      expect(await listed({ identities: OWNER, chatId: "-100" })).toEqual(["tg-group"]);
      expect(await found({ identities: OWNER, userIds: ["ops"] })).toEqual(["cli-owner"]);
      expect(await listed({ identities: OWNER, excludeSources: ["telegram"] })).toEqual(["cli-owner"]);
      expect(await listed({ identities: OWNER, orderBy: "started", includeChildren: true })).toEqual(["cli-owner", "tg-group", "tg-owner"]);
      // One pair, duplicates.
      expect(
        await found({
          identities: [
            { source: "telegram", userId: "456" },
            { source: "telegram", userId: "456" },
          ],
        }),
      ).toEqual(["tg-stranger"]);
    });

    test("an empty identities list matches nothing; paging walks the matches", async () => {
      await seed(db());
      expect(ids((await db().listSessions({ identities: [] })).items)).toEqual([]);
      expect(await db().searchMessages("kubernetes", { identities: [] })).toEqual([]);
      const first = await db().listSessions({ identities: OWNER, limit: 2 });
      expect(ids(first.items)).toEqual(["tg-group", "cli-owner"]);
      const second = await db().listSessions({ identities: OWNER, limit: 2, cursor: first.nextCursor });
      expect([ids(second.items), second.nextCursor]).toEqual([["tg-owner"], null]);
    });

    test("malformed identities are invalid input naming the field", async () => {
      const bads: unknown[] = [
        "telegram:123",
        [{ source: "telegram" }],
        [{ userId: "1" }],
        [null],
        [{ source: "", userId: "1" }],
        [{ source: "cli", userId: "a\nb" }],
        [["cli", "a"]],
      ];
      for (const bad of bads) {
        const listing = await expectReject(() => db().listSessions({ identities: bad as never }), InvalidInputError);
        expect(listing.message).toMatch(/identities/u);
        await expectReject(() => db().searchMessages("x", { identities: bad as never }), InvalidInputError);
      }
    });
  });
}
