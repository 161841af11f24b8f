import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB, SchemaVersionError } from "../../../src/index.js";
import { withDefaultUser } from "../../../src/store/postgres/postgres-connection.js";
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from "../../../src/store/postgres/postgres-migrations.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";

const schemas: string[] = [];
function freshSchema(): string {
  const schema = `tl_test_${randomBytes(6).toString("hex")}`;
  schemas.push(schema);
  return schema;
}

async function withClient<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDefaultUser(TEST_PG_URL) });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

describe("postgres: schema versions", () => {
  beforeAll(requirePostgres);
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  it("creates a fresh schema at the latest version, once, even when several stores open it at once", async () => {
    const schema = freshSchema();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openSessionDB(TEST_PG_URL, { schema })));
    await stores[0]!.createSession({ id: "s", source: "cli" });
    expect(await stores[3]!.getSession("s")).not.toBeNull();
    await Promise.all(stores.map((s) => s.close()));
    const versions = await withClient(async (c) =>
      (await c.query(`SELECT version FROM "${schema}".threadline_migrations ORDER BY version`)).rows.map((r) => r.version),
    );
    expect(versions).toEqual(Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it("the tool-tally migration back-fills tool calls of visible messages once, and insights count them", async () => {
    const schema = freshSchema();
    const tally = POSTGRES_MIGRATIONS.findIndex((m) => m.description.startsWith("per-session tool-call tally"));
    expect(tally).toBeGreaterThan(0);
    const started = Date.now() / 1000 - 3600;
    const calls = (names: string[]): string =>
      JSON.stringify(names.map((name, i) => ({ id: `c${i}`, type: "function", function: { name, arguments: '{"x":"\u0000"}' } })));
    await withClient(async (c) => {
      await c.query(`CREATE SCHEMA "${schema}"`);
      await c.query(`CREATE TABLE "${schema}".threadline_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      await c.query(`SET search_path TO "${schema}"`);
      for (const [i, migration] of POSTGRES_MIGRATIONS.slice(0, tally).entries()) {
        await c.query(migration.sql);
        await c.query("INSERT INTO threadline_migrations(version) VALUES ($1)", [i + 1]);
      }
      await c.query(
        `INSERT INTO sessions (id, source, started_at, last_active_at, chain_started_at, message_count, tool_call_count)
         VALUES ('old', 'cli', $1, $1, $1, 3, 4)`,
        [started],
      );
      const insert = "INSERT INTO messages (session_id, role, tool_calls, tool_call_count, timestamp, rewound_at) VALUES ('old', 'assistant', $1, $2, $3, $4)";
      await c.query(insert, [calls(["terminal", "web_search", "terminal"]), 3, started, null]);
      await c.query(insert, [calls(["\u0001odd"]), 1, started, null]);
      await c.query(insert, [calls(["rewound_tool"]), 1, started, started]);
    });

    const db = await openSessionDB(TEST_PG_URL, { schema });
    const insights = await db.getInsights();
    expect(insights.tools).toEqual([
      { tool: "terminal", calls: 2, sessions: 1 },
      { tool: "\u0001odd", calls: 1, sessions: 1 },
      { tool: "web_search", calls: 1, sessions: 1 },
    ]);
    expect(insights.totals.toolCalls).toBe(4);
    // A later append adds to the back-filled row of the same (escaped) name.
    await db.appendMessage("old", {
      role: "assistant",
      content: null,
      toolCalls: [{ id: "n", type: "function", function: { name: "\u0001odd", arguments: "{}" } }],
    });
    expect((await db.getInsights()).tools.find((t) => t.tool === "\u0001odd")).toEqual({ tool: "\u0001odd", calls: 2, sessions: 1 });
    await db.close();
  });

  it("the summary-marker migration marks compression summaries stored before it, and their sessions' previews skip them", async () => {
    const schema = freshSchema();
    const at = POSTGRES_MIGRATIONS.findIndex((m) => m.description.startsWith("compression summaries stored before they were marked"));
    expect(at).toBeGreaterThan(0);
    const heading = (parent: string): string => `[Summary of the earlier conversation (session ${parent})]\nWe planned the trip.`;
    await withClient(async (c) => {
      await c.query(`CREATE SCHEMA "${schema}"`);
      await c.query(`CREATE TABLE "${schema}".threadline_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      await c.query(`SET search_path TO "${schema}"`);
      for (const [i, migration] of POSTGRES_MIGRATIONS.slice(0, at).entries()) {
        await c.query(migration.sql);
        await c.query("INSERT INTO threadline_migrations(version) VALUES ($1)", [i + 1]);
      }
      const session = `INSERT INTO sessions (id, source, parent_session_id, started_at, last_active_at, chain_started_at, message_count, preview, ended_at, end_reason)
                       VALUES ($1, 'cli', $2, 1000, 1000, 1000, 1, $3, $4, $5)`;
      const message = "INSERT INTO messages (session_id, role, content, timestamp) VALUES ($1, 'user', $2, 1001)";
      await c.query(session, ["root", null, "plan the trip", 1100, "compression"]);
      await c.query(message, ["root", "plan the trip"]);
      await c.query(session, ["cont", "root", "[Summary of the earlier conversation (s...", null, null]);
      await c.query(message, ["cont", heading("root")]);
      await c.query(message, ["cont", "  and the\n hotel?  "]);
      await c.query(session, ["fresh", "root", "[Summary of the earlier conversation (s...", null, null]);
      await c.query(message, ["fresh", heading("root")]);
      await c.query(session, ["long", "root", "[Summary of the earlier conversation (s...", null, null]);
      await c.query(message, ["long", heading("root")]);
      await c.query(message, ["long", `${"d".repeat(30)}\n\n\n${"e".repeat(40)}`]);
      // Not a continuation of a compression: a user who typed the same heading keeps their message.
      await c.query(session, ["branch_root", null, "x", 1100, "user_exit"]);
      await c.query(session, ["branch", "branch_root", "[Summary of the earlier conversation (s...", null, null]);
      await c.query(message, ["branch", heading("branch_root")]);
    });

    const db = await openSessionDB(TEST_PG_URL, { schema });
    expect((await db.getMessages("cont"))[0]?.platformMessageId).toBe("summary:root");
    expect((await db.getSession("cont"))?.preview).toBe("and the hotel?");
    expect((await db.getMessages("fresh"))[0]?.platformMessageId).toBe("summary:root");
    expect((await db.getSession("fresh"))?.preview).toBeNull();
    expect((await db.getSession("long"))?.preview).toBe(`${"d".repeat(30)} ${"e".repeat(29)}...`);
    expect((await db.getMessages("branch"))[0]?.platformMessageId).toBeNull();
    expect((await db.getSession("branch"))?.preview).toBe("[Summary of the earlier conversation (s...");
    await db.close();
  });

  it("refuses a schema written by a newer Threadline and leaves it untouched", async () => {
    const schema = freshSchema();
    await withClient(async (c) => {
      await c.query(`CREATE SCHEMA "${schema}"`);
      await c.query(`CREATE TABLE "${schema}".threadline_migrations (version int PRIMARY KEY, applied_at timestamptz)`);
      await c.query(`INSERT INTO "${schema}".threadline_migrations VALUES ($1, now())`, [POSTGRES_SCHEMA_VERSION + 5]);
    });
    const error = await openSessionDB(TEST_PG_URL, { schema }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaVersionError);
    expect((error as SchemaVersionError).code).toBe("TL_ERR_SCHEMA_VERSION");
    const tables = await withClient(async (c) =>
      (await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema])).rows.map((r) => r.table_name),
    );
    expect(tables).toEqual(["threadline_migrations"]);
  });

  it("an unreachable server is a StoreError that names the server", async () => {
    const error = await openSessionDB("postgres://127.0.0.1:1/none").catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/is PostgreSQL running at postgres:\/\/127\.0\.0\.1:1\/none/);
    expect((error as { code?: string }).code).toBe("TL_ERR_STORE");
  });
});
