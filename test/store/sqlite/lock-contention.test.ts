import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB, StoreBusyError } from "../../../src/index.js";
import { SqliteSessionDB } from "../../../src/store/sqlite/index.js";
import { waitFor } from "../../support/wait-for.js";

describe("sqlite: a peer holding the write lock", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-lock-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("waits (retrying with back-off) while the lock is held for less than lockTimeoutMs", async () => {
    const path = join(dir, "wait.db");
    const db = await openSessionDB(path); // busy timeout 50 ms, lock timeout 30 s
    const s = await db.createSession({ source: "cli" });
    const peer = new Database(path, { timeout: 0 });
    peer.exec("BEGIN IMMEDIATE");
    const held = setTimeout(() => peer.exec("COMMIT"), 400); // far longer than SQLite's busy timeout
    const started = Date.now();
    const id = await db.appendMessage(s.id, { role: "user", content: "after the lock" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect((await db.getMessages(s.id)).map((m) => m.id)).toEqual([id]);
    clearTimeout(held);
    peer.close();
    await db.close();
  });

  it("with busyTimeoutMs 0 the wait never blocks the thread: timers keep running, and the write lands once the peer commits", async () => {
    const path = join(dir, "no-block.db");
    const db = await SqliteSessionDB.open({ path, busyTimeoutMs: 0 });
    const s = await db.createSession({ source: "cli" });
    const peer = new Database(path, { timeout: 0 });
    peer.exec("BEGIN IMMEDIATE");
    let landed = false;
    const append = db.appendMessage(s.id, { role: "user", content: "after the lock" }).then((id) => {
      landed = true;
      return id;
    });
    // Several of waitFor's timer-driven probes run while the write waits for the lock.
    let probes = 0;
    await waitFor(() => ++probes >= 4, { what: "four probes while the write waits" });
    expect(landed).toBe(false);
    peer.exec("COMMIT");
    const id = await append;
    expect((await db.getMessages(s.id)).map((m) => m.id)).toEqual([id]);
    peer.close();
    await db.close();
  });

  it("fails with StoreBusyError, writing nothing, once the lock is held past lockTimeoutMs", async () => {
    const path = join(dir, "busy.db");
    const setup = await openSessionDB(path);
    const s = await setup.createSession({ source: "cli" });
    await setup.close();
    const db = await openSessionDB(path, { lockTimeoutMs: 200 });
    const peer = new Database(path, { timeout: 0 });
    peer.exec("BEGIN IMMEDIATE");
    const error = await db.appendMessage(s.id, { role: "user", content: "never" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreBusyError);
    expect((error as Error).message).toMatch(/lock/);
    peer.exec("COMMIT");
    peer.close();
    expect(await db.getMessages(s.id)).toEqual([]);
    await db.close();
  });
});
