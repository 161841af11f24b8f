/**
 * SQLite writes export lines itself (sqlite-export.ts): the line SQL builds is the generic
 * path's byte for byte, and what SQL cannot write the same way (text that is not UTF-8, stored
 * JSON that is not JSON, a BLOB where text belongs: only another program can leave those in
 * the file) goes through the generic path, which does what it always did.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import type { SessionDB } from "../../../src/store/contract.js";
import { SqliteConnection } from "../../../src/store/sqlite/sqlite-connection.js";
import { exportMessagesLine, registerExportFunctions } from "../../../src/store/sqlite/sqlite-export.js";
import { collect } from "../../contract/harness.js";
import { seedTricky, stringifiedLines, TRICKY_TIMES } from "../../contract/spec/export-import.js";

describe("sqlite: export lines written by SQLite", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-export-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  let path: string;
  let db: SessionDB;
  /** A second connection on the file, as another program would have. */
  let raw: Database.Database;
  let conn: SqliteConnection;

  beforeEach(async () => {
    path = join(dir, `export-${++n}.db`);
    db = await openSessionDB(path);
    raw = new Database(path);
    conn = new SqliteConnection(raw);
    registerExportFunctions(conn);
  });
  afterEach(async () => {
    raw.close();
    await db.close();
  });

  /**
   * Lets the search index catch up with what the test wrote through the store, before the test
   * changes rows behind its back (the index would read them otherwise).
   */
  async function settleIndex(): Promise<void> {
    await db.searchMessages("settle");
  }

  /** The messages array `exportSessions` gives for a session, as JSON. */
  async function messagesJson(sessionId: string, includeRewound = false): Promise<string> {
    const [record] = await collect(db.exportSessions({ sessionId, includeRewound }));
    return JSON.stringify(record!.messages);
  }

  it("builds the messages array itself, byte for byte JSON.stringify's, in id order", async () => {
    await seedTricky(db);
    // Two sessions written in turns: their messages interleave in the table.
    await db.createSession({ id: "a", source: "cli" });
    await db.createSession({ id: "b", source: "cli" });
    for (let i = 0; i < 20; i++) await db.appendMessage(i % 2 ? "a" : "b", { role: "user", content: `m${i}`, timestamp: 1790003600 + i });
    await db.createSession({ id: "none", source: "cli" });
    for (const [id, includeRewound] of [
      ["tricky", false],
      ["tricky", true],
      ["a", false],
      ["b", false],
      ["none", false],
    ] as const) {
      const line = exportMessagesLine(conn, "HEAD", id, includeRewound);
      expect(line, `${id} ${includeRewound}`).not.toBeNull();
      expect(line!.toString("utf8")).toBe(`HEAD${await messagesJson(id, includeRewound)}}\n`);
    }
    expect(JSON.parse(exportMessagesLine(conn, "", "tricky", false)!.toString("utf8").slice(0, -2)).map((m: { timestamp: number }) => m.timestamp)).toEqual(
      TRICKY_TIMES,
    );
  });

  it("writes numbers as JSON.stringify does: token counts past 2^53, and what another program stored (REAL token counts, text and infinity in REAL columns)", async () => {
    await db.createSession({ id: "s", source: "cli" });
    await db.appendTurn("s", [
      { role: "user", content: "x", timestamp: 1 },
      { role: "user", content: "y", timestamp: 2 },
      { role: "user", content: "z", timestamp: 3 },
    ]);
    await settleIndex();
    raw.prepare("UPDATE messages SET token_count = 1.5, timestamp = 'yesterday' WHERE content = 'x'").run();
    raw.prepare("UPDATE messages SET token_count = 1e300, rewound_at = ?, timestamp = ? WHERE content = 'y'").run(-0, Infinity);
    raw.prepare("UPDATE messages SET token_count = -7, rewound_at = 0.000001 WHERE content = 'z'").run();
    for (const [i, tokenCount] of [2 ** 53 - 1, 2 ** 53, 2 ** 60, 1e21].entries()) {
      await db.appendMessage("s", { role: "assistant", content: `big ${i}`, tokenCount, timestamp: 4 + i });
    }
    const line = exportMessagesLine(conn, "", "s", true);
    expect(line).not.toBeNull();
    expect(line!.toString("utf8")).toBe(`${await messagesJson("s", true)}}\n`);
    expect(line!.toString("utf8")).toContain('"timestamp":"yesterday"');
    expect(line!.toString("utf8")).toContain('"timestamp":null');
    expect(Buffer.concat(await collect(db.exportSessionLines({ includeRewound: true }))).equals(await stringifiedLines(db, { includeRewound: true }))).toBe(
      true,
    );
  });

  it("text that is not valid UTF-8 (a lone surrogate, a stray byte) goes through the generic path: the same lines, U+FFFD for the bad bytes", async () => {
    await db.createSession({ id: "s", source: "cli" });
    await db.appendTurn("s", [
      { role: "user", content: "fine", timestamp: 1 },
      { role: "user", content: "later", timestamp: 2 },
      { role: "user", content: "last", timestamp: 3 },
    ]);
    // better-sqlite3 writes a lone surrogate as the three bytes of its code point (ED A0 80).
    await settleIndex();
    raw.prepare("UPDATE messages SET content = ? WHERE content = 'later'").run("bad \ud800 surrogate");
    raw.prepare("UPDATE messages SET reasoning = CAST(x'61ff62' AS TEXT) WHERE content = 'last'").run();
    expect(exportMessagesLine(conn, "", "s", false)).toBeNull();
    const lines = await collect(db.exportSessionLines());
    expect(Buffer.concat(lines).equals(await stringifiedLines(db, {}))).toBe(true);
    const text = new TextDecoder("utf-8", { fatal: true }).decode(lines[0]);
    expect(text).toContain("bad \ufffd\ufffd\ufffd surrogate");
    expect(text).toContain('"reasoning":"a\ufffdb"');
  });

  it("stored JSON that is not JSON goes through the generic path, which fails as it did", async () => {
    await db.createSession({ id: "s", source: "cli" });
    await db.appendMessage("s", { role: "assistant", content: null, toolCalls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] });
    await settleIndex();
    for (const [column, value] of [
      ["tool_calls", '[{"id":"c",}]'],
      ["reasoning_details", "{not json"],
    ] as const) {
      raw.prepare(`UPDATE messages SET ${column} = ?`).run(value);
      expect(exportMessagesLine(conn, "", "s", false), column).toBeNull();
      const failure = (await collect(db.exportSessions()).then(
        () => null,
        (e: unknown) => e,
      )) as Error;
      expect(failure?.message).toMatch(/JSON/);
      await expect(collect(db.exportSessionLines())).rejects.toThrow(failure.message);
      raw.prepare(`UPDATE messages SET ${column} = NULL`).run();
    }
    raw.prepare("UPDATE messages SET content = '[oops', content_parts = 1").run();
    expect(exportMessagesLine(conn, "", "s", false)).toBeNull();
    await expect(collect(db.exportSessionLines())).rejects.toThrow(/JSON/);
  });

  it("a BLOB where text belongs goes through the generic path: the same lines", async () => {
    await db.createSession({ id: "s", source: "cli" });
    await db.appendMessage("s", { role: "tool", content: "out", toolCallId: "c1", timestamp: 5 });
    await settleIndex();
    raw.prepare("UPDATE messages SET tool_call_id = x'0102'").run();
    expect(exportMessagesLine(conn, "", "s", false)).toBeNull();
    expect(Buffer.concat(await collect(db.exportSessionLines())).equals(await stringifiedLines(db, {}))).toBe(true);
  });

  it("a 10,000-message session is one line, the same bytes", async () => {
    await db.createSession({ id: "long", source: "cli", startedAt: 1790000000 });
    for (let batch = 0; batch < 10; batch++) {
      await db.appendTurn(
        "long",
        Array.from({ length: 1000 }, (_, i) => ({
          role: i % 2 ? ("assistant" as const) : ("user" as const),
          content: `message ${batch * 1000 + i} with "quotes" and\ttabs`,
          timestamp: 1790000000 + (batch * 1000 + i) / 7,
        })),
      );
    }
    const lines = await collect(db.exportSessionLines());
    expect(lines).toHaveLength(1);
    expect(Buffer.from(lines[0]!).equals(await stringifiedLines(db, {}))).toBe(true);
    expect(exportMessagesLine(conn, "", "long", false)).not.toBeNull();
  });
});
