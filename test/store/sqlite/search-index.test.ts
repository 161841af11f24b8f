import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { openSessionDB } from "../../../src/index.js";
import { SqliteConnection } from "../../../src/store/sqlite/sqlite-connection.js";
import { INDEX_WATERMARK_KEY, indexPendingStep, indexWatermark } from "../../../src/store/sqlite/sqlite-search-index.js";
import { waitFor } from "../../support/wait-for.js";

// The FTS index catches up after appends (in batches, and always before a search).
describe("sqlite: search index catch-up", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-idx-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a search on one connection finds what another connection just appended", async () => {
    const path = join(dir, "two.db");
    const writer = await openSessionDB(path);
    const reader = await openSessionDB(path);
    const s = await writer.createSession({ source: "cli" });
    expect(await reader.searchMessages("zebra")).toEqual([]);
    await writer.appendMessage(s.id, { role: "user", content: "a zebra crossed" });
    expect((await reader.searchMessages("zebra")).map((h) => h.sessionId)).toEqual([s.id]);
    await writer.close();
    await reader.close();
  });

  it("deleting the newest messages never lets their ids (or index entries) come back", async () => {
    const db = await openSessionDB(join(dir, "reuse.db"));
    const a = await db.createSession({ source: "cli" });
    const b = await db.createSession({ source: "cli" });
    await db.appendMessage(a.id, { role: "user", content: "apple" });
    const last = await db.appendMessage(b.id, { role: "user", content: "banana" });
    expect(await db.searchMessages("banana")).toHaveLength(1); // index caught up past `last`
    await db.deleteSession(b.id);
    expect(await db.searchMessages("banana")).toEqual([]);
    const c = await db.createSession({ source: "cli" });
    const reused = await db.appendMessage(c.id, { role: "user", content: "cherry" });
    expect(reused).toBeGreaterThan(last); // ids are never reused
    expect((await db.searchMessages("cherry")).map((h) => h.messageId)).toEqual([reused]);
    expect(await db.searchMessages("banana")).toEqual([]);
    await db.close();
  });

  it("many appends without a search are indexed in batches, and a rewind hides them at once", async () => {
    const db = await openSessionDB(join(dir, "batch.db"));
    const s = await db.createSession({ source: "cli" });
    for (let i = 0; i < 1200; i++) await db.appendMessage(s.id, { role: i % 2 ? "assistant" : "user", content: `word${i} common` });
    expect(await db.searchMessages("word1199")).toHaveLength(1);
    expect(await db.searchMessages("word0")).toHaveLength(1);
    await db.rewind(s.id, 1);
    expect(await db.searchMessages("word1199")).toEqual([]);
    expect(await db.searchMessages("word1198")).toEqual([]);
    await db.restoreRewound(s.id);
    expect(await db.searchMessages("word1199")).toHaveLength(1);
    await db.close();
  });

  it("a backlog is indexed in steps of at most INDEX_STEP_ROWS messages, each advancing the watermark", async () => {
    const path = join(dir, "steps.db");
    const db = await openSessionDB(path);
    const s = await db.createSession({ source: "cli" });
    await db.appendTurn(
      s.id,
      Array.from({ length: 250 }, (_, i) => ({ role: "user" as const, content: `step word${i}` })),
    );
    await db.close(); // leaves the index complete
    // Put the watermark back, as a file written by an older build or another tool would leave it.
    const raw = new Database(path);
    raw.prepare("DELETE FROM messages_fts").run();
    raw.prepare("UPDATE meta SET value = '0' WHERE key = ?").run(INDEX_WATERMARK_KEY);
    const conn = new SqliteConnection(raw);
    const marks: number[] = [];
    for (;;) {
      const more = raw.transaction(() => indexPendingStep(conn, 100))();
      marks.push(indexWatermark(conn));
      if (!more) break;
    }
    const ids = raw.prepare("SELECT id FROM messages ORDER BY id").pluck().all() as number[];
    expect(marks).toEqual([ids[99], ids[199], ids[249]]);
    raw.close();
    const again = await openSessionDB(path);
    expect((await again.searchMessages("word249")).map((h) => h.messageId)).toEqual([ids[249]]);
    await again.close();
  });

  it("an import is indexed in the background, not by the first search or append after it", async () => {
    const source = await openSessionDB(join(dir, "import-source.db"));
    const s = await source.createSession({ source: "cli", title: "imported" });
    await source.appendTurn(
      s.id,
      Array.from({ length: 300 }, (_, i) => ({ role: "user" as const, content: `imported line ${i}` })),
    );
    const lines: string[] = [];
    for await (const record of source.exportSessions()) lines.push(JSON.stringify(record));
    await source.close();
    const path = join(dir, "import-target.db");
    const target = await openSessionDB(path);
    try {
      expect((await target.importSessions(lines)).imported).toBe(1);
      const probe = new Database(path, { readonly: true });
      try {
        const newest = probe.prepare("SELECT max(id) FROM messages").pluck().get() as number;
        // No search or append on `target`: the watermark reaches the newest imported message by itself.
        await waitFor(() => Number(probe.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(INDEX_WATERMARK_KEY) ?? 0) === newest, {
          what: "the import to be indexed",
        });
      } finally {
        probe.close();
      }
    } finally {
      await target.close();
    }
  });
});

describe("sqlite: a search index catch-up that fails", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-idx-fail-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("rejects the search that waited for it, and leaves no unhandled rejection behind (which would end a gateway)", async () => {
    const path = join(dir, "bad-json.db");
    const db = await openSessionDB(path);
    const s = await db.createSession({ source: "cli" });
    await db.appendMessage(s.id, { role: "user", content: "fine" });
    // Another program writes a tool call list that is not JSON: indexing it throws.
    const raw = new Database(path);
    raw.prepare("INSERT INTO messages (session_id, role, tool_calls, timestamp) VALUES (?, 'assistant', '[not json', 1)").run(s.id);
    raw.close();
    const unhandled: unknown[] = [];
    // A rejection left unhandled on purpose after the search: Node reports unhandled rejections in
    // the order they happened, so once it is reported, any the store left behind was reported first.
    const sentinel = new Error("the sentinel rejection of this test");
    let sentinelReported!: () => void;
    const reported = new Promise<void>((resolve) => (sentinelReported = resolve));
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
      if (reason === sentinel) sentinelReported();
    };
    // Only this listener while the test runs (the runner's own would count the sentinel as a failure).
    const others = process.listeners("unhandledRejection");
    process.removeAllListeners("unhandledRejection");
    process.on("unhandledRejection", onUnhandled);
    try {
      await expect(db.searchMessages("fine")).rejects.toThrow();
      void Promise.reject(sentinel);
      await reported;
      expect(unhandled).toEqual([sentinel]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      for (const listener of others) process.on("unhandledRejection", listener);
      await db.close().catch(() => {});
    }
  });
});
