import { expect, it } from "vitest";
import type { Agent, AgentResetInput, AgentTurnResult } from "../../src/agents/agent.js";
import { AgentCache } from "../../src/gateway/agent-cache.js";
import { ManualClock } from "../../src/gateway/clock.js";
import { ExpiryWatcher, MAX_FINALIZE_FAILURES } from "../../src/gateway/expiry-watcher.js";
import type { SessionEntry } from "../../src/gateway/session-entry.js";
import { SessionRouter } from "../../src/gateway/session-router.js";
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
    const store = new SessionRouter({ db, clock, reset: { mode: "idle", idleMinutes: 60 }, hasActiveProcesses: (k) => busy.has(k) });
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
    expect(await store.getEntry(a.key)).toMatchObject({ expiryFinalized: false, finalizeFailures: 1 });
    expect((await watcher.runOnce()).failed).toEqual([a.key]);
    const third = await watcher.runOnce();
    expect(third).toMatchObject({ failed: [], forced: [a.key] });
    expect(attempts).toBe(3);
    expect(errors).toEqual([1, 2, 3]);
    expect(await store.getEntry(a.key)).toMatchObject({ expiryFinalized: true, finalizeFailures: 0 });
    await watcher.runOnce();
    expect(attempts).toBe(3);
  });

  it("a hook that recovers finalises normally", async () => {
    const { store, clock } = await setup();
    const a = await store.getOrCreateSession(src("1"));
    let fail = true;
    const watcher = new ExpiryWatcher({
      store,
      onSessionFinalize: [
        () => {
          if (fail) throw new Error("flaky");
        },
      ],
    });
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
    await store.startTurn(a.key);
    busy.add(b.key);
    clock.advance(2 * 3600);
    const watcher = new ExpiryWatcher({ store });
    expect((await watcher.runOnce()).finalized).toEqual([]);
    busy.clear();
    await store.finishTurn(a.key, { outcome: "ok" });
    clock.advance(2 * 3600);
    expect((await watcher.runOnce()).finalized.sort()).toEqual([a.key, b.key].sort());
  });

  it("policy none never expires; hourly pruning of old entries when sessionStoreMaxAgeDays > 0", async () => {
    const { db } = await backend.fresh();
    const clock = new ManualClock(T0);
    const store = new SessionRouter({ db, clock });
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

  /** An agent whose `beforeReset` runs `hook` (and records what it was given). */
  function resetAgent(hook: ((input: AgentResetInput) => Promise<AgentTurnResult | null>) | null) {
    const seen: AgentResetInput[] = [];
    const agent: Agent = {
      name: "saver",
      async runTurn() {
        throw new Error("no model turn expected");
      },
    };
    if (hook !== null) {
      agent.beforeReset = (input) => {
        seen.push(input);
        return hook(input);
      };
    }
    return { agent, seen };
  }

  it("before an automatic reset the agent gets one turn on the expiring transcript; its output is stored in the old session", async () => {
    const { store, clock, db } = await setup();
    const a = await store.getOrCreateSession(src("1"));
    await db.appendTurn(a.sessionId, [
      { role: "user", content: "my cat is called Miso" },
      { role: "assistant", content: "Noted: Miso." },
    ]);
    const saved: string[] = [];
    const { agent, seen } = resetAgent(async () => {
      saved.push("cat=Miso");
      return {
        messages: [
          { role: "user", content: "[System note: the session is about to be reset; save what matters.]" },
          {
            role: "assistant",
            content: null,
            toolCalls: [{ id: "s1", type: "function", function: { name: "memory_save", arguments: '{"fact":"cat=Miso"}' } }],
          },
          { role: "tool", toolCallId: "s1", toolName: "memory_save", content: "saved" },
          { role: "assistant", content: "Saved the cat's name." },
        ],
        usage: { inputTokens: 50, outputTokens: 7, apiCalls: 2 },
      };
    });
    const order: string[] = [];
    const watcher = new ExpiryWatcher({
      store,
      beforeReset: {
        agentFor: (entry) => {
          order.push(`agent:${entry.sessionId}`);
          return agent;
        },
      },
      onSessionFinalize: [(entry) => void order.push(`finalize:${entry.sessionId}`)],
    });
    clock.advance(61 * 60);
    expect((await watcher.runOnce()).finalized).toEqual([a.key]);
    expect(order).toEqual([`agent:${a.sessionId}`, `finalize:${a.sessionId}`]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ sessionId: a.sessionId, reason: "idle" });
    expect(seen[0]!.transcript.map((m) => [m.role, m.content])).toEqual([
      ["user", "my cat is called Miso"],
      ["assistant", "Noted: Miso."],
    ]);
    expect(saved).toEqual(["cat=Miso"]);
    expect((await db.getMessages(a.sessionId)).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant"]);
    expect((await db.getSession(a.sessionId))?.usage).toMatchObject({ inputTokens: 50, outputTokens: 7 });
    // Once only; the next message resets: the old session ends holding what the agent saved.
    clock.advance(60);
    await watcher.runOnce();
    expect(seen).toHaveLength(1);
    const next = await store.getOrCreateSession(src("1"));
    expect(next.sessionId).not.toBe(a.sessionId);
    expect((await db.getMessages(a.sessionId)).at(-1)?.content).toBe("Saved the cat's name.");
    expect((await db.getSession(a.sessionId))?.endedAt).not.toBeNull();
  });

  it("agents without the hook, hooks that return nothing and empty sessions store nothing and still reset", async () => {
    const { store, clock, db } = await setup();
    const a = await store.getOrCreateSession(src("1"));
    await db.appendTurn(a.sessionId, [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    const b = await store.getOrCreateSession(src("2"));
    await db.appendTurn(b.sessionId, [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    const empty = await store.getOrCreateSession(src("3"));
    const without = resetAgent(null);
    const nothing = resetAgent(async () => null);
    const watcher = new ExpiryWatcher({
      store,
      beforeReset: { agentFor: (entry) => (entry.key === a.key ? without.agent : nothing.agent) },
    });
    clock.advance(61 * 60);
    expect((await watcher.runOnce()).finalized.sort()).toEqual([a.key, b.key, empty.key].sort());
    expect(nothing.seen.map((input) => input.sessionId)).toEqual([b.sessionId]); // not the empty session
    expect(await db.getMessages(a.sessionId)).toHaveLength(2);
    expect(await db.getMessages(b.sessionId)).toHaveLength(2);
  });

  it("a failing or timed-out hook is reported and the session is finalised anyway", async () => {
    const { store, clock, db } = await setup();
    const a = await store.getOrCreateSession(src("1"));
    const b = await store.getOrCreateSession(src("2"));
    for (const entry of [a, b])
      await db.appendTurn(entry.sessionId, [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ]);
    const failing = resetAgent(async () => {
      throw new Error("memory store down");
    });
    let aborted: AbortSignal | null = null;
    const hanging = resetAgent((input) => {
      aborted = input.signal;
      return new Promise<never>(() => {}); // ignores its signal and never settles
    });
    const errors: Array<[string, string]> = [];
    const finalizeErrors: unknown[] = [];
    const watcher = new ExpiryWatcher({
      store,
      beforeReset: {
        agentFor: (entry) => (entry.key === a.key ? failing.agent : hanging.agent),
        timeoutSeconds: 0.2,
        onError: (error, entry) => void errors.push([entry.key, (error as Error).message]),
      },
      onError: (error) => void finalizeErrors.push(error),
    });
    clock.advance(61 * 60);
    const pass = await watcher.runOnce();
    expect(pass).toMatchObject({ failed: [], forced: [] });
    expect(pass.finalized.sort()).toEqual([a.key, b.key].sort());
    expect(errors.sort()).toEqual(
      [
        [a.key, "memory store down"],
        [b.key, expect.stringContaining("took longer than 0.2 s")],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect(aborted!.aborted).toBe(true);
    expect(finalizeErrors).toEqual([]);
    expect(await db.getMessages(b.sessionId)).toHaveLength(2);
    expect(() => new ExpiryWatcher({ store, beforeReset: { agentFor: () => failing.agent, timeoutSeconds: 0 } })).toThrow(/timeoutSeconds/);
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
