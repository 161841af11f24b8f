import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/gateway/clock.js";
import { InboundBuffer } from "../../src/gateway/inbound-buffer.js";
import { GatewayRecovery, STUCK_LOOP_THRESHOLD } from "../../src/gateway/recovery.js";
import { SessionRouter } from "../../src/gateway/session-router.js";
import type { SessionSource } from "../../src/gateway/session-source.js";
import type { SessionDB } from "../../src/store/contract.js";
import { forEachBackend, type TestDatabase } from "./backends.js";

const T0 = 1_900_000_000;
const alice: SessionSource = { platform: "telegram", chatType: "dm", chatId: "42", userId: "42" };
const bob: SessionSource = { platform: "telegram", chatType: "dm", chatId: "43", userId: "43" };
const LIFE = fileURLToPath(new URL("./fixtures/gateway-life.ts", import.meta.url));

interface LifeOutput {
  report: { cleanShutdown: boolean; bootLoop: boolean; interrupted: string[]; suspended: string[]; markedForResume: string[]; autoResume: string[] };
  entry: { sessionId: string; suspended: boolean };
  exitSignal: NodeJS.Signals | null;
}

/** Runs one gateway lifetime in a child process. */
function runLife(target: TestDatabase["target"], mode: "crash" | "drain-timeout" | "clean", at: number): Promise<LifeOutput> {
  const options = target.schema === undefined ? {} : { schema: target.schema, poolSize: 2 };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", LIFE, target.url, JSON.stringify(options), mode, String(at)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const lines = out.trim().split("\n");
      if (lines.length < 2 || (code !== 0 && signal !== "SIGKILL")) {
        reject(new Error(`gateway lifetime (${mode}) failed: code ${code} signal ${signal}\n${err}\n${out}`));
        return;
      }
      resolve({ report: JSON.parse(lines[0]!), entry: JSON.parse(lines[1]!), exitSignal: signal });
    });
  });
}

forEachBackend((backend) => {
  async function lifetime(db: SessionDB, clock: ManualClock) {
    const store = new SessionRouter({ db, clock });
    return { store, recovery: new GatewayRecovery(store) };
  }

  it("crash: mid-turn keys and recently active keys are marked restart_interrupted and listed for auto-resume", async () => {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(T0);
    const first = await lifetime(db, clock);
    const boot1 = await first.recovery.startup();
    expect(boot1).toMatchObject({ cleanShutdown: false, interrupted: [], autoResume: [] });
    const a = await first.store.getOrCreateSession(alice);
    await first.store.startTurn(a.key);
    await first.store.finishTurn(a.key, { outcome: "ok" });
    const b = await first.store.getOrCreateSession(bob);
    await first.store.startTurn(b.key);
    // Crash: no shutdown(). The next process starts 30 s later.
    clock.advance(30);
    const second = await lifetime(await reopen(), clock);
    const boot2 = await second.recovery.startup();
    expect(boot2.cleanShutdown).toBe(false);
    expect(boot2.interrupted).toEqual([b.key]);
    expect(boot2.markedForResume).toEqual([a.key]);
    expect(boot2.autoResume.map((e) => e.key).sort()).toEqual([a.key, b.key].sort());
    expect(await second.store.getEntry(b.key)).toMatchObject({
      resumePending: true,
      resumeReason: "restart_interrupted",
      interruptedRestarts: 1,
      turnStartedAt: null,
    });
    expect(await second.store.getEntry(a.key)).toMatchObject({ resumePending: true, resumeReason: "restart_interrupted", interruptedRestarts: 0 });
    // The next message resumes the same session; a successful turn clears the flag and the count.
    const resumed = await second.store.getOrCreateSession(bob);
    expect(resumed.sessionId).toBe(b.sessionId);
    await second.store.startTurn(b.key);
    await second.store.finishTurn(b.key, { outcome: "ok" });
    expect(await second.store.getEntry(b.key)).toMatchObject({ resumePending: false, interruptedRestarts: 0 });
  });

  it("clean shutdown: the marker is found and removed; a crash after the start is seen as one", async () => {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(T0);
    const first = await lifetime(db, clock);
    await first.recovery.startup();
    const a = await first.store.getOrCreateSession(alice);
    await first.store.startTurn(a.key);
    await first.store.finishTurn(a.key, { outcome: "ok" });
    expect(await first.recovery.shutdown({ restarting: true })).toEqual([]);
    clock.advance(10);
    const second = await lifetime(await reopen(), clock);
    const boot = await second.recovery.startup();
    expect(boot).toMatchObject({ cleanShutdown: true, markedForResume: [], interrupted: [], autoResume: [] });
    expect(await second.store.getEntry(a.key)).toMatchObject({ resumePending: false });
    // The marker was consumed: a crash after this start is seen as one.
    clock.advance(10);
    const third = await lifetime(await reopen(), clock);
    expect((await third.recovery.startup()).cleanShutdown).toBe(false);
  });

  it("a shutdown that catches a turn at the drain timeout marks it and writes no clean-shutdown marker", async () => {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(T0);
    const first = await lifetime(db, clock);
    await first.recovery.startup();
    const a = await first.store.getOrCreateSession(alice);
    const b = await first.store.getOrCreateSession(bob);
    await first.store.startTurn(b.key);
    expect(await first.recovery.shutdown({ restarting: true })).toEqual([b.key]);
    expect(await first.store.getEntry(b.key)).toMatchObject({ resumePending: true, resumeReason: "restart_timeout" });
    clock.advance(10);
    const second = await lifetime(await reopen(), clock);
    const boot = await second.recovery.startup();
    // The cut-off turn makes this an unclean stop: the next start handles it as interrupted.
    expect(boot.cleanShutdown).toBe(false);
    expect(boot.interrupted).toEqual([b.key]);
    expect(boot.autoResume.map((e) => e.key)).toContain(b.key);
    expect(await second.store.getEntry(b.key)).toMatchObject({ resumeReason: "restart_timeout", interruptedRestarts: 1, turnStartedAt: null });
    // A stop (not a restart) marks shutdown_timeout, and writes no marker either.
    await second.store.startTurn(a.key);
    expect(await second.recovery.shutdown()).toEqual([a.key]);
    expect((await second.store.getEntry(a.key))?.resumeReason).toBe("shutdown_timeout");
    clock.advance(10);
    const third = await lifetime(await reopen(), clock);
    expect((await third.recovery.startup()).cleanShutdown).toBe(false);
  });

  it("auto-resume skips stale markers, reasons that are not resumable and suspended keys", async () => {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(T0);
    const first = await lifetime(db, clock);
    await first.recovery.startup();
    const a = await first.store.getOrCreateSession(alice);
    const b = await first.store.getOrCreateSession(bob);
    const c = await first.store.getOrCreateSession({ ...bob, chatId: "44" });
    await first.store.markResumePending(a.key, "restart_interrupted");
    await first.store.markResumePending(b.key, "user_asked");
    await first.store.markResumePending(c.key, "restart_timeout");
    await first.store.suspendSession(c.key);
    await first.recovery.shutdown();
    clock.advance(3601);
    const late = await lifetime(await reopen(), clock);
    expect((await late.recovery.startup()).autoResume).toEqual([]);
  });

  it("restart-loop breaker: the third boot within 60 s skips auto-resume", async () => {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(T0);
    const first = await lifetime(db, clock);
    await first.recovery.startup();
    const a = await first.store.getOrCreateSession(alice);
    await first.store.startTurn(a.key);
    clock.advance(20);
    const second = await lifetime(await reopen(), clock);
    const boot2 = await second.recovery.startup();
    expect(boot2.bootLoop).toBe(false);
    expect(boot2.autoResume.map((e) => e.key)).toEqual([a.key]);
    clock.advance(20);
    const third = await lifetime(await reopen(), clock);
    const boot3 = await third.recovery.startup();
    expect(boot3.bootLoop).toBe(true);
    expect(boot3.autoResume).toEqual([]);
    // The resume marker is still there for the next message; only the automatic resume was skipped.
    expect((await third.store.getEntry(a.key))?.resumePending).toBe(true);
    clock.advance(61);
    const fourth = await lifetime(await reopen(), clock);
    expect((await fourth.recovery.startup()).bootLoop).toBe(false);
  });

  it("a successful turn clears the stuck-loop count", async () => {
    const { db, reopen } = await backend.fresh();
    const clock = new ManualClock(T0);
    let life = await lifetime(db, clock);
    await life.recovery.startup();
    const a = await life.store.getOrCreateSession(alice);
    for (let restart = 1; restart <= 2; restart++) {
      await life.store.startTurn(a.key);
      clock.advance(100);
      life = await lifetime(await reopen(), clock);
      await life.recovery.startup();
      expect((await life.store.getEntry(a.key))?.interruptedRestarts).toBe(restart);
    }
    await life.store.startTurn(a.key);
    await life.store.finishTurn(a.key, { outcome: "ok" });
    await life.store.startTurn(a.key);
    clock.advance(100);
    life = await lifetime(await reopen(), clock);
    const boot = await life.recovery.startup();
    expect(boot.suspended).toEqual([]);
    expect((await life.store.getEntry(a.key))?.interruptedRestarts).toBe(1);
  });

  it(`stuck-loop guard across real process restarts: the ${STUCK_LOOP_THRESHOLD}rd restart that catches the session mid-turn suspends it`, async () => {
    const { target } = await backend.fresh();
    const crash1 = await runLife(target, "crash", T0);
    expect(crash1.exitSignal).toBe("SIGKILL");
    const crash2 = await runLife(target, "crash", T0 + 100);
    expect(crash2.report.interrupted).toHaveLength(1);
    expect(crash2.report.suspended).toEqual([]);
    expect(crash2.entry.sessionId).toBe(crash1.entry.sessionId); // resumed
    // A clean restart that still catches the turn (drain timeout) counts too.
    const drained = await runLife(target, "drain-timeout", T0 + 200);
    expect(drained.exitSignal).toBeNull();
    expect(drained.report.suspended).toEqual([]);
    expect(drained.entry.sessionId).toBe(crash1.entry.sessionId);
    const fourth = await runLife(target, "clean", T0 + 300);
    // The drain timeout cut a turn off: that stop was not clean (no marker).
    expect(fourth.report.cleanShutdown).toBe(false);
    expect(fourth.report.interrupted).toHaveLength(1);
    expect(fourth.report.suspended).toEqual(fourth.report.interrupted);
    expect(fourth.report.autoResume).toEqual([]);
    // The user gets a clean slate: a new session.
    expect(fourth.entry.sessionId).not.toBe(crash1.entry.sessionId);
    expect(fourth.entry.suspended).toBe(false);
    // The fourth lifetime completed its turn before shutting down: that stop was clean.
    const fifth = await runLife(target, "clean", T0 + 400);
    expect(fifth.report).toMatchObject({ cleanShutdown: true, interrupted: [], suspended: [] });
  }, 60_000);
});

describe("InboundBuffer", () => {
  it("holds messages during the restore and releases them in order, then passes later ones straight through", async () => {
    const buffer = new InboundBuffer<string>();
    const seen: string[] = [];
    const deliver = async (m: string): Promise<string> => {
      seen.push(m);
      if (m === "b") void buffer.push("late-during-release", deliver);
      return `ack:${m}`;
    };
    const acks = [buffer.push("a", deliver), buffer.push("b", deliver), buffer.push("c", deliver)];
    await Promise.resolve();
    expect(seen).toEqual([]);
    expect(buffer.size).toBe(3);
    await buffer.release();
    expect(await Promise.all(acks)).toEqual(["ack:a", "ack:b", "ack:c"]);
    expect(seen).toEqual(["a", "b", "c", "late-during-release"]);
    expect(buffer.released).toBe(true);
    expect(await buffer.push("d", deliver)).toBe("ack:d");
    expect(seen.at(-1)).toBe("d");
    await buffer.release(); // idempotent
    expect(seen).toHaveLength(5);
  });
});
