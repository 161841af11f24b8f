import { closeSync, openSync, readSync, renameSync, statSync } from "node:fs";
import { endianness } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { walDatabases } from "./wal-database.js";
import { WalCheckpointer } from "../../../src/store/sqlite/sqlite-checkpointer.js";
import { waitFor } from "../../support/wait-for.js";

/** Frames in a database's WAL: `mxFrame` of the wal-index header (offset 16 of the -shm file, this machine's byte order). */
function walFrames(path: string): number {
  const buffer = Buffer.alloc(4);
  const fd = openSync(`${path}-shm`, "r");
  try {
    readSync(fd, buffer, 0, 4, 16);
  } finally {
    closeSync(fd);
  }
  return endianness() === "LE" ? buffer.readUInt32LE(0) : buffer.readUInt32BE(0);
}

describe("sqlite: WAL checkpoints on a worker thread (WalCheckpointer)", () => {
  const databases = walDatabases("tl-checkpointer-");
  const dir = databases.dir;
  afterAll(() => databases.remove());

  it("turns the connection's automatic checkpoint off and checkpoints on the worker once enough pages accumulate", async () => {
    const { path, db } = databases.open("worker.db");
    const checkpointer = new WalCheckpointer(db, 50);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    const sizeBefore = statSync(path).size;
    for (let i = 0; i < 200; i++) {
      db.transaction(() => insert.run("x".repeat(4000)))();
      checkpointer.afterCommit();
    }
    // The pages reached the database file without this thread running a checkpoint.
    await waitFor(() => checkpointer.completed >= 1, { what: "a checkpoint on the worker" });
    await waitFor(() => statSync(path).size > sizeBefore, { what: "the database file to grow" });
    // The WAL restarts at the next write after a checkpoint that caught up: it stays short.
    await waitFor(
      () => {
        db.transaction(() => insert.run("y"))();
        checkpointer.afterCommit();
        return walFrames(path) < 200;
      },
      { what: "the WAL to restart" },
    );
    await checkpointer.close();
    expect(db.prepare("SELECT count(*) FROM t WHERE x <> 'y'").pluck().get()).toBe(200);
    db.close();
  });

  it("gives the connection its automatic checkpoint back when the worker cannot checkpoint", async () => {
    const { path, db } = databases.open("fallback.db");
    const checkpointer = new WalCheckpointer(db, 20);
    // The worker opens the file by name: a file that has moved away cannot be opened.
    renameSync(path, `${path}.moved`);
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 60; i++) {
      db.transaction(() => insert.run("x".repeat(4000)))();
      checkpointer.afterCommit();
    }
    await waitFor(() => db.pragma("wal_autocheckpoint", { simple: true }) === 20, { what: "the automatic checkpoint restored" });
    await checkpointer.close();
    db.close();
  });

  it("through the store: the WAL stays short over a long run of appends while the store stays open", async () => {
    const path = join(dir, "store.db");
    const store = await openSessionDB(path, { synchronous: "NORMAL" });
    try {
      const session = await store.createSession({ source: "cli" });
      let longest = 0;
      // About 9,000 WAL pages in all: unchecked, the WAL would hold them all.
      for (let i = 0; i < 1500; i++) {
        await store.appendMessage(session.id, { role: "user", content: `${i} ${"z".repeat(3000)}` });
        longest = Math.max(longest, walFrames(path));
      }
      expect(longest).toBeGreaterThan(0);
      expect(longest).toBeLessThan(6000);
      expect((await store.getSession(session.id))?.messageCount).toBe(1500);
    } finally {
      await store.close();
    }
  });
});
