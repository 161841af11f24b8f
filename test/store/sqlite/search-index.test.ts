import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";

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
});
