/**
 * Contract: per-session-key leases with fencing tokens — acquisition, renewal, release
 * and expiry handover; fenced transcript and routing writes refused (writing nothing)
 * once another holder has taken the key; races between two handles on one database.
 *
 * @module
 */

import { expect } from "vitest";
import type { LeaseFence, RouteFields, SessionDB } from "../../../src/store/contract.js";
import { InvalidInputError, LeaseLostError } from "../../../src/store/errors.js";
import { contractArea, expectReject, routeFields, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000;
const KEY = "agent:main:telegram:dm:42";
const TTL = 30;

function fields(sessionId: string, overrides: Partial<RouteFields> = {}): RouteFields {
  return routeFields(sessionId, T0, { ...overrides });
}

/** The transcript of a session, including rewound rows, and its counters. */
async function snapshot(db: SessionDB, id: string): Promise<unknown> {
  return { session: await db.getSession(id), messages: await db.getMessages(id, { includeRewound: true }) };
}

/** Asserts a LeaseLostError naming the fence and the current token. */
async function expectLost(call: () => Promise<unknown>, fence: LeaseFence, current: number | null): Promise<void> {
  const error = await expectReject(call, LeaseLostError, new RegExp(`token ${fence.token}`));
  expect(error.code).toBe("TL_ERR_LEASE_LOST");
  expect(error).toMatchObject({ key: fence.key, token: fence.token, currentToken: current });
}

/** Every fenced transcript write with `fence`: all must be refused, writing nothing. */
async function refusedEverywhere(db: SessionDB, fence: LeaseFence, current: number | null): Promise<void> {
  const before = await snapshot(db, "s");
  await expectLost(() => db.appendMessage("s", user("late"), { fence }), fence, current);
  await expectLost(() => db.appendTurn("s", [user("late q"), { role: "assistant", content: "late a" }], { fence }), fence, current);
  await expectLost(() => db.replaceMessages("s", [user("replaced")], { fence }), fence, current);
  await expectLost(() => db.rewind("s", undefined, { fence }), fence, current);
  await expectLost(() => db.recordUsage("s", { inputTokens: 10 }, { fence }), fence, current);
  await expectLost(() => db.recordUsage("s", { inputTokens: 10 }, { mode: "absolute", fence }), fence, current);
  expect(await snapshot(db, "s")).toEqual(before);
}

export function leasesTests(init: SessionDBTestInitializer): void {
  contractArea(init, "leases", (test, { db, anotherHandle }) => {
    test("a free key is granted with token 1 and the lease reads back", async () => {
      expect(await db().getLease(KEY)).toBeNull();
      const lease = await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 });
      expect(lease).toEqual({ key: KEY, holder: "replica-a", token: 1, expiresAt: T0 + TTL });
      expect(await db().getLease(KEY)).toEqual(lease);
      expect(await db().getLease("agent:main:telegram:dm:43")).toBeNull();
      // Another key is independent.
      expect(await db().acquireLease("agent:main:telegram:dm:43", "replica-b", { ttlSeconds: TTL, now: T0 })).toMatchObject({
        token: 1,
        holder: "replica-b",
      });
    });

    test("another holder is refused while the lease runs; the holder's own acquisition renews with the same token", async () => {
      await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 });
      expect(await db().acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + 1 })).toBeNull();
      expect(await db().acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + TTL - 0.001 })).toBeNull();
      const again = await db().acquireLease(KEY, "replica-a", { ttlSeconds: 60, now: T0 + 10 });
      expect(again).toEqual({ key: KEY, holder: "replica-a", token: 1, expiresAt: T0 + 70 });
      expect(await db().getLease(KEY)).toEqual(again);
    });

    test("an expired lease (expiresAt <= now) goes to the next acquirer with the token bumped", async () => {
      await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 });
      const b = await db().acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + TTL });
      expect(b).toEqual({ key: KEY, holder: "replica-b", token: 2, expiresAt: T0 + 2 * TTL });
      expect(await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 + TTL + 1 })).toBeNull();
      const c = await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 + 1000 });
      expect(c).toMatchObject({ holder: "replica-a", token: 3 });
      // The holder's own expired lease, untaken: re-acquiring keeps the token.
      expect(await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 + 5000 })).toMatchObject({ token: 3 });
    });

    test("renewLease extends only for the holder with its token, even just after expiry, never after a takeover", async () => {
      const a = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 }))!;
      expect(await db().renewLease(KEY, "replica-a", a.token, { ttlSeconds: 60, now: T0 + 20 })).toEqual({
        ...a,
        expiresAt: T0 + 80,
      });
      expect(await db().renewLease(KEY, "replica-a", a.token + 1, { ttlSeconds: 60, now: T0 + 21 })).toBeNull();
      expect(await db().renewLease(KEY, "replica-b", a.token, { ttlSeconds: 60, now: T0 + 21 })).toBeNull();
      expect(await db().renewLease("agent:main:cli:dm", "replica-a", a.token, { ttlSeconds: 60, now: T0 })).toBeNull();
      // Expired, nobody took it: the renewal still succeeds (the token still fences).
      expect(await db().renewLease(KEY, "replica-a", a.token, { ttlSeconds: TTL, now: T0 + 100 })).toEqual({
        ...a,
        expiresAt: T0 + 100 + TTL,
      });
      const b = (await db().acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + 100 + TTL }))!;
      expect(b.token).toBe(a.token + 1);
      expect(await db().renewLease(KEY, "replica-a", a.token, { ttlSeconds: TTL, now: T0 + 100 + TTL })).toBeNull();
      expect(await db().getLease(KEY)).toEqual(b);
    });

    test("releaseLease frees the key at once; the token is kept, so the next holder's is one higher", async () => {
      const a = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 }))!;
      expect(await db().releaseLease(KEY, "replica-b", a.token)).toBe(false);
      expect(await db().releaseLease(KEY, "replica-a", a.token + 1)).toBe(false);
      expect(await db().getLease(KEY)).toEqual(a);
      expect(await db().releaseLease(KEY, "replica-a", a.token)).toBe(true);
      expect(await db().releaseLease(KEY, "replica-a", a.token)).toBe(false);
      expect(await db().getLease(KEY)).toBeNull();
      expect(await db().renewLease(KEY, "replica-a", a.token, { ttlSeconds: TTL, now: T0 + 1 })).toBeNull();
      // Free before its expiry; even the same holder gets a new token.
      const again = await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 + 1 });
      expect(again).toEqual({ key: KEY, holder: "replica-a", token: 2, expiresAt: T0 + 1 + TTL });
      expect(await db().releaseLease(KEY, "replica-a", 2)).toBe(true);
      expect(await db().acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + 2 })).toMatchObject({ token: 3 });
      expect(await db().releaseLease("agent:main:cli:dm", "replica-a", 1)).toBe(false);
    });

    test("fenced transcript writes succeed with the current token, expired or not", async () => {
      await db().createSession({ id: "s", source: "telegram", sessionKey: KEY });
      const a = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 }))!;
      const fence = { key: KEY, token: a.token };
      const [q] = await db().appendTurn("s", [user("q1", T0), { role: "assistant", content: "a1", timestamp: T0 }], { fence });
      expect(q).toBeGreaterThan(0);
      await db().appendMessage("s", user("q2", T0 + 1), { fence });
      await db().recordUsage("s", { inputTokens: 5, outputTokens: 2 }, { fence });
      await db().recordUsage("s", { apiCalls: 3 }, { mode: "absolute", fence });
      expect((await db().rewind("s", 1, { fence })).rewound).toBe(1);
      // Expiry is not checked at write time: the lease lapsed but nobody took it.
      expect(await db().replaceMessages("s", [user("only", T0 + 2)], { fence })).toHaveLength(1);
      const session = (await db().getSession("s"))!;
      expect(session.messageCount).toBe(1);
      expect(session.usage).toMatchObject({ inputTokens: 5, outputTokens: 2, apiCalls: 3 });
      // An unfenced write is unaffected by leases.
      await db().appendMessage("s", user("unfenced", T0 + 3));
    });

    test("after another holder takes over, the old token's writes throw LeaseLostError and write nothing", async () => {
      await db().createSession({ id: "s", source: "telegram", sessionKey: KEY });
      const a = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 }))!;
      await db().appendTurn("s", [user("q1", T0), { role: "assistant", content: "a1", timestamp: T0 }], {
        fence: { key: KEY, token: a.token },
      });
      const b = (await db().acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + TTL + 5 }))!;
      await refusedEverywhere(db(), { key: KEY, token: a.token }, b.token);
      // A token from the future fences nothing either.
      await refusedEverywhere(db(), { key: KEY, token: b.token + 1 }, b.token);
      // The new holder writes.
      await db().appendMessage("s", user("from b", T0 + TTL + 6), { fence: { key: KEY, token: b.token } });
      expect((await db().getMessages("s")).map((m) => m.content)).toEqual(["q1", "a1", "from b"]);
    });

    test("a released lease, or a key never leased, fences every write", async () => {
      await db().createSession({ id: "s", source: "telegram", sessionKey: KEY });
      await db().appendMessage("s", user("existing", T0));
      await refusedEverywhere(db(), { key: KEY, token: 1 }, null);
      const a = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 }))!;
      await db().releaseLease(KEY, "replica-a", a.token);
      await refusedEverywhere(db(), { key: KEY, token: a.token }, null);
      // The fence names the lease key, not the session's key: another key's lease does not help.
      await db().acquireLease("agent:main:cli:dm", "replica-a", { ttlSeconds: TTL, now: T0 });
      await refusedEverywhere(db(), { key: KEY, token: 1 }, null);
    });

    test("writeRoute with a stale fence throws LeaseLostError and changes neither the entry nor any session", async () => {
      const S1 = "20270115_080000_aaaaaaaa";
      const S2 = "20270115_090000_bbbbbbbb";
      const a = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 }))!;
      const first = await db().writeRoute({
        key: KEY,
        expectedVersion: null,
        route: fields(S1),
        createSession: { id: S1, source: "telegram", sessionKey: KEY, startedAt: T0 },
        fence: { key: KEY, token: a.token },
      });
      expect(first).toMatchObject({ version: 1, sessionId: S1 });
      const b = (await db().acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + TTL }))!;
      const fence = { key: KEY, token: a.token };
      await expectLost(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 1,
            route: fields(S2, { updatedAt: T0 + 100 }),
            endSession: { id: S1, reason: "session_reset", endedAt: T0 + 100 },
            createSession: { id: S2, source: "telegram", sessionKey: KEY, startedAt: T0 + 100 },
            fence,
          }),
        fence,
        b.token,
      );
      // A new key is refused the same way.
      await expectLost(
        () =>
          db().writeRoute({
            key: "agent:main:telegram:dm:43",
            expectedVersion: null,
            route: fields(S2),
            createSession: { id: S2, source: "telegram", startedAt: T0 },
            fence,
          }),
        fence,
        b.token,
      );
      expect(await db().getRoute(KEY)).toEqual(first);
      expect(await db().getRoute("agent:main:telegram:dm:43")).toBeNull();
      expect(await db().getSession(S2)).toBeNull();
      expect((await db().getSession(S1))?.endedAt).toBeNull();
      // The current holder's fenced write goes through (the version check still applies).
      const second = await db().writeRoute({
        key: KEY,
        expectedVersion: 1,
        route: fields(S1, { updatedAt: T0 + 200 }),
        fence: { key: KEY, token: b.token },
      });
      expect(second).toMatchObject({ version: 2, updatedAt: T0 + 200 });
      expect(await db().writeRoute({ key: KEY, expectedVersion: 1, route: fields(S1), fence: { key: KEY, token: b.token } })).toBeNull();
    });

    test("invalid keys, holders, ttls, tokens and fences are InvalidInputErrors and write nothing", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("existing", T0));
      const opts = { ttlSeconds: TTL, now: T0 };
      for (const key of ["", "a/b", "a\\b", "..", "x/../y", "C:evil", 42 as unknown as string]) {
        await expectReject(() => db().acquireLease(key, "replica-a", opts), InvalidInputError, /key/);
        await expectReject(() => db().renewLease(key, "replica-a", 1, opts), InvalidInputError, /key/);
        await expectReject(() => db().releaseLease(key, "replica-a", 1), InvalidInputError, /key/);
        await expectReject(() => db().getLease(key), InvalidInputError, /key/);
        await expectReject(() => db().appendMessage("s", user("x"), { fence: { key, token: 1 } }), InvalidInputError, /fence\.key/);
      }
      for (const holder of ["", null, undefined, 7, "a\u0000b"]) {
        const error = await expectReject(() => db().acquireLease(KEY, holder as string, opts), InvalidInputError);
        expect(error.field).toBe("holder");
        await expectReject(() => db().releaseLease(KEY, holder as string, 1), InvalidInputError, /holder/);
      }
      for (const ttlSeconds of [0, -1, 86_400.5, 86_401, Number.NaN, Infinity, "30" as unknown as number, undefined as unknown as number]) {
        const error = await expectReject(() => db().acquireLease(KEY, "replica-a", { ttlSeconds, now: T0 }), InvalidInputError);
        expect(error.field).toBe("ttlSeconds");
        await expectReject(() => db().renewLease(KEY, "replica-a", 1, { ttlSeconds, now: T0 }), InvalidInputError, /ttlSeconds/);
      }
      await expectReject(() => db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: -1 }), InvalidInputError, /now/);
      await expectReject(() => db().acquireLease(KEY, "replica-a", null as never), InvalidInputError);
      for (const token of [0, -1, 1.5, Number.NaN, "1" as unknown as number, null as unknown as number]) {
        await expectReject(() => db().renewLease(KEY, "replica-a", token, opts), InvalidInputError, /token/);
        await expectReject(() => db().releaseLease(KEY, "replica-a", token), InvalidInputError, /token/);
        const error = await expectReject(() => db().appendMessage("s", user("x"), { fence: { key: KEY, token } }), InvalidInputError, /fence\.token/);
        expect(error.field).toBe("fence.token");
      }
      for (const fence of [null, "k", 3, {}] as unknown as LeaseFence[]) {
        await expectReject(() => db().appendMessage("s", user("x"), { fence }), InvalidInputError, /fence/);
        await expectReject(() => db().writeRoute({ key: KEY, expectedVersion: null, route: fields("s"), fence }), InvalidInputError, /fence/);
      }
      // The largest ttl is one day.
      expect(await db().acquireLease(KEY, "replica-a", { ttlSeconds: 86_400, now: T0 })).toMatchObject({ expiresAt: T0 + 86_400 });
      expect(await db().releaseLease(KEY, "replica-a", 1)).toBe(true);
      expect((await db().getMessages("s")).map((m) => m.content)).toEqual(["existing"]);
      expect(await db().getRoute(KEY)).toBeNull();
    });

    test("a lease defaults to the current time", async () => {
      const before = Date.now() / 1000;
      const lease = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: 5 }))!;
      expect(lease.expiresAt).toBeGreaterThanOrEqual(before + 5);
      expect(lease.expiresAt).toBeLessThanOrEqual(Date.now() / 1000 + 5);
      expect(await db().acquireLease(KEY, "replica-b", { ttlSeconds: 5 })).toBeNull();
    });

    test("two handles on one database racing for a key: exactly one wins, every time", async () => {
      const other = await anotherHandle();
      expect(await other.getLease(KEY)).toBeNull();
      for (let round = 0; round < 10; round++) {
        const key = `${KEY}:${round}`;
        const holders = ["a0", "a1", "a2", "b0", "b1", "b2"];
        const results = await Promise.all(
          holders.map((holder) => (holder.startsWith("a") ? db() : other).acquireLease(key, holder, { ttlSeconds: TTL, now: T0 })),
        );
        const winners = results.filter((r) => r !== null);
        expect(winners).toHaveLength(1);
        expect(winners[0]).toMatchObject({ key, token: 1 });
        expect(await db().getLease(key)).toEqual(winners[0]);
        expect(await other.getLease(key)).toEqual(winners[0]);
      }
      // A takeover race after expiry: one winner, token 2.
      const results = await Promise.all([
        db().acquireLease(`${KEY}:0`, "late-a", { ttlSeconds: TTL, now: T0 + TTL }),
        other.acquireLease(`${KEY}:0`, "late-b", { ttlSeconds: TTL, now: T0 + TTL }),
      ]);
      expect(results.filter((r) => r !== null).map((r) => r!.token)).toEqual([2]);
    }, 30_000);

    test("a stale holder's writes racing a takeover from another handle: none lands after it", async () => {
      await db().createSession({ id: "s", source: "telegram", sessionKey: KEY });
      const other = await anotherHandle();
      const a = (await db().acquireLease(KEY, "replica-a", { ttlSeconds: TTL, now: T0 }))!;
      const stale = { key: KEY, token: a.token };
      let firstLanded!: () => void;
      const someLanded = new Promise<void>((resolve) => (firstLanded = resolve));
      const writes = (async () => {
        let landed = 0;
        for (let i = 0; i < 40; i++) {
          try {
            await db().appendMessage("s", user(`a ${i}`), { fence: stale });
            landed++;
            if (landed === 2) firstLanded();
          } catch (error) {
            if (!(error instanceof LeaseLostError)) throw error;
          }
        }
        firstLanded();
        return landed;
      })();
      // The takeover races the stale writes still coming once a couple have landed.
      await someLanded;
      const b = (await other.acquireLease(KEY, "replica-b", { ttlSeconds: TTL, now: T0 + TTL }))!;
      expect(b.token).toBe(a.token + 1);
      // From the takeover on, the stale token writes nothing.
      await expectLost(() => db().appendMessage("s", user("after"), { fence: stale }), stale, b.token);
      await other.appendMessage("s", user("b's turn"), { fence: { key: KEY, token: b.token } });
      const landed = await writes;
      const texts = (await other.getMessages("s")).map((m) => m.content as string);
      expect(texts.filter((t) => t.startsWith("a "))).toHaveLength(landed);
      // Every stale write that landed is ordered before b's turn.
      expect(texts.indexOf("b's turn")).toBeGreaterThan(Math.max(-1, ...texts.map((t, i) => (t.startsWith("a ") ? i : -1))));
    }, 30_000);
  });
}
