/**
 * Contract: inbound claims — a platform message (platform, chat, message id) is taken once
 * across every handle on the database: on its own (`claimInbound`), with a queued event
 * (`enqueue` … `claims`) or with the user message a routing write appends (`writeRoute` …
 * `claims`); a write that writes nothing takes no claim; old claims are pruned.
 *
 * @module
 */

import { expect } from "vitest";
import type { InboundClaim, RouteFields, RouteWrite, SessionDB } from "../../../src/store/contract.js";
import { ConflictError, InboundClaimedError, InvalidInputError } from "../../../src/store/errors.js";
import { contractArea, expectReject, nowSeconds, routeFields, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000;
const KEY = "agent:main:discord:dm:42";
const OTHER_KEY = "agent:main:discord:dm:43";
const S1 = "20270115_080000_aaaaaaaa";
const CLAIM: InboundClaim = { platform: "discord", chat: "42", messageId: "m1" };

function fields(sessionId: string, overrides: Partial<RouteFields> = {}): RouteFields {
  return routeFields(sessionId, T0, { platform: "discord", ...overrides });
}

/** A first routing write of `key` creating session `sessionId` with one user message. */
function firstTurn(key: string, sessionId: string, claims?: InboundClaim[]): RouteWrite {
  return {
    key,
    expectedVersion: null,
    route: fields(sessionId, { turnStartedAt: T0 }),
    createSession: { id: sessionId, source: "discord", sessionKey: key, startedAt: T0 },
    appendMessages: [{ ...user("hello", T0), platformMessageId: "m1" }],
    ...(claims === undefined ? {} : { claims }),
  };
}

/** Whether the claim is free (claims it to find out: a claim the caller then holds). */
async function isFree(db: SessionDB, claim: InboundClaim): Promise<boolean> {
  return db.claimInbound(claim, { at: T0 });
}

export function inboundClaimsTests(init: SessionDBTestInitializer): void {
  contractArea(init, "inbound-claims", (test, { db, anotherHandle }) => {
    test("claimInbound takes a message once; platform, chat and message id together are the identity", async () => {
      expect(await db().claimInbound(CLAIM)).toBe(true);
      expect(await db().claimInbound(CLAIM)).toBe(false);
      expect(await db().claimInbound({ ...CLAIM })).toBe(false);
      // The same id in another chat or on another platform is another message.
      expect(await db().claimInbound({ ...CLAIM, chat: "43" })).toBe(true);
      expect(await db().claimInbound({ ...CLAIM, platform: "slack" })).toBe(true);
      expect(await db().claimInbound({ ...CLAIM, messageId: "m2" })).toBe(true);
      // Another handle on the database sees the claims.
      const other = await anotherHandle();
      expect(await other.claimInbound(CLAIM)).toBe(false);
      expect(await other.claimInbound({ ...CLAIM, messageId: "m3" })).toBe(true);
      expect(await db().claimInbound({ ...CLAIM, messageId: "m3" })).toBe(false);
    });

    test("a queued event with claims takes them; a second event claiming one of them is a duplicate and queues nothing, on any key", async () => {
      const queued = await db().enqueue(KEY, { messageId: "m1", payload: { text: "a" }, at: T0, claims: [CLAIM] });
      expect(queued).toMatchObject({ status: "queued", depth: 1 });
      // Another key (another replica computed another key, or a queue already emptied): still a duplicate.
      expect(await db().enqueue(OTHER_KEY, { messageId: "m1", payload: { text: "a" }, at: T0, claims: [CLAIM] })).toEqual({ status: "duplicate", depth: 0 });
      expect(await db().enqueue(KEY, { messageId: "other-id", payload: { text: "a" }, at: T0, claims: [CLAIM] })).toEqual({ status: "duplicate", depth: 1 });
      expect(await db().listQueue(OTHER_KEY)).toEqual([]);
      expect((await db().listQueue(KEY)).map((i) => i.messageIds)).toEqual([["m1"]]);
      expect(await isFree(db(), CLAIM)).toBe(false);
      // Without claims the queue behaves as before.
      expect(await db().enqueue(KEY, { messageId: "m9", payload: { text: "b" }, at: T0 })).toMatchObject({ status: "queued", depth: 2 });
    });

    test("an event that is not queued (the queue is full, or the id is queued already) takes no claim, and a partial claim is rolled back", async () => {
      await db().enqueue(KEY, { messageId: "m0", payload: "x", at: T0 }, { maxDepth: 1 });
      expect(await db().enqueue(KEY, { messageId: "m1", payload: "y", at: T0, claims: [CLAIM] }, { maxDepth: 1 })).toEqual({ status: "full", depth: 1 });
      const again: InboundClaim = { ...CLAIM, messageId: "m0" };
      expect(await db().enqueue(KEY, { messageId: "m0", payload: "x", at: T0, claims: [again] })).toEqual({ status: "duplicate", depth: 1 });
      expect(await isFree(db(), CLAIM)).toBe(true);
      expect(await isFree(db(), again)).toBe(true);
      // Two claims, the second taken already: the first is not kept either.
      const fresh: InboundClaim = { ...CLAIM, messageId: "m5" };
      expect(await db().enqueue(KEY, { messageId: "m5", payload: "z", at: T0, claims: [fresh, CLAIM] })).toEqual({ status: "duplicate", depth: 1 });
      expect(await isFree(db(), fresh)).toBe(true);
      expect(await db().listQueue(KEY)).toHaveLength(1);
    });

    test("a routing write with claims takes them with the user message; a second write claiming one writes nothing and rejects with InboundClaimedError", async () => {
      const route = await db().writeRoute(firstTurn(KEY, S1, [CLAIM]));
      expect(route).toMatchObject({ key: KEY, version: 1 });
      expect(await db().claimInbound(CLAIM)).toBe(false);
      const error = await expectReject(
        () =>
          db().writeRoute({
            key: KEY,
            expectedVersion: 1,
            route: fields(S1, { turnStartedAt: T0 + 1 }),
            appendMessages: [{ ...user("hello again", T0 + 1), platformMessageId: "m1" }],
            claims: [CLAIM],
          }),
        InboundClaimedError,
        /discord message m1 of chat 42/,
      );
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.code).toBe("TL_ERR_CONFLICT");
      expect(error).toMatchObject({ platform: "discord", chat: "42", messageId: "m1" });
      // Nothing was written: same version, one message.
      expect(await db().getRoute(KEY)).toMatchObject({ version: 1, turnStartedAt: T0 });
      expect((await db().getMessages(S1)).map((m) => m.content)).toEqual(["hello"]);
      // A message queued with the claim first makes the routing write of it refuse too.
      const queuedFirst: InboundClaim = { ...CLAIM, messageId: "m2" };
      expect(await db().enqueue(OTHER_KEY, { messageId: "m2", payload: "q", at: T0, claims: [queuedFirst] })).toMatchObject({ status: "queued" });
      await expectReject(
        () => db().writeRoute({ key: KEY, expectedVersion: 1, route: fields(S1), appendMessages: [user("m2", T0)], claims: [queuedFirst] }),
        InboundClaimedError,
      );
      expect((await db().getSession(S1))?.messageCount).toBe(1);
    });

    test("a routing write that loses on its version takes no claim", async () => {
      await db().writeRoute(firstTurn(KEY, S1));
      const claim: InboundClaim = { ...CLAIM, messageId: "m7" };
      expect(await db().writeRoute({ key: KEY, expectedVersion: 5, route: fields(S1), appendMessages: [user("late", T0)], claims: [claim] })).toBeNull();
      expect(await isFree(db(), claim)).toBe(true);
    });

    test("of two handles storing one message at once, exactly one takes it", async () => {
      const other = await anotherHandle();
      await db().writeRoute(firstTurn(KEY, S1));
      for (let round = 0; round < 5; round++) {
        const claim: InboundClaim = { ...CLAIM, messageId: `race-${round}` };
        const results = await Promise.allSettled([
          db().enqueue(KEY, { messageId: claim.messageId, payload: "a", claims: [claim] }),
          other.enqueue(OTHER_KEY, { messageId: claim.messageId, payload: "b", claims: [claim] }),
          other.claimInbound(claim),
          db().writeRoute({
            key: KEY,
            expectedVersion: (await db().getRoute(KEY))!.version,
            route: fields(S1),
            appendMessages: [{ ...user(`r${round}`), platformMessageId: claim.messageId }],
            claims: [claim],
          }),
        ]);
        const won = [
          results[0].status === "fulfilled" && results[0].value.status === "queued",
          results[1].status === "fulfilled" && results[1].value.status === "queued",
          results[2].status === "fulfilled" && results[2].value === true,
          results[3].status === "fulfilled" && results[3].value !== null,
        ];
        expect(won.filter(Boolean), JSON.stringify(results)).toHaveLength(1);
        // The losers lost to the claim: duplicates, `false`, or InboundClaimedError.
        if (results[3].status === "rejected") expect(results[3].reason).toBeInstanceOf(InboundClaimedError);
      }
    });

    test("pruneInboundClaims removes the claims made before a time, and such a message can be taken again", async () => {
      expect(await db().claimInbound({ ...CLAIM, messageId: "old-1" }, { at: T0 - 100 })).toBe(true);
      expect(await db().claimInbound({ ...CLAIM, messageId: "old-2" }, { at: T0 - 1 })).toBe(true);
      expect(await db().claimInbound({ ...CLAIM, messageId: "edge" }, { at: T0 })).toBe(true);
      await db().enqueue(KEY, { messageId: "q", payload: "q", at: T0 - 50, claims: [{ ...CLAIM, messageId: "q" }] });
      expect(await db().pruneInboundClaims({ before: T0 })).toBe(3);
      expect(await db().pruneInboundClaims({ before: T0 })).toBe(0);
      expect(await isFree(db(), { ...CLAIM, messageId: "old-1" })).toBe(true);
      expect(await isFree(db(), { ...CLAIM, messageId: "q" })).toBe(true);
      expect(await isFree(db(), { ...CLAIM, messageId: "edge" })).toBe(false);
      // A routing write's claim is dated now.
      await db().writeRoute(firstTurn(KEY, S1, [{ ...CLAIM, messageId: "now" }]));
      expect(await db().pruneInboundClaims({ before: nowSeconds() - 3600 })).toBe(0);
      expect(await db().pruneInboundClaims({ before: nowSeconds() + 3600 })).toBeGreaterThanOrEqual(1);
      expect(await isFree(db(), { ...CLAIM, messageId: "now" })).toBe(true);
    });

    test("invalid claims are refused with InvalidInputError before anything is written", async () => {
      await expectReject(() => db().claimInbound({ platform: "", chat: "42", messageId: "m1" }), InvalidInputError, /platform/);
      await expectReject(() => db().claimInbound({ platform: "discord", chat: "42" } as InboundClaim), InvalidInputError, /messageId/);
      await expectReject(() => db().enqueue(KEY, { payload: "x", claims: "m1" as unknown as InboundClaim[] }), InvalidInputError, /claims must be an array/);
      await expectReject(
        () => db().writeRoute(firstTurn(KEY, S1, [{ platform: "discord", chat: 42 } as unknown as InboundClaim])),
        InvalidInputError,
        /claims\[0\]\.chat/,
      );
      await expectReject(() => db().pruneInboundClaims({} as { before: number }), InvalidInputError, /before/);
      expect(await db().listQueue(KEY)).toEqual([]);
      expect(await db().getRoute(KEY)).toBeNull();
    });
  });
}
