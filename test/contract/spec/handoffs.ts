/**
 * Contract: cross-platform handoff records — creation (pending), claiming the oldest
 * pending handoff of some platforms (moved to running, atomically: two handles racing
 * never claim one handoff twice), finishing (completed from running with the target
 * chat, failed from pending or running with a reason), refusals, and removal with the
 * session.
 *
 * @module
 */

import { expect } from "vitest";
import type { Handoff, SessionDB } from "../../../src/store/contract.js";
import { ConflictError, InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { contractArea, expectReject } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const T0 = 1_800_000_000;
const KEY = "agent:main:telegram:channel:-100123";

async function session(db: SessionDB, id = "cli-1"): Promise<string> {
  await db.createSession({ id, source: "cli" });
  return id;
}

export function handoffsTests(init: SessionDBTestInitializer): void {
  contractArea(init, "handoffs", (test, { db, anotherHandle }) => {
    test("createHandoff records a pending handoff that reads back; unknown ids read null", async () => {
      const id = await session(db());
      const created = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 });
      expect(created).toEqual<Handoff>({
        id: created.id,
        sessionId: id,
        platform: "telegram",
        status: "pending",
        reason: null,
        createdAt: T0,
        updatedAt: T0,
        claimedBy: null,
        chatId: null,
        threadId: null,
        sessionKey: null,
      });
      expect(typeof created.id).toBe("string");
      expect(created.id.length).toBeGreaterThan(0);
      expect(await db().getHandoff(created.id)).toEqual(created);
      expect(await db().getHandoff("no-such-handoff")).toBeNull();
      const other = await db().createHandoff({ sessionId: id, platform: "telegram" });
      expect(other.id).not.toBe(created.id);
      expect(Math.abs(other.createdAt - Date.now() / 1000)).toBeLessThan(60);
    });

    test("createHandoff refuses an unknown session (NotFoundError) and bad input (InvalidInputError)", async () => {
      await expectReject(() => db().createHandoff({ sessionId: "missing", platform: "telegram" }), NotFoundError, /missing/);
      const id = await session(db());
      await expectReject(() => db().createHandoff({ sessionId: id, platform: "" }), InvalidInputError);
      await expectReject(() => db().createHandoff({ sessionId: "", platform: "telegram" }), InvalidInputError);
      await expectReject(() => db().createHandoff({ sessionId: id, platform: "tele\ngram" }), InvalidInputError);
      await expectReject(() => db().createHandoff({ sessionId: id, platform: "telegram", now: -1 }), InvalidInputError);
      await expectReject(() => db().createHandoff(null as never), InvalidInputError);
    });

    test("claimHandoff takes the oldest pending handoff of the given platforms and moves it to running", async () => {
      const id = await session(db());
      const slack = await db().createHandoff({ sessionId: id, platform: "slack", now: T0 });
      const second = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 + 2 });
      const first = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 + 1 });

      const claimed = await db().claimHandoff({ platforms: ["telegram", "discord"], holder: "gw-a", now: T0 + 10 });
      expect(claimed).toEqual({ ...first, status: "running", claimedBy: "gw-a", updatedAt: T0 + 10 });
      expect(await db().getHandoff(first.id)).toEqual(claimed);

      const next = await db().claimHandoff({ platforms: ["telegram"], holder: "gw-b", now: T0 + 11 });
      expect(next).toMatchObject({ id: second.id, status: "running", claimedBy: "gw-b", updatedAt: T0 + 11 });
      expect(await db().claimHandoff({ platforms: ["telegram"], holder: "gw-a", now: T0 + 12 })).toBeNull();
      // Other platforms' handoffs stay pending until someone claims their platform.
      expect((await db().getHandoff(slack.id))?.status).toBe("pending");
      expect(await db().claimHandoff({ platforms: [], holder: "gw-a" })).toBeNull();
      expect(await db().claimHandoff({ platforms: ["slack"], holder: "gw-c" })).toMatchObject({ id: slack.id, claimedBy: "gw-c" });
    });

    test("creation order breaks ties of equal creation times", async () => {
      const id = await session(db());
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 })).id);
      const claimed: string[] = [];
      for (let i = 0; i < 5; i++) claimed.push((await db().claimHandoff({ platforms: ["telegram"], holder: "gw", now: T0 + 1 }))!.id);
      expect(claimed).toEqual(made);
    });

    test("createdBefore leaves younger handoffs alone", async () => {
      const id = await session(db());
      const old = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 });
      const young = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 + 30 });
      expect(await db().claimHandoff({ platforms: ["telegram"], holder: "gw", createdBefore: T0 - 1 })).toBeNull();
      expect(await db().claimHandoff({ platforms: ["telegram"], holder: "gw", createdBefore: T0 + 5 })).toMatchObject({ id: old.id });
      expect(await db().claimHandoff({ platforms: ["telegram"], holder: "gw", createdBefore: T0 + 5 })).toBeNull();
      expect((await db().getHandoff(young.id))?.status).toBe("pending");
    });

    test("claimHandoff validates its options", async () => {
      await expectReject(() => db().claimHandoff({ platforms: "telegram" as never, holder: "gw" }), InvalidInputError);
      await expectReject(() => db().claimHandoff({ platforms: ["telegram"], holder: "" }), InvalidInputError);
      await expectReject(() => db().claimHandoff({ platforms: [""], holder: "gw" }), InvalidInputError);
      await expectReject(() => db().claimHandoff({ platforms: ["telegram"], holder: "gw", createdBefore: Number.NaN }), InvalidInputError);
    });

    test("finishHandoff completes a running handoff with its target chat", async () => {
      const id = await session(db());
      const h = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 });
      await db().claimHandoff({ platforms: ["telegram"], holder: "gw", now: T0 + 1 });
      const done = await db().finishHandoff(h.id, {
        status: "completed",
        chatId: "-100123",
        threadId: "77",
        sessionKey: KEY,
        reason: "ignored for completed",
        now: T0 + 5,
      });
      expect(done).toEqual<Handoff>({
        ...h,
        status: "completed",
        claimedBy: "gw",
        updatedAt: T0 + 5,
        chatId: "-100123",
        threadId: "77",
        sessionKey: KEY,
        reason: null,
      });
      expect(await db().getHandoff(h.id)).toEqual(done);
      // Ended: it can neither end again nor be claimed.
      await expectReject(() => db().finishHandoff(h.id, { status: "failed", reason: "timeout" }), ConflictError, /already completed/);
      expect(await db().getHandoff(h.id)).toEqual(done);
      expect(await db().claimHandoff({ platforms: ["telegram"], holder: "gw" })).toBeNull();
    });

    test("finishHandoff fails a pending or running handoff with a reason (any text), and a failed one stays failed", async () => {
      const id = await session(db());
      const pending = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 });
      const timedOut = await db().finishHandoff(pending.id, { status: "failed", reason: "timeout", now: T0 + 60 });
      expect(timedOut).toMatchObject({ status: "failed", reason: "timeout", updatedAt: T0 + 60, claimedBy: null });
      // A late gateway does not get it.
      expect(await db().claimHandoff({ platforms: ["telegram"], holder: "late" })).toBeNull();
      await expectReject(() => db().finishHandoff(pending.id, { status: "completed", chatId: "c", sessionKey: KEY }), ConflictError, /already failed/);

      const running = await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 });
      await db().claimHandoff({ platforms: ["telegram"], holder: "gw" });
      const reason = "createThread failed: 403 \u0000 forbidden — ünïcode ✓";
      expect(await db().finishHandoff(running.id, { status: "failed", reason })).toMatchObject({ status: "failed", reason, claimedBy: "gw" });
      expect((await db().getHandoff(running.id))?.reason).toBe(reason);
      const bare = await db().createHandoff({ sessionId: id, platform: "telegram" });
      expect((await db().finishHandoff(bare.id, { status: "failed" })).reason).toBeNull();
    });

    test("finishHandoff refuses to complete a pending handoff, an unknown id, and bad results", async () => {
      const id = await session(db());
      const h = await db().createHandoff({ sessionId: id, platform: "telegram" });
      await expectReject(() => db().finishHandoff(h.id, { status: "completed", chatId: "c", sessionKey: KEY }), ConflictError, /claim it first/);
      await expectReject(() => db().finishHandoff("nope", { status: "failed", reason: "x" }), NotFoundError);
      await db().claimHandoff({ platforms: ["telegram"], holder: "gw" });
      await expectReject(() => db().finishHandoff(h.id, { status: "completed", sessionKey: KEY }), InvalidInputError);
      await expectReject(() => db().finishHandoff(h.id, { status: "completed", chatId: "c" }), InvalidInputError);
      await expectReject(() => db().finishHandoff(h.id, { status: "running" as never }), InvalidInputError);
      await expectReject(() => db().finishHandoff(h.id, { status: "failed", reason: 42 as never }), InvalidInputError);
      await expectReject(() => db().finishHandoff(h.id, null as never), InvalidInputError);
      expect((await db().getHandoff(h.id))?.status).toBe("running");
    });

    test("a session's handoffs go when the session is deleted; other sessions' stay", async () => {
      const a = await session(db(), "a");
      const b = await session(db(), "b");
      const ha = await db().createHandoff({ sessionId: a, platform: "telegram" });
      const hb = await db().createHandoff({ sessionId: b, platform: "telegram" });
      expect(await db().deleteSession(a)).toBe(true);
      expect(await db().getHandoff(ha.id)).toBeNull();
      expect(await db().getHandoff(hb.id)).not.toBeNull();
      expect(await db().claimHandoff({ platforms: ["telegram"], holder: "gw" })).toMatchObject({ id: hb.id });
    });

    test("two handles racing to claim: every handoff is claimed exactly once", async () => {
      const other = await anotherHandle();
      const id = await session(db());
      const made = new Set<string>();
      for (let i = 0; i < 12; i++) made.add((await db().createHandoff({ sessionId: id, platform: "telegram", now: T0 + i })).id);
      const claimAll = async (handle: SessionDB, holder: string): Promise<Handoff[]> => {
        const got = await Promise.all(Array.from({ length: 12 }, () => handle.claimHandoff({ platforms: ["telegram"], holder })));
        return got.filter((h): h is Handoff => h !== null);
      };
      const [a, b] = await Promise.all([claimAll(db(), "gw-a"), claimAll(other, "gw-b")]);
      const claimed = [...a, ...b];
      expect(new Set(claimed.map((h) => h.id)).size).toBe(claimed.length);
      // Whatever a contended claim skipped is still pending and claimable, once.
      for (;;) {
        const rest = await db().claimHandoff({ platforms: ["telegram"], holder: "gw-c" });
        if (rest === null) break;
        claimed.push(rest);
      }
      expect(claimed.map((h) => h.id).sort()).toEqual([...made].sort());
      for (const h of a) expect((await other.getHandoff(h.id))?.claimedBy).toBe("gw-a");
      for (const h of b) expect((await db().getHandoff(h.id))?.claimedBy).toBe("gw-b");
    });
  });
}
