/**
 * Contract: deleting sessions, pruning ended sessions by last activity, auto-prune.
 *
 * @module
 */

import { expect } from "vitest";
import type { NewMessage, SessionDB } from "../../../src/store/contract.js";
import { DAY, contractArea, ids, nowSeconds, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

const NOW = 1_800_000_000;

async function endedSession(
  db: SessionDB,
  id: string,
  { startedAt, messageAt, endedAt, source = "cli" }: { startedAt: number; messageAt?: number; endedAt: number; source?: string },
): Promise<void> {
  await db.createSession({ id, source, startedAt });
  if (messageAt !== undefined) await db.appendMessage(id, user(`message of ${id}`, messageAt));
  await db.endSession(id, "done", { endedAt });
}

/** Every session id in the store, sorted. */
async function sessionIds(db: SessionDB): Promise<string[]> {
  return ids((await db.listSessions({ includeChildren: true, limit: 1000 })).items).sort();
}

export function retentionTests(init: SessionDBTestInitializer): void {
  contractArea(init, "retention", (test, { db }) => {
    test("deleteSession removes the session and its messages; children are detached", async () => {
      await db().createSession({ id: "s", source: "cli", title: "Doomed", startedAt: 1 });
      await db().appendTurn("s", [user("zebra question", 2), user("zebra again", 3)]);
      await db().createSession({ id: "c", source: "cli", parentSessionId: "s", startedAt: 4 });
      await db().appendMessage("c", user("child survives", 5));
      await db().createSession({ id: "g", source: "cli", parentSessionId: "c", startedAt: 6 });

      expect(await db().deleteSession("s")).toBe(true);
      expect(await db().getSession("s")).toBeNull();
      expect(await db().resolveSessionId("s")).toBeNull();
      expect(await db().resolveByTitle("Doomed")).toBeNull();
      expect(await db().searchMessages("zebra")).toEqual([]);
      const child = await db().getSession("c");
      expect(child?.parentSessionId).toBeNull();
      expect(child?.messageCount).toBe(1);
      expect((await db().getMessages("c")).map((m) => m.content)).toEqual(["child survives"]);
      expect(ids(await db().getAncestors("g"))).toEqual(["c"]);
      expect(await sessionIds(db())).toEqual(["c", "g"]);
      const stats = await db().getStats();
      expect(stats.totalSessions).toBe(2);
      expect(stats.totalMessages).toBe(1);

      expect(await db().deleteSession("s")).toBe(false);
      expect(await db().deleteSession("never-existed")).toBe(false);
    });

    test("deleteSession removes rewound rows too", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendTurn("s", [user("one"), user("two")]);
      await db().rewind("s");
      await db().deleteSession("s");
      await db().createSession({ id: "s", source: "cli" });
      expect(await db().getMessages("s", { includeRewound: true })).toEqual([]);
    });

    test("pruneSessions deletes ended sessions whose last activity is strictly older than N days", async () => {
      await endedSession(db(), "old-ended", { startedAt: NOW - 40 * DAY, messageAt: NOW - 35 * DAY, endedAt: NOW - 31 * DAY });
      await endedSession(db(), "recently-ended", { startedAt: NOW - 61 * DAY, messageAt: NOW - 60 * DAY, endedAt: NOW - DAY });
      await db().createSession({ id: "late-message", source: "cli", startedAt: NOW - 60 * DAY });
      await db().appendMessage("late-message", user("recent", NOW - 2 * DAY));
      await db().endSession("late-message", "done", { endedAt: NOW - 50 * DAY });
      await endedSession(db(), "boundary", { startedAt: NOW - 31 * DAY, endedAt: NOW - 30 * DAY });
      await endedSession(db(), "just-over", { startedAt: NOW - 40 * DAY, endedAt: NOW - 30 * DAY - 1 });
      await endedSession(db(), "no-messages-old", { startedAt: NOW - 90 * DAY, endedAt: NOW - 89 * DAY });
      await endedSession(db(), "tg-old", { startedAt: NOW - 46 * DAY, endedAt: NOW - 45 * DAY, source: "telegram" });
      // Active sessions are never pruned, however old.
      await db().createSession({ id: "old-active", source: "cli", startedAt: NOW - 400 * DAY });
      await db().appendMessage("old-active", user("ancient", NOW - 399 * DAY));
      await db().createSession({ id: "old-active-tg", source: "telegram", startedAt: NOW - 400 * DAY });
      // Last activity counts visible messages only: the rewound recent message does not keep it.
      await db().createSession({ id: "rewound-late", source: "cli", startedAt: NOW - 41 * DAY });
      await db().appendMessage("rewound-late", user("visible", NOW - 40 * DAY));
      await db().appendMessage("rewound-late", user("rewound", NOW - DAY));
      await db().rewind("rewound-late");
      await db().endSession("rewound-late", "done", { endedAt: NOW - 35 * DAY });
      // A child of a pruned session stays, detached.
      await db().createSession({ id: "child-of-old", source: "cli", parentSessionId: "old-ended", startedAt: NOW - 31 * DAY });

      expect(await db().pruneSessions({ olderThanDays: 30, now: NOW, sources: ["telegram"] })).toBe(1);
      expect(await db().getSession("tg-old")).toBeNull();
      expect(await db().getSession("old-ended")).not.toBeNull();

      expect(await db().pruneSessions({ olderThanDays: 30, now: NOW })).toBe(4);
      expect(await sessionIds(db())).toEqual(["boundary", "child-of-old", "late-message", "old-active", "old-active-tg", "recently-ended"].sort());
      expect((await db().getSession("child-of-old"))?.parentSessionId).toBeNull();
      expect((await db().searchMessages("message", { limit: 100 })).some((h) => h.sessionId === "old-ended")).toBe(false);
      expect((await db().getStats()).totalSessions).toBe(6);

      expect(await db().pruneSessions({ olderThanDays: 30, now: NOW })).toBe(0);
      // A later "now" makes more sessions old enough.
      // Threshold NOW − 1 day: boundary (NOW − 30 d) and late-message (NOW − 2 d) go;
      // recently-ended (exactly NOW − 1 d) is not strictly older and stays.
      expect(await db().pruneSessions({ olderThanDays: 30, now: NOW + 29 * DAY })).toBe(2);
      expect(await sessionIds(db())).toEqual(["child-of-old", "old-active", "old-active-tg", "recently-ended"]);
    });

    test("pruneSessions defaults now to the current time", async () => {
      const now = nowSeconds();
      await endedSession(db(), "old", { startedAt: now - 11 * DAY, endedAt: now - 10 * DAY });
      await endedSession(db(), "new", { startedAt: now - 2 * DAY, endedAt: now - DAY });
      expect(await db().pruneSessions({ olderThanDays: 5 })).toBe(1);
      expect(await sessionIds(db())).toEqual(["new"]);
    });

    test("a prune that runs as many batches deletes exactly the rule's sessions and keeps lineage right across them", async () => {
      // Each pruned session holds 1,500 messages: a prune deletes a bounded number of messages per transaction,
      // so it runs as several batches (in id order), and parents and children fall into different ones.
      const OLD = NOW - 100 * DAY;
      const bulk = (id: string, at: number): NewMessage[] => Array.from({ length: 1500 }, (_v, i) => user(`bulk ${id} ${i}`, at));
      const oldEnded = async (id: string, input: { parentSessionId?: string; source?: string; startedAt: number; reason?: string }): Promise<void> => {
        await db().createSession({
          id,
          source: input.source ?? "cli",
          startedAt: input.startedAt,
          ...(input.parentSessionId ? { parentSessionId: input.parentSessionId } : {}),
        });
        await db().appendTurn(id, bulk(id, input.startedAt + 1));
        await db().endSession(id, input.reason ?? "done", { endedAt: input.startedAt + 2 });
      };
      // A compression chain whose two ancestors go: the live tip stays, detached, and is listed with its own start.
      await oldEnded("a-root", { startedAt: OLD, reason: "compression" });
      await oldEnded("m-mid", { parentSessionId: "a-root", startedAt: OLD + 2, reason: "compression" });
      await db().createSession({ id: "z-tip", source: "cli", parentSessionId: "m-mid", startedAt: OLD + 4 });
      await db().appendMessage("z-tip", user("the tip lives on", NOW - DAY));
      // A parent outside the source filter stays; its continuation goes, so it is listed again.
      await db().createSession({ id: "k-keep", source: "telegram", startedAt: OLD - 10 });
      await db().endSession("k-keep", "compression", { endedAt: OLD - 9 });
      await oldEnded("b-child", { parentSessionId: "k-keep", startedAt: OLD - 9 });
      // A child that sorts before its parent; both go.
      await oldEnded("y-parent", { startedAt: OLD - 20 });
      await oldEnded("c-child", { parentSessionId: "y-parent", startedAt: OLD - 18 });
      // Never pruned: a live old session, a recently ended one.
      await db().createSession({ id: "l-live", source: "cli", startedAt: OLD - 30 });
      await endedSession(db(), "n-recent", { startedAt: NOW - 3 * DAY, messageAt: NOW - 2 * DAY, endedAt: NOW - DAY });

      const listedBefore = (await db().listSessions()).items;
      expect(ids(listedBefore)).not.toContain("k-keep");
      expect(listedBefore.find((s) => s.id === "z-tip")?.startedAt).toBe(OLD);

      expect(await db().pruneSessions({ olderThanDays: 30, now: NOW, sources: ["cli"] })).toBe(5);
      expect(await sessionIds(db())).toEqual(["k-keep", "l-live", "n-recent", "z-tip"]);
      const tip = await db().getSession("z-tip");
      expect(tip?.parentSessionId).toBeNull();
      expect(await db().getCompressionTip("z-tip")).toBe("z-tip");
      const listed = (await db().listSessions()).items;
      expect(ids(listed).sort()).toEqual(["k-keep", "l-live", "n-recent", "z-tip"]);
      expect(listed.find((s) => s.id === "z-tip")?.startedAt).toBe(OLD + 4);
      expect(await db().getDescendants("k-keep")).toEqual([]);
      expect((await db().getStats()).totalMessages).toBe(2);
      expect(await db().searchMessages("bulk")).toEqual([]);
      expect(await db().pruneSessions({ olderThanDays: 30, now: NOW, sources: ["cli"] })).toBe(0);
    }, 120_000);

    test("autoPrune runs at most once per interval", async () => {
      await endedSession(db(), "a", { startedAt: NOW - 50 * DAY, endedAt: NOW - 40 * DAY });
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW, intervalSeconds: 3600 })).toEqual({ ran: true, deleted: 1 });
      await endedSession(db(), "b", { startedAt: NOW - 50 * DAY, endedAt: NOW - 40 * DAY });
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW + 10, intervalSeconds: 3600 })).toEqual({ ran: false, deleted: 0 });
      expect(await db().getSession("b")).not.toBeNull();
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW + 3601, intervalSeconds: 3600 })).toEqual({ ran: true, deleted: 1 });
      expect(await db().getSession("b")).toBeNull();
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW + 3602, intervalSeconds: 3600 })).toEqual({ ran: false, deleted: 0 });
    });

    test("autoPrune's default interval is one day; a run that deletes nothing still counts", async () => {
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW })).toEqual({ ran: true, deleted: 0 });
      await endedSession(db(), "a", { startedAt: NOW - 50 * DAY, endedAt: NOW - 40 * DAY });
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW + 3600 })).toEqual({ ran: false, deleted: 0 });
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW + DAY - 60 })).toEqual({ ran: false, deleted: 0 });
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW + DAY + 1 })).toEqual({ ran: true, deleted: 1 });
    });

    test("autoPrune honours sources and never deletes active sessions", async () => {
      await endedSession(db(), "cli-old", { startedAt: NOW - 50 * DAY, endedAt: NOW - 40 * DAY });
      await endedSession(db(), "tg-old", { startedAt: NOW - 50 * DAY, endedAt: NOW - 40 * DAY, source: "telegram" });
      await db().createSession({ id: "tg-active", source: "telegram", startedAt: NOW - 500 * DAY });
      expect(await db().autoPrune({ olderThanDays: 30, now: NOW, sources: ["telegram"] })).toEqual({ ran: true, deleted: 1 });
      expect(await sessionIds(db())).toEqual(["cli-old", "tg-active"]);
    });
  });
}
