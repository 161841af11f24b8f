import { expect, it } from "vitest";
import { AgentCache } from "../../src/gateway/agent-cache.js";
import { ManualClock } from "../../src/gateway/clock.js";
import { ExpiryWatcher, MAX_FINALIZE_FAILURES } from "../../src/gateway/expiry-watcher.js";
import type { SessionEntry } from "../../src/gateway/session-entry.js";
import { SessionStore } from "../../src/gateway/session-store.js";
import type { SessionSource } from "../../src/gateway/session-source.js";
import { InvalidInputError } from "../../src/store/errors.js";
import { forEachBackend } from "./backends.js";

const T0 = 1_900_000_000;
const src = (chatId: string): SessionSource => ({ platform: "telegram", chatType: "dm", chatId, userId: chatId });

forEachBackend((backend) => {
  async function setup(extra: { busy?: Set<string> } = {}) {
    const { db } = await backend.fresh();
    const clock = new ManualClock(T0);
    const busy = extra.busy ?? new Set<string>();
    const store = new SessionStore({ db, clock, reset: { mode: "idle", idleMinutes: 60 }, hasActiveProcesses: (k) => busy.has(k) });
    const disposed: string[] = [];
    const cache = new AgentCache<{ name: string }>({ clock, dispose: (_agent, key) => void disposed.push(key) });
    return { db, clock, store, cache, disposed, busy };
  }

  it("finalises each expired session once: hooks run, the cached agent is released, expiryFinalized is set", async () => {
    const { store, clock, cache, disposed } = await setup();
    const a = await store.getOrCreateSession(src("1"));
    clock.advance(30 * 60);
    const b = await store.getOrCreateSession(src("2"));
    cache.set(a.key, { name: "agent-a" });
    cache.set(b.key, { name: "agent-b" });
    const calls: string[] = [];
    const watcher = new ExpiryWatcher({ store, agentCache: cache, onSessionFinalize: [(e: SessionEntry) => void calls.push(e.sessionId)] });
    clock.advance(31 * 60); // a: 61 min idle, b: 31 min
    expect(await watcher.runOnce()).toEqual({ finalized: [a.key], failed: [], forced: [], pruned: 0 });
    expect(calls).toEqual([a.sessionId]);
    expect(disposed).toEqual([a.key]);
    expect(cache.has(b.key)).toBe(true);
    expect((await store.getEntry(a.key))?.expiryFinalized).toBe(true);
    // Once only.
    clock.advance(60);
    expect((await watcher.runOnce()).finalized).toEqual([]);
    expect(calls).toHaveLength(1);
    // The next message resets the session; the new one can expire again later.
    const next = await store.getOrCreateSession(src("1"));
    expect(next.sessionId).not.toBe(a.sessionId);
    expect(next.expiryFinalized).toBe(false);
  });

  it(`a failing hook is retried on the next passes and force-finalised after ${MAX_FINALIZE_FAILURES} failures`, async () => {
    const { store, clock } = await setup();
    const a = await store.getOrCreateSession(src("1"));
    let attempts = 0;
    const errors: number[] = [];
    const watcher = new ExpiryWatcher({
      store,
      onSessionFinalize: [
        () => {
          attempts += 1;
          throw new Error("summary service down");
        },
      ],
      onError: (_e, _entry, attempt) => void errors.push(attempt),
    });
    clock.advance(2 * 3600);
    expect((await watcher.runOnce()).failed).toEqual([a.key]);
    expect((await store.getEntry(a.key))).toMatchObject({ expiryFinalized: false, finalizeFailures: 1 });
    expect((await watcher.runOnce()).failed).toEqual([a.key]);
    const third = await watcher.runOnce();
    expect(third).toMatchObject({ failed: [], forced: [a.key] });
    expect(attempts).toBe(3);
    expect(errors).toEqual([1, 2, 3]);
    expect((await store.getEntry(a.key))).toMatchObject({ expiryFinalized: true, finalizeFailures: 0 });
    await watcher.runOnce();
    expect(attempts).toBe(3);
  });

  it("a hook that recovers finalises normally", async () => {
    const { store, clock } = await setup();
    const a = await store.getOrCreateSession(src("1"));
    let fail = true;
    const watcher = new ExpiryWatcher({ store, onSessionFinalize: [() => { if (fail) throw new Error("flaky"); }] });
    clock.advance(2 * 3600);
    expect((await watcher.runOnce()).failed).toEqual([a.key]);
    fail = false;
    expect((await watcher.runOnce()).finalized).toEqual([a.key]);
  });

  it("sessions mid-turn or with active background processes are not finalised", async () => {
    const busy = new Set<string>();
    const { store, clock } = await setup({ busy });
    const a = await store.getOrCreateSession(src("1"));
    const b = await store.getOrCreateSession(src("2"));
    await store.beginTurn(a.key);
    busy.add(b.key);
    clock.advance(2 * 3600);
    const watcher = new ExpiryWatcher({ store });
    expect((await watcher.runOnce()).finalized).toEqual([]);
    busy.clear();
    await store.completeTurn(a.key);
    clock.advance(2 * 3600);
    expect((await watcher.runOnce()).finalized.sort()).toEqual([a.key, b.key].sort());
  });

  it("policy none never expires; hourly pruning of old entries when sessionStoreMaxAgeDays > 0", async () => {
    const { db } = await backend.fresh();
    const clock = new ManualClock(T0);
    const store = new SessionStore({ db, clock });
    const old = await store.getOrCreateSession(src("1"));
    clock.advance(10 * 86_400 + 600);
    const recent = await store.getOrCreateSession(src("2"));
    clock.set(T0 + 40 * 86_400); // old: 40 days idle; recent: 30 days minus 600 s
    const watcher = new ExpiryWatcher({ store, sessionStoreMaxAgeDays: 30 });
    expect(await watcher.runOnce()).toEqual({ finalized: [], failed: [], forced: [], pruned: 1 });
    expect(await store.getEntry(old.key)).toBeNull();
    clock.advance(1800); // recent is now over 30 days idle, but the last prune was within the hour
    expect((await watcher.runOnce()).pruned).toBe(0);
    clock.advance(1800);
    expect((await watcher.runOnce()).pruned).toBe(1);
    expect(await store.getEntry(recent.key)).toBeNull();
    const off = new ExpiryWatcher({ store });
    await store.getOrCreateSession(src("3"));
    clock.advance(400 * 86_400);
    expect((await off.runOnce()).pruned).toBe(0);
  });

  it("start/stop schedule passes; options are validated", async () => {
    const { store } = await setup();
    const watcher = new ExpiryWatcher({ store, intervalSeconds: 300 });
    expect(watcher.running).toBe(false);
    watcher.start();
    expect(watcher.running).toBe(true);
    await watcher.stop();
    expect(watcher.running).toBe(false);
    expect(() => new ExpiryWatcher({ store, intervalSeconds: 0 })).toThrow(InvalidInputError);
    expect(() => new ExpiryWatcher({ store, sessionStoreMaxAgeDays: -1 })).toThrow(/sessionStoreMaxAgeDays/);
  });
});
