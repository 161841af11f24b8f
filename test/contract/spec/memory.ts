/**
 * Contract: per-person memory (hermes-agent's `MEMORY.md` and `USER.md`) — one record per
 * owner and kind, limits in characters over the entries joined by "\n§\n" (2,200 and 1,375),
 * optimistic versions (of concurrent writers at one version exactly one wins, across handles),
 * owners kept apart, clearing, paged listing with tenant filters, and input validation.
 *
 * @module
 */

import { expect } from "vitest";
import { MEMORY_CHAR_LIMIT, USER_CHAR_LIMIT, type MemoryOwner } from "../../../src/store/contract.js";
import { InvalidInputError } from "../../../src/store/errors.js";
import { contractArea, expectReject } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000_000;
const ANN: MemoryOwner = { platform: "telegram", userId: "42" };
const BOB: MemoryOwner = { platform: "telegram", userId: "43" };
const OWNER: MemoryOwner = { platform: "owner", userId: "owner" };

export function memoryTests(init: SessionDBTestInitializer): void {
  contractArea(init, "memory", (test, { db, anotherHandle }) => {
    test("a first write creates version 1; get returns it; the other kind and other people have none", async () => {
      expect(await db().getMemory(ANN, "memory")).toBeNull();
      const written = await db().writeMemory({
        owner: ANN,
        kind: "memory",
        entries: ["Ann's cat is Tom", "Prefers metric units"],
        expectedVersion: null,
        now: T0,
      });
      const expected = { owner: ANN, kind: "memory", entries: ["Ann's cat is Tom", "Prefers metric units"], chars: 16 + 3 + 20, updatedAt: T0, version: 1 };
      expect(written).toEqual(expected);
      expect(await db().getMemory(ANN, "memory")).toEqual(expected);
      expect(await db().getMemory(ANN, "user")).toBeNull();
      expect(await db().getMemory(BOB, "memory")).toBeNull();
      expect(await db().getMemory({ platform: "slack", userId: "42" }, "memory")).toBeNull();
    });

    test("a write at the read version replaces the entries and bumps the version; a stale or absent version writes nothing", async () => {
      await db().writeMemory({ owner: ANN, kind: "user", entries: ["a"], expectedVersion: null, now: T0 });
      expect(await db().writeMemory({ owner: ANN, kind: "user", entries: ["again"], expectedVersion: null, now: T0 + 1 })).toBeNull();
      const second = await db().writeMemory({ owner: ANN, kind: "user", entries: ["b", "c"], expectedVersion: 1, now: T0 + 2 });
      expect(second).toMatchObject({ entries: ["b", "c"], version: 2, updatedAt: T0 + 2, chars: 5 });
      expect(await db().writeMemory({ owner: ANN, kind: "user", entries: ["stale"], expectedVersion: 1, now: T0 + 3 })).toBeNull();
      expect(await db().writeMemory({ owner: BOB, kind: "user", entries: ["x"], expectedVersion: 1, now: T0 + 3 })).toBeNull();
      expect(await db().getMemory(BOB, "user")).toBeNull();
      expect(await db().getMemory(ANN, "user")).toMatchObject({ entries: ["b", "c"], version: 2 });
      // An empty list is a record with no entries (its version goes on).
      expect(await db().writeMemory({ owner: ANN, kind: "user", entries: [], expectedVersion: 2, now: T0 + 4 })).toMatchObject({
        entries: [],
        chars: 0,
        version: 3,
      });
    });

    test("of concurrent writers at one version (two handles), exactly one wins", async () => {
      const other = await anotherHandle();
      await db().writeMemory({ owner: ANN, kind: "memory", entries: ["start"], expectedVersion: null, now: T0 });
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? db() : other).writeMemory({ owner: ANN, kind: "memory", entries: [`w${i}`], expectedVersion: 1, now: T0 + 1 }),
        ),
      );
      const winners = results.filter((r) => r !== null);
      expect(winners).toHaveLength(1);
      expect(await other.getMemory(ANN, "memory")).toEqual(winners[0]);
      // Likewise for creating: exactly one creator.
      const created = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          (i % 2 === 0 ? db() : other).writeMemory({ owner: BOB, kind: "user", entries: [`c${i}`], expectedVersion: null, now: T0 }),
        ),
      );
      expect(created.filter((r) => r !== null)).toHaveLength(1);
    });

    test("limits count characters (code points) of the entries joined by \\n§\\n: exactly at the limit is fine, one more is refused naming the limit", async () => {
      // Two entries: a + 3 (separator) + b = limit.
      const atLimit = ["é".repeat(1000), "x".repeat(MEMORY_CHAR_LIMIT - 1003)];
      expect(await db().writeMemory({ owner: ANN, kind: "memory", entries: atLimit, expectedVersion: null, now: T0 })).toMatchObject({
        chars: MEMORY_CHAR_LIMIT,
        version: 1,
      });
      const over = ["é".repeat(1000), "x".repeat(MEMORY_CHAR_LIMIT - 1002)];
      await expectReject(
        () => db().writeMemory({ owner: ANN, kind: "memory", entries: over, expectedVersion: 1 }),
        InvalidInputError,
        /2,201 characters; the limit is 2,200/,
      );
      // An astral character counts once (as Python's len does).
      const emoji = "😀".repeat(USER_CHAR_LIMIT);
      expect(await db().writeMemory({ owner: ANN, kind: "user", entries: [emoji], expectedVersion: null, now: T0 })).toMatchObject({ chars: USER_CHAR_LIMIT });
      await expectReject(
        () => db().writeMemory({ owner: BOB, kind: "user", entries: ["y".repeat(USER_CHAR_LIMIT + 1)], expectedVersion: null }),
        InvalidInputError,
        /limit is 1,375/,
      );
      expect(await db().getMemory(ANN, "memory")).toMatchObject({ version: 1, entries: atLimit });
      expect(await db().getMemory(BOB, "user")).toBeNull();
    });

    test("bad input is refused with a clear error and nothing is written", async () => {
      const w = (patch: Record<string, unknown>) => db().writeMemory({ owner: ANN, kind: "memory", entries: ["ok"], expectedVersion: null, ...patch } as never);
      await expectReject(() => w({ entries: ["ok", "  "] }), InvalidInputError, /entries\[1\] is empty/);
      await expectReject(() => w({ entries: ["one\n§\ntwo"] }), InvalidInputError, /separator/);
      await expectReject(() => w({ entries: ["nul\u0000"] }), InvalidInputError, /control characters/);
      await expectReject(() => w({ entries: ["\uD800"] }), InvalidInputError, /not valid Unicode/);
      await expectReject(() => w({ entries: "ok" }), InvalidInputError, /array/);
      await expectReject(() => w({ kind: "notes" }), InvalidInputError, /kind must be "memory"/);
      await expectReject(() => w({ owner: { platform: "", userId: "1" } }), InvalidInputError, /owner.platform/);
      await expectReject(() => w({ owner: { platform: "telegram", userId: "x".repeat(257) } }), InvalidInputError, /owner.userId/);
      await expectReject(() => w({ expectedVersion: 0 }), InvalidInputError, /expectedVersion/);
      await expectReject(() => db().getMemory({ platform: "telegram" } as MemoryOwner, "memory"), InvalidInputError, /owner.userId/);
      await expectReject(() => db().clearMemory(ANN, "both" as never), InvalidInputError, /kind/);
      await expectReject(() => db().listMemories({ limit: 201 }), InvalidInputError, /limit/);
      await expectReject(() => db().listMemories({ cursor: "nope!" }), InvalidInputError, /cursor/);
      expect((await db().listMemories()).items).toEqual([]);
      // Tabs, newlines and a § inside a line are text.
      expect(await w({ entries: ["a\tb\nc § d"] })).toMatchObject({ entries: ["a\tb\nc § d"] });
    });

    test("clearing removes one kind or both of one person only, and says how many", async () => {
      for (const owner of [ANN, BOB, OWNER]) {
        for (const kind of ["memory", "user"] as const)
          await db().writeMemory({ owner, kind, entries: [`${owner.userId} ${kind}`], expectedVersion: null, now: T0 });
      }
      expect(await db().clearMemory(ANN, "user")).toBe(1);
      expect(await db().clearMemory(ANN, "user")).toBe(0);
      expect(await db().getMemory(ANN, "memory")).not.toBeNull();
      expect(await db().clearMemory(BOB)).toBe(2);
      expect(await db().getMemory(BOB, "memory")).toBeNull();
      expect(await db().getMemory(OWNER, "user")).toMatchObject({ entries: ["owner user"] });
      // After a clear, a new record starts at version 1 again.
      expect(await db().writeMemory({ owner: BOB, kind: "memory", entries: ["new"], expectedVersion: null, now: T0 + 5 })).toMatchObject({ version: 1 });
    });

    test("listing: newest first, keyset pages that neither repeat nor skip (even with equal times), filtered by userId and platform", async () => {
      const people: MemoryOwner[] = [ANN, BOB, OWNER, { platform: "slack", userId: "42" }];
      let t = T0;
      for (const owner of people) {
        for (const kind of ["memory", "user"] as const)
          await db().writeMemory({ owner, kind, entries: ["e"], expectedVersion: null, now: (t += owner === BOB ? 0 : 10) });
      }
      const all = (await db().listMemories({ limit: 200 })).items;
      expect(all).toHaveLength(8);
      for (let i = 1; i < all.length; i++) expect(all[i - 1]!.updatedAt).toBeGreaterThanOrEqual(all[i]!.updatedAt);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<ReturnType<typeof db>["listMemories"]>> = await db().listMemories({ limit: 3, cursor });
        expect(page.items.length).toBeLessThanOrEqual(3);
        paged.push(...page.items.map((r) => `${r.owner.platform}:${r.owner.userId}:${r.kind}`));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(paged).toEqual(all.map((r) => `${r.owner.platform}:${r.owner.userId}:${r.kind}`));
      expect(new Set(paged).size).toBe(8);
      const ann = (await db().listMemories({ userId: "42" })).items;
      expect(ann.map((r) => r.owner.platform).sort()).toEqual(["slack", "slack", "telegram", "telegram"]);
      const telegramAnn = await db().listMemories({ userId: "42", platform: "telegram", limit: 1 });
      expect(telegramAnn.items).toHaveLength(1);
      const rest = await db().listMemories({ userId: "42", platform: "telegram", cursor: telegramAnn.nextCursor });
      expect(rest.items).toHaveLength(1);
      expect(rest.nextCursor).toBeNull();
      expect((await db().listMemories({ platform: "owner" })).items.every((r) => r.owner.userId === "owner")).toBe(true);
      expect((await db().listMemories({ userId: "nobody" })).items).toEqual([]);
    });

    test("entries round-trip exactly: quotes, backslashes, fences, markup and non-Latin text", async () => {
      const entries = ['"quoted" \\ back', "```\nfence\n```", "<b>x</b> & ' ; DROP TABLE memories; --", "日本語 — ünïcödé 😀", "\u0001start"];
      await expectReject(() => db().writeMemory({ owner: ANN, kind: "memory", entries, expectedVersion: null }), InvalidInputError, /control/);
      const ok = entries.slice(0, 4);
      await db().writeMemory({ owner: ANN, kind: "memory", entries: ok, expectedVersion: null, now: T0 });
      expect((await db().getMemory(ANN, "memory"))!.entries).toEqual(ok);
    });
  });
}
