import { expect, it } from "vitest";
import { InvalidInputError, NotFoundError } from "../../src/store/errors.js";
import { ManualClock } from "../../src/gateway/clock.js";
import { SessionRouter, type SessionRouterOptions } from "../../src/gateway/session-router.js";
import { SessionStore } from "../../src/gateway/session-store.js";
import type { SessionSource } from "../../src/gateway/session-source.js";
import { forEachBackend } from "./backends.js";

const ID_FORMAT = /^\d{8}_\d{6}_[0-9a-f]{8}$/u;
/** 2027-03-10 12:00 local time. */
const NOON = new Date(2027, 2, 10, 12, 0, 0).getTime() / 1000;
const MIN = 60;

const alice: SessionSource = { platform: "telegram", chatType: "dm", chatId: "42", userId: "42", userName: "Alice" };
const group = (userId: string): SessionSource => ({
  platform: "telegram",
  chatType: "group",
  chatId: "-100",
  chatName: "Dev Chat",
  userId,
  userName: userId,
});

forEachBackend((backend) => {
  async function setup(options: Partial<SessionRouterOptions> = {}, start = NOON) {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(start);
    const store = new SessionRouter({ db, clock, ...options });
    return { db, clock, store, reopen };
  }

  it("creates an entry with a session id in the documented format and returns it again", async () => {
    const { store, db, clock } = await setup();
    const first = await store.getOrCreateSession(alice);
    expect(first.sessionId).toMatch(ID_FORMAT);
    expect(first.key).toBe("agent:main:telegram:dm:42");
    expect(first.sessionKey).toBe(first.key);
    expect(first).toMatchObject({ platform: "telegram", chatType: "dm", displayName: "Alice", createdAt: NOON, updatedAt: NOON });
    expect(first.origin).toMatchObject({ platform: "telegram", chatId: "42" });
    const session = await db.getSession(first.sessionId);
    expect(session).toMatchObject({ source: "telegram", sessionKey: first.key, chatId: "42", chatType: "dm", userId: "42" });
    clock.advance(30);
    const again = await store.getOrCreateSession(alice);
    expect(again.sessionId).toBe(first.sessionId);
    expect(again.updatedAt).toBe(NOON + 30);
    expect(again.createdAt).toBe(NOON);
    expect(again.wasAutoReset).toBe(false);
  });

  it("group members get their own sessions by default; one shared session when not per-user", async () => {
    const { store } = await setup();
    const a = await store.getOrCreateSession(group("u1"));
    const b = await store.getOrCreateSession(group("u2"));
    expect(a.sessionId).not.toBe(b.sessionId);
    const shared = await setup({ keySettings: { groupSessionsPerUser: false } });
    const c = await shared.store.getOrCreateSession(group("u1"));
    const d = await shared.store.getOrCreateSession(group("u2"));
    expect(c.sessionId).toBe(d.sessionId);
    expect(c.key).toBe("agent:main:telegram:group:-100");
  });

  it("WhatsApp aliases of one person land on one key and one session", async () => {
    const { store } = await setup();
    await store.aliases.record("whatsapp", "15551234567@s.whatsapp.net", "999999999999999@lid");
    const byPhone = await store.getOrCreateSession({
      platform: "whatsapp",
      chatType: "dm",
      chatId: "+15551234567:47@s.whatsapp.net",
      userId: "15551234567@s.whatsapp.net",
    });
    const byLid = await store.getOrCreateSession({ platform: "whatsapp", chatType: "dm", chatId: "999999999999999@lid", userId: "999999999999999@lid" });
    expect(byLid.sessionId).toBe(byPhone.sessionId);
    expect(byPhone.key).toBe("agent:main:whatsapp:dm:15551234567");
    // Group participants are canonicalised too; the group id is kept as given.
    const g1 = await store.getOrCreateSession({ platform: "whatsapp", chatType: "group", chatId: "120363@g.us", userId: "999999999999999@lid" });
    const g2 = await store.getOrCreateSession({ platform: "whatsapp", chatType: "group", chatId: "120363@g.us", userId: "+15551234567" });
    expect(g1.key).toBe("agent:main:whatsapp:group:120363@g.us:15551234567");
    expect(g2.sessionId).toBe(g1.sessionId);
  });

  it("learn(): a sender reported with two ids (phone and business-scoped id) is one person from then on", async () => {
    const { store } = await setup();
    const phoneOnly = await store.getOrCreateSession({ platform: "whatsapp", chatType: "dm", chatId: "+49 151 2345 6789", userId: "+49 151 2345 6789" });
    const both: SessionSource = { platform: "whatsapp", chatType: "dm", chatId: "4915123456789", userId: "4915123456789", userIdAlt: "DE.1502576394655843" };
    await store.aliases.learn(both);
    await store.aliases.learn(both);
    expect(await store.db.listAliases("whatsapp", "4915123456789")).toEqual(["4915123456789", "DE.1502576394655843"]);
    const idOnly = await store.getOrCreateSession({ platform: "whatsapp", chatType: "dm", chatId: "DE.1502576394655843", userId: "DE.1502576394655843" });
    expect(idOnly.sessionId).toBe(phoneOnly.sessionId);
    expect(await store.aliases.resolve("whatsapp", "4915123456789@s.whatsapp.net")).toBe(await store.aliases.resolve("whatsapp", "DE.1502576394655843"));
    // One id, or two equal ones, records nothing.
    await store.aliases.learn({ platform: "signal", chatType: "dm", userId: "+4915100000000" });
    await store.aliases.learn({ platform: "whatsapp", chatType: "dm", userId: "+4915100000000", userIdAlt: "4915100000000" });
    expect(await store.db.listAliases("signal", "+4915100000000")).toEqual(["+4915100000000"]);
    expect(await store.db.listAliases("whatsapp", "4915100000000")).toEqual(["4915100000000"]);
  });

  it("1. suspended → a new session (reason suspended), the old one ended session_reset", async () => {
    const { store, db, clock } = await setup();
    const old = await store.getOrCreateSession(alice);
    await db.appendMessage(old.sessionId, { role: "user", content: "hi" });
    expect(await store.suspendSession(old.key)).toBe(true);
    expect(await store.suspendSession(old.key)).toBe(false);
    clock.advance(5);
    const next = await store.getOrCreateSession(alice);
    expect(next.sessionId).not.toBe(old.sessionId);
    expect(next).toMatchObject({ wasAutoReset: true, autoResetReason: "suspended", resetHadActivity: true, suspended: false });
    expect(next.resetNotice?.user).toMatch(/stopped/);
    const ended = await db.getSession(old.sessionId);
    expect(ended).toMatchObject({ endReason: "session_reset", endedAt: NOON + 5 });
    expect(await db.getMessages(old.sessionId)).toHaveLength(1); // history kept
  });

  it("2. resume pending keeps the session while fresh; a stale marker or a firing policy starts a new one", async () => {
    const { store, clock } = await setup({ reset: { mode: "idle", idleMinutes: 60 } });
    const first = await store.getOrCreateSession(alice);
    expect(await store.markResumePending(first.key, "restart_interrupted")).toBe(true);
    clock.advance(3599);
    const kept = await store.getOrCreateSession(alice);
    expect(kept.sessionId).toBe(first.sessionId);
    expect(kept.resumePending).toBe(true); // survives until a turn succeeds
    expect(kept.resumeReason).toBe("restart_interrupted");
    // The marker is now 3599 s old; 2 more seconds make it older than the 3600 s window.
    clock.advance(2);
    const stale = await store.getOrCreateSession(alice);
    expect(stale.sessionId).not.toBe(first.sessionId);
    expect(stale).toMatchObject({ wasAutoReset: true, autoResetReason: "resume_pending_expired", resumePending: false });

    // The policy fires before the marker is stale: the policy's own reason is reported.
    await store.markResumePending(stale.key, "restart_interrupted");
    clock.advance(61 * MIN);
    const idle = await store.getOrCreateSession(alice);
    expect(idle.autoResetReason).toBe("idle");
    expect(idle.sessionId).not.toBe(stale.sessionId);
  });

  it("2b. a freshness window of 0 disables the staleness check", async () => {
    const { store, clock } = await setup({ resumeFreshnessSeconds: 0 });
    const first = await store.getOrCreateSession(alice);
    await store.markResumePending(first.key, "restart_timeout");
    clock.advance(30 * 86_400);
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(first.sessionId);
  });

  it("3. idle policy: 59 min keeps, 61 min resets with reason idle; activity decides resetHadActivity and the notice", async () => {
    const { store, db, clock } = await setup({ reset: { mode: "idle", idleMinutes: 60 } });
    const first = await store.getOrCreateSession(alice);
    clock.advance(59 * MIN);
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(first.sessionId);
    // Exactly 60 minutes after the last update: not strictly more, no reset.
    clock.advance(60 * MIN);
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(first.sessionId);
    clock.advance(61 * MIN);
    const quiet = await store.getOrCreateSession(alice);
    expect(quiet).toMatchObject({ wasAutoReset: true, autoResetReason: "idle", resetHadActivity: false });
    expect(quiet.resetNotice?.model).toMatch(/automatic reset/);
    expect(quiet.resetNotice?.user).toBeNull(); // nothing to tell: the old session was empty
    expect((await db.getSession(first.sessionId))?.endReason).toBe("session_reset");

    await db.recordUsage(quiet.sessionId, { inputTokens: 10 });
    clock.advance(2 * 3600);
    const busy = await store.getOrCreateSession(alice);
    expect(busy.resetHadActivity).toBe(true);
    expect(busy.resetNotice?.user).toMatch(/^Session automatically reset \(inactive for 2h\)/);
  });

  it("3b. notices are never sent to users on notifyExclude platforms (default api-server, webhook)", async () => {
    const { store, db, clock } = await setup({ reset: { mode: "idle", idleMinutes: 1 } });
    const api: SessionSource = { platform: "api-server", chatType: "dm", userId: "client-1" };
    const first = await store.getOrCreateSession(api);
    await db.appendMessage(first.sessionId, { role: "user", content: "x" });
    clock.advance(120);
    const next = await store.getOrCreateSession(api);
    expect(next.resetHadActivity).toBe(true);
    expect(next.resetNotice?.user).toBeNull();
    expect(next.resetNotice?.model).toBeTruthy();
  });

  it("3c. daily policy across midnight: 03:59 keeps, 04:00 resets (local time)", async () => {
    const evening = new Date(2027, 2, 10, 23, 30).getTime() / 1000;
    const { store, clock } = await setup({ reset: { mode: "daily", atHour: 4 } }, evening);
    const first = await store.getOrCreateSession(alice);
    clock.set(new Date(2027, 2, 11, 3, 59).getTime() / 1000);
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(first.sessionId);
    clock.set(new Date(2027, 2, 11, 4, 0).getTime() / 1000);
    const next = await store.getOrCreateSession(alice);
    expect(next.sessionId).not.toBe(first.sessionId);
    expect(next.autoResetReason).toBe("daily");
    // An update exactly at 04:00 is after the boundary: no second reset at 04:01.
    clock.set(new Date(2027, 2, 11, 4, 1).getTime() / 1000);
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(next.sessionId);
  });

  it("3d. per-platform and per-type policies: platform → type → default", async () => {
    const { store, clock } = await setup({
      reset: { mode: "none", platforms: { discord: { mode: "idle", idleMinutes: 10 } }, types: { group: { mode: "idle", idleMinutes: 30 } } },
    });
    const dm = await store.getOrCreateSession(alice);
    const grp = await store.getOrCreateSession(group("u1"));
    const disc = await store.getOrCreateSession({ platform: "discord", chatType: "group", chatId: "g", userId: "u" });
    clock.advance(11 * MIN);
    expect((await store.getOrCreateSession({ platform: "discord", chatType: "group", chatId: "g", userId: "u" })).sessionId).not.toBe(disc.sessionId);
    expect((await store.getOrCreateSession(group("u1"))).sessionId).toBe(grp.sessionId);
    clock.advance(31 * MIN);
    expect((await store.getOrCreateSession(group("u1"))).sessionId).not.toBe(grp.sessionId);
    clock.advance(30 * 86_400);
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(dm.sessionId);
  });

  it("3e. active background processes block the automatic reset", async () => {
    let busy = true;
    const { store, clock } = await setup({ reset: { mode: "idle", idleMinutes: 1 }, hasActiveProcesses: () => busy });
    const first = await store.getOrCreateSession(alice);
    clock.advance(600);
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(first.sessionId);
    busy = false;
    clock.advance(600);
    expect((await store.getOrCreateSession(alice)).sessionId).not.toBe(first.sessionId);
  });

  it("a session ended elsewhere (another process) is never reused", async () => {
    const { store, reopen } = await setup();
    const first = await store.getOrCreateSession(alice);
    const other = await reopen();
    await other.endSession(first.sessionId, "cli_close");
    const next = await store.getOrCreateSession(alice);
    expect(next.sessionId).not.toBe(first.sessionId);
    expect(next.wasAutoReset).toBe(false);
    expect((await other.getSession(next.sessionId))?.endedAt).toBeNull();
  });

  it("an entry whose session was split by compression follows to the live continuation", async () => {
    const { store, db } = await setup();
    const first = await store.getOrCreateSession(alice);
    const child = await db.createSession({ source: "telegram", parentSessionId: first.sessionId, sessionKey: first.key });
    await db.endSession(first.sessionId, "compression");
    const next = await store.getOrCreateSession(alice);
    expect(next.sessionId).toBe(child.id);
    expect(next.wasAutoReset).toBe(false);
    expect((await store.getEntry(first.key))?.sessionId).toBe(child.id);
  });

  it("a lost routing entry is recovered from the live session of its key; explicit resets are not undone", async () => {
    const { store, db } = await setup();
    const first = await store.getOrCreateSession(alice);
    await db.deleteRoute(first.key);
    const recovered = await store.getOrCreateSession(alice);
    expect(recovered.sessionId).toBe(first.sessionId);

    const reset = (await store.resetSession(first.key))!;
    await db.deleteRoute(first.key);
    const after = await store.getOrCreateSession(alice);
    expect(after.sessionId).toBe(reset.sessionId); // not the session /new ended
    expect((await db.getSession(first.sessionId))?.endedAt).not.toBeNull();
  });

  it("forceNew always makes a fresh session", async () => {
    const { store, db } = await setup();
    const first = await store.getOrCreateSession(alice);
    const forced = await store.getOrCreateSession(alice, { forceNew: true });
    expect(forced.sessionId).not.toBe(first.sessionId);
    expect((await db.getSession(first.sessionId))?.endReason).toBe("session_reset");
    expect(forced.wasAutoReset).toBe(false);
  });

  it("concurrent first messages of one key make exactly one session", async () => {
    const { store, reopen, clock } = await setup();
    const other = new SessionRouter({ db: await reopen(), clock });
    const entries = await Promise.all([
      store.getOrCreateSession(alice),
      other.getOrCreateSession(alice),
      store.getOrCreateSession(alice),
      other.getOrCreateSession(alice),
    ]);
    expect(new Set(entries.map((e) => e.sessionId)).size).toBe(1);
  });

  it("resetSession (/new): fresh entry with isFreshReset, old ended; null for an unknown key", async () => {
    const { store, db } = await setup();
    const first = await store.getOrCreateSession(alice);
    await db.enqueue(first.key, { payload: "queued before /new" });
    const fresh = await store.resetSession(first.key);
    expect(await db.listQueue(first.key)).toEqual([]);
    expect(fresh).toMatchObject({ isFreshReset: true, wasAutoReset: false, key: first.key, platform: "telegram" });
    expect(fresh!.sessionId).not.toBe(first.sessionId);
    expect((await db.getSession(first.sessionId))?.endReason).toBe("session_reset");
    expect(await store.resetSession("agent:main:telegram:dm:nobody")).toBeNull();
    await expect(store.resetSession("../etc")).rejects.toBeInstanceOf(InvalidInputError);
    // The first successful turn clears the flag.
    expect(await store.finishTurn(first.key, { outcome: "ok" })).toBe(true);
    expect((await store.getEntry(first.key))?.isFreshReset).toBe(false);
  });

  it("one turn API: startTurn(key) marks a resumed turn; finishTurn ok / failed / interrupted; a moved key keeps its entry", async () => {
    const { store, db, clock } = await setup();
    const first = await store.getOrCreateSession(alice);
    expect(await store.startTurn("agent:main:telegram:dm:nobody")).toBe(false);
    expect(await store.finishTurn("agent:main:telegram:dm:nobody", { outcome: "ok" })).toBe(false);
    clock.advance(10);
    // The key form: marker and activity, no routing decision and no message.
    expect(await store.startTurn(first.key)).toBe(true);
    expect(await store.getEntry(first.key)).toMatchObject({ sessionId: first.sessionId, turnStartedAt: NOON + 10, updatedAt: NOON + 10, messageCount: 0 });
    await store.markResumePending(first.key, "restart_interrupted");
    // failed: only the turn marker goes; the resume marker survives.
    expect(await store.finishTurn(first.key, { outcome: "failed" })).toBe(true);
    expect(await store.getEntry(first.key)).toMatchObject({ turnStartedAt: null, resumePending: true });
    // Nothing marked, nothing to store: nothing is written.
    const before = (await store.getEntry(first.key))!.version;
    expect(await store.finishTurn(first.key, { outcome: "failed" })).toBe(false);
    expect((await store.getEntry(first.key))!.version).toBe(before);
    // interrupted keeps the marker (the next start counts it); ok clears it, the resume marker and records the prompt size.
    await store.startTurn(first.key);
    expect(await store.finishTurn(first.key, { outcome: "interrupted" })).toBe(true);
    expect((await store.getEntry(first.key))?.turnStartedAt).toBe(NOON + 10);
    clock.advance(5);
    expect(
      await store.finishTurn(first.key, { outcome: "ok", lastPromptTokens: 42, messages: [{ role: "assistant", content: "hi", timestamp: clock.now() }] }),
    ).toBe(true);
    expect(await store.getEntry(first.key)).toMatchObject({
      turnStartedAt: null,
      resumePending: false,
      lastPromptTokens: 42,
      updatedAt: NOON + 15,
      messageCount: 1,
    });
    // The key routes to another session than the turn's (it moved on while the turn ran): the turn
    // goes to its own session, and the entry is left alone.
    const other = await store.getOrCreateSession({ ...alice, chatId: "43", userId: "43" });
    const late = [{ role: "assistant" as const, content: "late", timestamp: clock.now() }];
    expect(await store.finishTurn(first.key, { sessionId: other.sessionId, outcome: "ok", messages: late })).toBe(false);
    expect((await db.getMessages(other.sessionId)).map((m) => m.content)).toEqual(["late"]);
    expect(await store.getEntry(first.key)).toMatchObject({ sessionId: first.sessionId, messageCount: 1, updatedAt: NOON + 15 });
  });

  it("finishTurn over the entry startTurn returned: written without a read when unchanged, and over the current entry when it changed meanwhile", async () => {
    const { store, db, clock } = await setup();
    const started = await store.startTurn(alice, [{ role: "user", content: "one", timestamp: clock.now() }]);
    clock.advance(5);
    const reply = (text: string) => [{ role: "assistant" as const, content: text, timestamp: clock.now() }];
    expect(
      await store.finishTurn(started.key, { sessionId: started.sessionId, outcome: "ok", messages: reply("first"), lastPromptTokens: 7, route: started }),
    ).toBe(true);
    const after = (await store.getEntry(started.key))!;
    expect(after).toMatchObject({ version: started.version + 1, turnStartedAt: null, lastPromptTokens: 7, updatedAt: NOON + 5, messageCount: 2 });
    // The entry changes between the start and the finish (another writer): the stale entry's
    // version no longer matches, so the finish reads the current one and keeps its change.
    const second = await store.startTurn(alice, [{ role: "user", content: "two", timestamp: clock.now() }]);
    await store.markResumePending(second.key, "restart_interrupted");
    const marked = (await store.getEntry(second.key))!;
    expect(marked.version).toBe(second.version + 1);
    clock.advance(5);
    expect(await store.finishTurn(second.key, { sessionId: second.sessionId, outcome: "failed", messages: reply("second"), route: second })).toBe(true);
    const current = (await store.getEntry(second.key))!;
    expect(current).toMatchObject({ version: marked.version + 1, turnStartedAt: null, resumePending: true, resumeReason: "restart_interrupted" });
    expect((await db.getMessages(second.sessionId)).map((m) => m.content)).toEqual(["one", "first", "two", "second"]);
    // An entry of another key is not used as this key's.
    const bob = await store.startTurn({ ...alice, chatId: "43", userId: "43" }, []);
    expect(await store.finishTurn(second.key, { outcome: "ok", route: bob })).toBe(true);
    expect((await store.getEntry(bob.key))!.version).toBe(bob.version);
  });

  it("SessionStore, the deprecated name, is a SessionRouter that keeps beginTurn/completeTurn/failTurn", async () => {
    const { db } = await backend.fresh();
    const old = new SessionStore({ db, clock: new ManualClock(NOON) });
    expect(old).toBeInstanceOf(SessionRouter);
    const entry = await old.getOrCreateSession(alice);
    expect(await old.beginTurn(entry.key)).toBe(true);
    expect((await old.getEntry(entry.key))?.turnStartedAt).not.toBeNull();
    expect(await old.completeTurn(entry.key, { lastPromptTokens: 42 })).toBe(true);
    expect(await old.getEntry(entry.key)).toMatchObject({ turnStartedAt: null, lastPromptTokens: 42 });
    expect(await old.beginTurn(entry.key)).toBe(true);
    expect(await old.failTurn(entry.key)).toBe(true);
    expect((await old.getEntry(entry.key))?.turnStartedAt).toBeNull();
    // No turn marked: nothing to fail.
    expect(await old.failTurn(entry.key)).toBe(false);
  });

  it("switchSession (/resume): ends the current with session_switch, reopens the target", async () => {
    const { store, db } = await setup();
    const first = await store.getOrCreateSession(alice);
    const second = (await store.resetSession(first.key))!;
    const back = await store.switchSession(first.key, first.sessionId);
    expect(back?.sessionId).toBe(first.sessionId);
    expect((await db.getSession(first.sessionId))?.endedAt).toBeNull();
    expect((await db.getSession(second.sessionId))?.endReason).toBe("session_switch");
    expect((await store.getOrCreateSession(alice)).sessionId).toBe(first.sessionId);
    expect(await store.switchSession("agent:main:telegram:dm:nobody", first.sessionId)).toBeNull();
    await expect(store.switchSession(first.key, "20990101_000000_deadbeef")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("markResumePending is refused when suspended; clearResumePending says whether it changed anything", async () => {
    const { store } = await setup();
    const entry = await store.getOrCreateSession(alice);
    expect(await store.clearResumePending(entry.key)).toBe(false);
    expect(await store.markResumePending(entry.key, "restart_interrupted")).toBe(true);
    expect(await store.getEntry(entry.key)).toMatchObject({ resumePending: true, resumeReason: "restart_interrupted", lastResumeMarkedAt: NOON });
    expect(await store.clearResumePending(entry.key)).toBe(true);
    expect(await store.suspendSession(entry.key)).toBe(true);
    expect(await store.markResumePending(entry.key, "restart_interrupted")).toBe(false);
    expect(await store.markResumePending("agent:main:telegram:dm:nobody", "x")).toBe(false);
    await expect(store.markResumePending(entry.key, "")).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("updateSession bumps activity and the last prompt size; lookups; hasAnySessions; listSessions(activeMinutes)", async () => {
    const { store, clock } = await setup();
    expect(await store.hasAnySessions()).toBe(false);
    const a = await store.getOrCreateSession(alice);
    clock.advance(3600);
    const b = await store.getOrCreateSession(group("u1"));
    expect(await store.hasAnySessions()).toBe(true);
    expect(await store.updateSession(a.key, { lastPromptTokens: 1234 })).toBe(true);
    expect(await store.getEntry(a.key)).toMatchObject({ lastPromptTokens: 1234, updatedAt: NOON + 3600 });
    expect(await store.updateSession("agent:main:telegram:dm:nobody")).toBe(false);
    expect((await store.lookupBySessionId(b.sessionId))?.key).toBe(b.key);
    expect(await store.lookupBySessionId("20990101_000000_deadbeef")).toBeNull();
    clock.advance(30 * MIN);
    await store.updateSession(b.key);
    clock.advance(10 * MIN);
    expect((await store.listSessions(15)).map((e) => e.key)).toEqual([b.key]);
    expect((await store.listSessions()).map((e) => e.key).sort()).toEqual([a.key, b.key].sort());
  });

  it("token and cost totals of an entry come from its session", async () => {
    const { store, db } = await setup();
    const entry = await store.getOrCreateSession(alice);
    await db.recordUsage(entry.sessionId, { inputTokens: 100, outputTokens: 20, estimatedCostUsd: 0.5 });
    const read = await store.getEntry(entry.key);
    expect(read).toMatchObject({ totalTokens: 120, usage: { inputTokens: 100, outputTokens: 20, estimatedCostUsd: 0.5 } });
  });

  it("suspendRecentlyActive and pruneOldEntries return counts and spare what they must", async () => {
    const active = new Set<string>();
    const { store, clock, db } = await setup({ hasActiveProcesses: (key) => active.has(key) });
    const old1 = await store.getOrCreateSession({ ...alice, chatId: "1" });
    const old2 = await store.getOrCreateSession({ ...alice, chatId: "2" });
    const old3 = await store.getOrCreateSession({ ...alice, chatId: "3" });
    await store.suspendSession(old2.key);
    active.add(old3.key);
    clock.advance(10 * 86_400);
    const recent = await store.getOrCreateSession({ ...alice, chatId: "4" });
    clock.advance(60);
    expect(await store.suspendRecentlyActive()).toBe(1);
    expect(await store.getEntry(recent.key)).toMatchObject({ suspended: false, resumePending: true, resumeReason: "restart_interrupted" });
    expect(await store.pruneOldEntries(7)).toBe(1); // old2 suspended, old3 busy
    expect(await store.getEntry(old1.key)).toBeNull();
    expect(await store.getEntry(old2.key)).not.toBeNull();
    expect(await store.getEntry(old3.key)).not.toBeNull();
    expect(await db.getSession(old1.sessionId)).not.toBeNull(); // history stays
  });

  it("transcript operations: append, load a bounded window, rewrite, rewind", async () => {
    const { store } = await setup();
    const entry = await store.getOrCreateSession(alice);
    for (let i = 1; i <= 3; i++) {
      await store.appendToTranscript(entry.sessionId, { role: "user", content: `q${i}` });
      await store.appendToTranscript(entry.sessionId, { role: "assistant", content: `a${i}` });
    }
    expect((await store.loadTranscript(entry.sessionId)).map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2", "q3", "a3"]);
    expect((await store.loadTranscript(entry.sessionId, { limit: 2 })).map((m) => m.content)).toEqual(["q3", "a3"]);
    const undone = await store.rewindSession(entry.sessionId, 1);
    expect(undone).toMatchObject({ turnsUndone: 1, targetText: "q3" });
    await store.rewriteTranscript(entry.sessionId, [{ role: "user", content: "only" }]);
    expect((await store.loadTranscript(entry.sessionId)).map((m) => m.content)).toEqual(["only"]);
  });

  it("keys and session ids handed in directly are checked", async () => {
    const { store } = await setup();
    for (const key of ["a/b", "..", "C:\\x"]) {
      await expect(store.updateSession(key)).rejects.toBeInstanceOf(InvalidInputError);
    }
    await expect(store.switchSession("agent:main:cli:dm", "../x")).rejects.toBeInstanceOf(InvalidInputError);
    expect(() => new SessionRouter({ db: undefined as never })).toThrow(InvalidInputError);
    const { db } = await backend.fresh();
    expect(() => new SessionRouter({ db, reset: { atHour: 25, mode: "daily" } })).toThrow(/atHour/);
    expect(() => new SessionRouter({ db, resumeFreshnessSeconds: -1 })).toThrow(/resumeFreshnessSeconds/);
  });
});

forEachBackend((backend) => {
  async function setup(options: Partial<SessionRouterOptions> = {}, start = NOON) {
    const { db } = await backend.fresh();
    const clock = new ManualClock(start);
    const store = new SessionRouter({ db, clock, ...options });
    return { db, clock, store };
  }

  it("issue 12 #2: pruneOldEntries with a non-positive age removes nothing (0) or is refused (negative)", async () => {
    const { store, clock } = await setup();
    const a = await store.getOrCreateSession({ ...alice, chatId: "1" });
    clock.advance(60);
    const b = await store.getOrCreateSession({ ...alice, chatId: "2" });
    clock.advance(10 * 86_400);
    expect(await store.pruneOldEntries(0)).toBe(0);
    await expect(store.pruneOldEntries(-1)).rejects.toThrow(/maxAgeDays.*0 prunes nothing/su);
    await expect(store.pruneOldEntries(-1)).rejects.toBeInstanceOf(InvalidInputError);
    expect(await store.getEntry(a.key)).not.toBeNull();
    expect(await store.getEntry(b.key)).not.toBeNull();
    expect(await store.pruneOldEntries(7)).toBe(2);
  });

  it("issue 12 #3: suspendRecentlyActive marks entries touched within the window, this instant included, restart_interrupted; once", async () => {
    const { store, clock } = await setup();
    const old = await store.getOrCreateSession({ ...alice, chatId: "1" });
    clock.advance(3600);
    const earlier = await store.getOrCreateSession({ ...alice, chatId: "2" });
    clock.advance(60);
    const now = await store.getOrCreateSession({ ...alice, chatId: "3" }); // age 0
    const stopped = await store.getOrCreateSession({ ...alice, chatId: "4" });
    await store.suspendSession(stopped.key);
    expect(await store.suspendRecentlyActive()).toBe(2);
    for (const entry of [earlier, now]) {
      expect(await store.getEntry(entry.key)).toMatchObject({
        resumePending: true,
        resumeReason: "restart_interrupted",
        lastResumeMarkedAt: NOON + 3660,
        suspended: false,
      });
    }
    expect(await store.getEntry(old.key)).toMatchObject({ resumePending: false, suspended: false });
    expect(await store.getEntry(stopped.key)).toMatchObject({ resumePending: false, suspended: true });
    expect(await store.suspendRecentlyActive()).toBe(0);
    // A window of 0 still covers an entry touched this very instant.
    clock.advance(5);
    const instant = await store.getOrCreateSession({ ...alice, chatId: "5" });
    expect(await store.suspendRecentlyActive(0)).toBe(1);
    expect((await store.getEntry(instant.key))?.resumeReason).toBe("restart_interrupted");
    // The marked session is kept on its next message (resumed, not reset).
    expect((await store.getOrCreateSession({ ...alice, chatId: "3" })).sessionId).toBe(now.sessionId);
  });

  it("issue 12 #4: listSessions with activeMinutes lists newest first (number or { activeMinutes })", async () => {
    const { store, clock } = await setup();
    const keys: string[] = [];
    // Keys in an order unlike their update order.
    for (const chatId of ["b", "c", "a", "d"]) {
      keys.push((await store.getOrCreateSession({ ...alice, chatId })).key);
      clock.advance(60);
    }
    clock.advance(60);
    await store.updateSession(keys[1]!); // "c" is now the newest
    const newestFirst = [keys[1]!, keys[3]!, keys[2]!, keys[0]!];
    expect((await store.listSessions(60)).map((e) => e.key)).toEqual(newestFirst);
    expect((await store.listSessions({ activeMinutes: 60 })).map((e) => e.key)).toEqual(newestFirst);
    expect((await store.listSessions()).map((e) => e.key)).toEqual(newestFirst);
    expect((await store.listSessions({ activeMinutes: 2 })).map((e) => e.key)).toEqual([keys[1]!, keys[3]!]);
    await expect(store.listSessions({ activeMinutes: -1 })).rejects.toBeInstanceOf(InvalidInputError);
  });

  it("issue 12 #5: lookupBySessionId answers null for empty, malformed and unknown ids", async () => {
    const { store } = await setup();
    const entry = await store.getOrCreateSession(alice);
    for (const id of ["", " ", "nope", "../x", "a/b", "x".repeat(5000), "20990101_000000_deadbeef", "\u0000"]) {
      expect(await store.lookupBySessionId(id)).toBeNull();
    }
    expect(await store.lookupBySessionId(undefined as never)).toBeNull();
    expect(await store.lookupBySessionId(42 as never)).toBeNull();
    expect((await store.lookupBySessionId(entry.sessionId))?.key).toBe(entry.key);
  });

  it("issue 12 #7: a resume-pending session reset by its policy reports the policy's reason; a stale marker alone reports resume_pending_expired", async () => {
    const { store, clock } = await setup({ reset: { mode: "idle", idleMinutes: 60 }, resumeFreshnessSeconds: 7200 });
    const first = await store.getOrCreateSession(alice);
    await store.markResumePending(first.key, "restart_interrupted");
    clock.advance(61 * MIN); // idle fires; the marker (61 min) is still fresh
    const idle = await store.getOrCreateSession(alice);
    expect(idle.sessionId).not.toBe(first.sessionId);
    expect(idle).toMatchObject({ wasAutoReset: true, autoResetReason: "idle", resumePending: false });
    expect(idle.resetNotice?.model).toMatch(/inactive for 1h/u);

    const daily = await setup({ reset: { mode: "daily", atHour: 4 }, resumeFreshnessSeconds: 0 });
    const d1 = await daily.store.getOrCreateSession(alice);
    await daily.store.markResumePending(d1.key, "restart_timeout");
    daily.clock.advance(18 * 3600); // past 04:00 the next day
    expect((await daily.store.getOrCreateSession(alice)).autoResetReason).toBe("daily");

    const stale = await setup({ resumeFreshnessSeconds: 600 });
    const s1 = await stale.store.getOrCreateSession(alice);
    await stale.store.markResumePending(s1.key, "restart_interrupted");
    stale.clock.advance(601);
    expect((await stale.store.getOrCreateSession(alice)).autoResetReason).toBe("resume_pending_expired");
  });
});
