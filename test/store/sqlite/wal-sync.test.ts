import { unlinkSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB, StoreError } from "../../../src/index.js";
import { walDatabases } from "./wal-database.js";
import { WalSync } from "../../../src/store/sqlite/sqlite-wal-sync.js";

describe("sqlite: WAL flushes off the event loop (WalSync)", () => {
  const databases = walDatabases("tl-walsync-");
  const dir = databases.dir;
  afterAll(() => databases.remove());

  it("flushes a lone commit at once, on the calling thread", async () => {
    const { path, db } = databases.open("alone.db");
    const sync = new WalSync(path);
    const outcomes: unknown[] = [];
    sync.afterCommit((error) => outcomes.push(error), true);
    expect(outcomes).toEqual([null]);
    await sync.close();
    db.close();
  });

  it("covers commits that arrive while a flush runs with the next flush, each reported once, in order", async () => {
    const { path, db } = databases.open("grouped.db");
    const sync = new WalSync(path);
    const outcomes: Array<[number, unknown]> = [];
    for (let i = 0; i < 50; i++) {
      db.prepare("INSERT INTO t VALUES (?)").run(i);
      // Not alone: the flush goes to the thread pool, so nothing is reported yet.
      sync.afterCommit((error) => outcomes.push([i, error]), false);
    }
    expect(outcomes).toEqual([]);
    // While a flush runs, even a lone commit waits for the next one instead of flushing inline.
    sync.afterCommit((error) => outcomes.push([50, error]), true);
    expect(outcomes).toEqual([]);
    await sync.settled();
    expect(outcomes.map(([i]) => i)).toEqual([...Array(51).keys()]);
    expect(outcomes.every(([, error]) => error === null)).toBe(true);
    await sync.flush();
    await sync.close();
    db.close();
  });

  it("reports a failed flush to every commit it covered", async () => {
    const sync = new WalSync(join(dir, "never-created.db"));
    const outcomes: unknown[] = [];
    sync.afterCommit((error) => outcomes.push(error), false);
    sync.afterCommit((error) => outcomes.push(error), false);
    await sync.settled();
    expect(outcomes).toHaveLength(2);
    for (const error of outcomes) expect((error as NodeJS.ErrnoException).code).toBe("ENOENT");
    await expect(sync.flush()).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a store at synchronous FULL: concurrent writes all resolve committed, and close waits for their flush", async () => {
    const path = join(dir, "store.db");
    const db = await openSessionDB(path);
    const session = await db.createSession({ source: "cli" });
    const writes = Array.from({ length: 200 }, (_, i) => db.appendMessage(session.id, { role: "user", content: `m${i}` }));
    const ids = await Promise.all(writes);
    expect(new Set(ids).size).toBe(200);
    // Another connection sees every resolved write.
    const other = new Database(path, { readonly: true });
    expect(other.prepare("SELECT count(*) AS n FROM messages WHERE session_id = ?").get(session.id)).toEqual({ n: 200 });
    other.close();
    void db.appendMessage(session.id, { role: "user", content: "last" });
    await db.close();
    const again = await openSessionDB(path);
    expect((await again.getMessages(session.id)).map((m) => m.content).at(-1)).toBe("last");
    await again.close();
  });

  it("a store whose WAL cannot be flushed rejects the write with a StoreError that says so", async () => {
    const path = join(dir, "lost-wal.db");
    const db = await openSessionDB(path);
    // The WAL is removed behind SQLite's back before the first flush opens it. Two writes in
    // one tick form a batch of two, flushed on the thread pool.
    unlinkSync(`${path}-wal`);
    const results = await Promise.allSettled([db.createSession({ source: "cli" }), db.createSession({ source: "cli" })]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      const error = (result as PromiseRejectedResult).reason as Error;
      expect(error).toBeInstanceOf(StoreError);
      expect(error.message).toMatch(/committed but flushing .*-wal to disk failed/);
      expect(error.message).toMatch(/power failure/);
    }
    await db.close().catch(() => {});
  });
});
