/**
 * The PostgreSQL store keeps its planner statistics fresh itself: enough appended rows, or an
 * import, are followed by a background `ANALYZE` (seen in `pg_stat_user_tables.last_analyze`,
 * which autovacuum never sets: it sets `last_autoanalyze`, and it is off for these tables).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { NewMessage, SessionDB, SessionRecord } from "../../../src/index.js";
import { withDefaultUser } from "../../../src/store/postgres/postgres-connection.js";
import { ANALYZE_BASE_ROWS } from "../../../src/store/postgres/postgres-statistics.js";
import { PostgresSessionDB } from "../../../src/store/postgres/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { waitFor } from "../../support/wait-for.js";

const schemas: string[] = [];
const open: SessionDB[] = [];
let admin: pg.Client;

/** A fresh schema with autovacuum off on its tables, so only the store can analyse them. */
async function openStore(autoAnalyze?: boolean): Promise<{ db: SessionDB; schema: string }> {
  const schema = `tl_test_${randomBytes(6).toString("hex")}`;
  schemas.push(schema);
  const db = await PostgresSessionDB.open({
    connectionString: TEST_PG_URL,
    schema,
    ...(autoAnalyze === undefined ? {} : { autoAnalyze }),
  });
  open.push(db);
  for (const table of ["messages", "sessions"]) {
    await admin.query(`ALTER TABLE "${schema}".${table} SET (autovacuum_enabled = off)`);
  }
  return { db, schema };
}

/** When `table` of `schema` was last analysed by an explicit ANALYZE (null: never), and how often. */
async function analysed(schema: string, table: string): Promise<{ last: Date | null; count: number }> {
  const { rows } = await admin.query<{ last: Date | null; count: string }>(
    "SELECT last_analyze AS last, analyze_count AS count FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2",
    [schema, table],
  );
  return { last: rows[0]?.last ?? null, count: Number(rows[0]?.count ?? 0) };
}

/** `n` short user messages. */
function messages(n: number, from = 0): NewMessage[] {
  return Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `message ${from + i} about deployments` }));
}

/** Appends `total` messages to a new session, 100 per call. */
async function appendMany(db: SessionDB, total: number): Promise<void> {
  const { id } = await db.createSession({ source: "cli" });
  for (let done = 0; done < total; done += 100) await db.appendTurn(id, messages(Math.min(100, total - done), done));
}

describe("postgres: planner statistics kept fresh by the store", () => {
  beforeAll(async () => {
    await requirePostgres();
    admin = new pg.Client({ connectionString: withDefaultUser(TEST_PG_URL) });
    await admin.connect();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((db) => db.close()));
  });
  afterAll(async () => {
    await admin?.end();
    for (const schema of schemas) await dropSchema(schema);
  });

  it("analyses messages in the background once the appended rows pass the threshold", async () => {
    const { db, schema } = await openStore();
    expect((await analysed(schema, "messages")).last).toBeNull();
    await appendMany(db, 2 * ANALYZE_BASE_ROWS);
    const after = await waitFor(
      async () => {
        const a = await analysed(schema, "messages");
        return a.last === null ? null : a;
      },
      { what: "an ANALYZE of messages after 1,000 appended rows" },
    );
    expect(after.count).toBeGreaterThanOrEqual(1);
    // The statistics now know the rows: the planner's count is the table's.
    const { rows } = await admin.query<{ reltuples: number }>(
      "SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relnamespace = $1::regnamespace AND relname = 'messages'",
      [schema],
    );
    expect(rows[0]!.reltuples).toBeGreaterThan(ANALYZE_BASE_ROWS);
  });

  it("does not analyse a table with few rows written", async () => {
    const { db, schema } = await openStore();
    await appendMany(db, 200);
    await db.close(); // waits for any background check this instance started
    expect((await analysed(schema, "messages")).last).toBeNull();
  });

  it("analyses after an import", async () => {
    const source = await openStore(false);
    await appendMany(source.db, 2 * ANALYZE_BASE_ROWS);
    const records: SessionRecord[] = [];
    for await (const record of source.db.exportSessions()) records.push(record);
    await source.db.close();
    expect((await analysed(source.schema, "messages")).last).toBeNull(); // autoAnalyze: false analyses nothing

    const target = await openStore();
    expect(await target.db.importSessions(records.map((r) => JSON.stringify(r)))).toEqual({ imported: 1, skipped: 0, errors: [] });
    await waitFor(async () => (await analysed(target.schema, "messages")).last, {
      what: "an ANALYZE of messages after importing 1,000 messages",
    });
  });

  it("rejects an autoAnalyze that is not a boolean", async () => {
    await expect(PostgresSessionDB.open({ connectionString: TEST_PG_URL, autoAnalyze: "yes" as unknown as boolean })).rejects.toMatchObject({
      code: "TL_ERR_INVALID_INPUT",
      field: "autoAnalyze",
    });
  });
});
