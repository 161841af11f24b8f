import Database from "better-sqlite3";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB, SchemaVersionError } from "../../../src/index.js";
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from "../../../src/store/sqlite/sqlite-migrations.js";

describe("sqlite: schema versions", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-mig-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("upgrades a database built at version 1, keeping its data and indexing it for search", async () => {
    const path = join(dir, "v1.db");
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    SQLITE_MIGRATIONS[0]!.up(raw);
    raw.pragma("user_version = 1");
    raw
      .prepare(
        `INSERT INTO sessions (id, source, started_at, last_active_at, chain_started_at, message_count, preview)
         VALUES ('old_session', 'telegram', 1000, 1010, 1000, 2, 'kubernetes rollout')`,
      )
      .run();
    raw.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old_session', 'user', ?, 1005)").run("kubernetes rollout stuck 部署失败");
    raw.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old_session', 'assistant', ?, 1010)").run("check the deployment events");
    raw.close();

    const db = await openSessionDB(path);
    const session = await db.getSession("old_session");
    expect(session).toMatchObject({ source: "telegram", messageCount: 2, preview: "kubernetes rollout" });
    expect((await db.searchMessages("kubernetes")).map((h) => h.sessionId)).toEqual(["old_session"]);
    expect((await db.searchMessages("部署")).map((h) => h.sessionId)).toEqual(["old_session"]);
    await db.appendMessage("old_session", { role: "user", content: "new after upgrade" });
    expect(await db.searchMessages("upgrade")).toHaveLength(1);
    await db.close();

    const check = new Database(path, { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    check.close();
  });

  it("the tool-tally migration back-fills tool calls of visible messages once, and insights count them", async () => {
    const path = join(dir, "pre-tally.db");
    const tally = SQLITE_MIGRATIONS.findIndex((m) => m.description.startsWith("per-session tool-call tally"));
    expect(tally).toBeGreaterThan(0);
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    for (const migration of SQLITE_MIGRATIONS.slice(0, tally)) migration.up(raw);
    raw.pragma(`user_version = ${tally}`);
    const started = Date.now() / 1000 - 3600;
    raw
      .prepare(
        `INSERT INTO sessions (id, source, started_at, last_active_at, chain_started_at, message_count, tool_call_count)
         VALUES ('old', 'cli', ?, ?, ?, 3, 4)`,
      )
      .run(started, started, started);
    const calls = (names: string[]): string =>
      JSON.stringify(names.map((name, i) => ({ id: `c${i}`, type: "function", function: { name, arguments: '{"x":"\u0000"}' } })));
    const insert = raw.prepare(
      "INSERT INTO messages (session_id, role, tool_calls, tool_call_count, timestamp, rewound_at) VALUES ('old', 'assistant', ?, ?, ?, ?)",
    );
    insert.run(calls(["terminal", "web_search", "terminal"]), 3, started, null);
    insert.run(calls(["\u0001odd"]), 1, started, null);
    insert.run(calls(["rewound_tool"]), 1, started, started); // hidden by a rewind: not counted
    raw.close();

    const db = await openSessionDB(path);
    const insights = await db.getInsights();
    expect(insights.tools).toEqual([
      { tool: "terminal", calls: 2, sessions: 1 },
      { tool: "\u0001odd", calls: 1, sessions: 1 },
      { tool: "web_search", calls: 1, sessions: 1 },
    ]);
    expect(insights.totals.toolCalls).toBe(4);
    await db.close();
    const reopened = await openSessionDB(path); // the back-fill ran once: reopening adds nothing
    expect((await reopened.getInsights()).tools.map((t) => t.calls)).toEqual([2, 1, 1]);
    await reopened.close();
  });

  it("the summary-marker migration marks compression summaries stored before it, and their sessions' previews skip them", async () => {
    const path = join(dir, "pre-marker.db");
    const at = SQLITE_MIGRATIONS.findIndex((m) => m.description.startsWith("compression summaries stored before they were marked"));
    expect(at).toBeGreaterThan(0);
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    for (const migration of SQLITE_MIGRATIONS.slice(0, at)) migration.up(raw);
    raw.pragma(`user_version = ${at}`);
    const session = raw.prepare(
      `INSERT INTO sessions (id, source, parent_session_id, started_at, last_active_at, chain_started_at, message_count, preview, ended_at, end_reason)
       VALUES (?, 'cli', ?, 1000, 1000, 1000, 1, ?, ?, ?)`,
    );
    const message = raw.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, 1001)");
    const heading = (parent: string): string => `[Summary of the earlier conversation (session ${parent})]\nWe planned the trip.`;
    session.run("root", null, "plan the trip", 1100, "compression");
    message.run("root", "plan the trip");
    session.run("cont", "root", "[Summary of the earlier conversation (s...", null, null);
    message.run("cont", heading("root"));
    message.run("cont", "  and the\n hotel?  ");
    session.run("fresh", "root", "[Summary of the earlier conversation (s...", null, null);
    message.run("fresh", heading("root"));
    // Not a continuation of a compression: a user who typed the same heading keeps their message.
    session.run("branch_root", null, "x", 1100, "user_exit");
    session.run("branch", "branch_root", "[Summary of the earlier conversation (s...", null, null);
    message.run("branch", heading("branch_root"));
    raw.close();

    const db = await openSessionDB(path);
    expect((await db.getMessages("cont"))[0]?.platformMessageId).toBe("summary:root");
    expect((await db.getSession("cont"))?.preview).toBe("and the hotel?");
    expect((await db.getMessages("fresh"))[0]?.platformMessageId).toBe("summary:root");
    expect((await db.getSession("fresh"))?.preview).toBeNull();
    expect((await db.getMessages("branch"))[0]?.platformMessageId).toBeNull();
    expect((await db.getSession("branch"))?.preview).toBe("[Summary of the earlier conversation (s...");
    expect((await db.getSession("root"))?.preview).toBe("plan the trip");
    await db.close();
  });

  it("refuses a database written by a newer Threadline and leaves it untouched", async () => {
    const path = join(dir, "future.db");
    const raw = new Database(path);
    raw.exec("CREATE TABLE keep_me (x)");
    raw.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 5}`);
    raw.close();
    const before = readFileSync(path);

    const error = await openSessionDB(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaVersionError);
    expect((error as SchemaVersionError).code).toBe("TL_ERR_SCHEMA_VERSION");
    expect((error as Error).message).toMatch(/Upgrade Threadline/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("opens a fresh file with WAL, foreign keys and synchronous=FULL, at the latest version", async () => {
    const path = join(dir, "fresh", "nested", "state.db");
    const db = await openSessionDB(path);
    await db.createSession({ id: "s", source: "cli" });
    const raw = new Database(path);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.pragma("user_version", { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    raw.close();
    await db.close();
  });
});
