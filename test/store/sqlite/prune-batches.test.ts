/**
 * SQLite: a prune runs as batches of bounded write transactions (other writers get in
 * between), and gives space back with incremental auto-vacuum on files that have it.
 */
import Database from "better-sqlite3";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB, type NewMessage, type SessionDB } from "../../../src/index.js";

const DAY = 86_400;
const NOW = 1_800_000_000;
const OLD = NOW - 100 * DAY;

/** `count` old ended sessions of `perSession` messages (about 1 KB each), enough for a prune of many batches. */
async function seedOld(db: SessionDB, count: number, perSession: number): Promise<void> {
  const body = "lorem ipsum dolor sit amet ".repeat(40);
  for (let i = 0; i < count; i++) {
    const id = `old-${String(i).padStart(3, "0")}`;
    await db.createSession({ id, source: "cli", startedAt: OLD + i });
    const messages: NewMessage[] = Array.from({ length: perSession }, (_v, j) => ({ role: "user", content: `${id} ${j} ${body}`, timestamp: OLD + i + 1 }));
    await db.appendTurn(id, messages);
    await db.endSession(id, "done", { endedAt: OLD + i + 2 });
  }
}

/** What `pragma` says on a connection of our own (not the store's). */
function pragma(path: string, name: string): number {
  const raw = new Database(path, { readonly: true });
  try {
    return raw.pragma(name, { simple: true }) as number;
  } finally {
    raw.close();
  }
}

describe("sqlite: batched prune and incremental vacuum", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-prune-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("another writer's append commits between the batches of one large prune", async () => {
    const path = join(dir, "interleave.db");
    const db = await openSessionDB(path);
    await seedOld(db, 12, 1000);
    const live = await db.createSession({ source: "gateway" });
    const watcher = new Database(path, { readonly: true });
    const prunable = watcher.prepare("SELECT count(*) FROM sessions WHERE ended_at IS NOT NULL AND last_active_at < ?").pluck();
    const cutoff = NOW - 30 * DAY;
    const events: string[] = [];
    let leftWhenAppended = -1;

    const prune = db.pruneSessions({ olderThanDays: 30, now: NOW }).then((n) => {
      events.push("prune done");
      return n;
    });
    // Issued while the prune's first batch is queued: it must not wait for the whole prune.
    const append = db.appendMessage(live.id, { role: "user", content: "still answering" }).then((id) => {
      // What another connection sees at the moment the append has committed.
      leftWhenAppended = prunable.get(cutoff) as number;
      events.push("append committed");
      return id;
    });
    const [pruned, messageId] = await Promise.all([prune, append]);

    expect(events).toEqual(["append committed", "prune done"]);
    // The append committed while old sessions were still waiting for later batches.
    expect(leftWhenAppended).toBeGreaterThan(0);
    expect(leftWhenAppended).toBeLessThan(12);
    expect(pruned).toBe(12);
    expect(prunable.get(cutoff)).toBe(0);
    expect((await db.getMessages(live.id)).map((m) => m.id)).toEqual([messageId]);
    watcher.close();
    await db.close();
  });

  it("a new file has incremental auto-vacuum and shrinks after a prune", async () => {
    const path = join(dir, "new.db");
    const db = await openSessionDB(path);
    expect(pragma(path, "auto_vacuum")).toBe(2); // INCREMENTAL
    await seedOld(db, 8, 500);
    const keep = await db.createSession({ source: "cli" });
    await db.appendMessage(keep.id, { role: "user", content: "kept" });
    const before = (await db.getStats()).databaseBytes;

    expect(await db.pruneSessions({ olderThanDays: 30, now: NOW })).toBe(8);
    const after = (await db.getStats()).databaseBytes;
    expect(after).toBeLessThan(before / 2);
    expect(pragma(path, "freelist_count")).toBe(0);
    expect((await db.getMessages(keep.id)).map((m) => m.content)).toEqual(["kept"]);
    await db.close();
    expect(pragma(path, "auto_vacuum")).toBe(2);
  });

  it("a file made before incremental auto-vacuum still prunes; a full VACUUM on demand converts it", async () => {
    const path = join(dir, "old.db");
    await (await openSessionDB(path)).close();
    // What an older Threadline made: the same schema, auto_vacuum NONE.
    const raw = new Database(path);
    raw.pragma("auto_vacuum = NONE");
    raw.exec("VACUUM");
    raw.close();
    expect(pragma(path, "auto_vacuum")).toBe(0);

    const db = await openSessionDB(path);
    await seedOld(db, 6, 500);
    const keep = await db.createSession({ source: "cli" });
    expect(await db.pruneSessions({ olderThanDays: 30, now: NOW })).toBe(6);
    expect((await db.listSessions({ includeChildren: true })).items.map((s) => s.id)).toEqual([keep.id]);
    // The freed pages stay in the file, for reuse; the mode is unchanged.
    expect(pragma(path, "auto_vacuum")).toBe(0);
    expect(pragma(path, "freelist_count")).toBeGreaterThan(0);
    const before = (await db.getStats()).databaseBytes;

    expect(await db.pruneSessions({ olderThanDays: 30, now: NOW, vacuum: "full" })).toBe(0);
    expect(pragma(path, "auto_vacuum")).toBe(2);
    expect(pragma(path, "freelist_count")).toBe(0);
    // The rewritten file is checkpointed out of the WAL at once: the file shrinks now.
    expect(statSync(`${path}-wal`).size).toBe(0);
    expect((await db.getStats()).databaseBytes).toBeLessThan(before / 2);
    expect((await db.getSession(keep.id))?.id).toBe(keep.id);
    await db.close();
  });
});
