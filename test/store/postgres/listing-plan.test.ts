/**
 * The session listing on PostgreSQL walks an index newest-first and stops at the page's
 * end, as on SQLite: for each filter form, the statements the store core builds
 * (`listing-steps.ts`, driven here step by step) are explained on a table of 6,000 analysed
 * sessions, and each walk must be an index scan in its index's order (backward) under its
 * LIMIT (several walks: one statement, side by side), with no Sort node and no sequential
 * scan of `sessions`. The planner chooses freely
 * (nothing is switched off): a plan that sorted or scanned the table would be its real choice.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ListSessionsOptions, SessionDB } from "../../../src/index.js";
import { listSessionsPage } from "../../../src/store/core/listing-steps.js";
import { encodeCursor } from "../../../src/store/cursor.js";
import { PostgresSessionDB } from "../../../src/store/postgres/index.js";
import { withDefaultUser } from "../../../src/store/postgres/postgres-connection.js";
import { decodeText, encodeText } from "../../../src/store/postgres/postgres-rows.js";
import { numberPlaceholders } from "../../../src/store/postgres/postgres-steps.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";

const SOURCES = ["cli", "discord", "slack", "telegram"];
const SESSIONS = 6_000;

let schema: string;
let db: SessionDB;
let client: pg.Client;

/** A node of `EXPLAIN (FORMAT JSON)`. */
interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Scan Direction"?: string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

/** The statements one listing runs (the `column` step, the loose scan of sources, is answered with {@link SOURCES}). */
function statementsOf(options: ListSessionsOptions): Array<{ text: string; values: unknown[] }> {
  const steps = listSessionsPage(options, encodeText, decodeText);
  const out: Array<{ text: string; values: unknown[] }> = [];
  let next = steps.next();
  while (next.done !== true) {
    const step = next.value;
    if (step.kind !== "sql") throw new Error("the listing ran a native step");
    out.push({ text: numberPlaceholders(step.sql), values: [...step.params] });
    next = steps.next(step.mode === "column" ? SOURCES : []);
  }
  return out;
}

async function planOf(statement: { text: string; values: unknown[] }): Promise<PlanNode> {
  const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>({
    text: `EXPLAIN (FORMAT JSON) ${statement.text}`,
    values: statement.values,
  });
  return rows[0]!["QUERY PLAN"][0]!.Plan;
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/**
 * The listing's plan: one statement, in which each of `ranges` walks is a Limit over a backward
 * index scan of one of `indexes` (several walks side by side under an Append); nothing sorted,
 * `sessions` never read whole.
 */
async function expectKeysetWalk(options: ListSessionsOptions, indexes: string[], ranges = 1): Promise<void> {
  const listing = statementsOf(options);
  expect(listing).toHaveLength(1);
  const plan = await planOf(listing[0]!);
  const all = nodes(plan);
  const shape = JSON.stringify(all.map((n) => [n["Node Type"], n["Index Name"], n["Scan Direction"]]));
  expect(plan["Node Type"], shape).toBe(ranges === 1 ? "Limit" : "Append");
  expect(
    all.filter((n) => n["Node Type"] === "Sort" || n["Node Type"] === "Incremental Sort"),
    shape,
  ).toEqual([]);
  expect(
    all.filter((n) => n["Node Type"] === "Seq Scan" || n["Node Type"] === "Bitmap Heap Scan"),
    shape,
  ).toEqual([]);
  expect(
    all.filter((n) => n["Node Type"] === "Limit"),
    shape,
  ).toHaveLength(ranges);
  const scans = all.filter((n) => n["Index Name"] !== undefined);
  expect(scans, shape).toHaveLength(ranges);
  for (const scan of scans) {
    expect(indexes, shape).toContain(scan["Index Name"]);
    expect(scan["Scan Direction"], shape).toBe("Backward");
  }
}

describe("postgres: the session listing is a keyset walk of an index", () => {
  beforeAll(async () => {
    await requirePostgres();
    schema = `tl_test_plan_${randomBytes(6).toString("hex")}`;
    db = await PostgresSessionDB.open({ connectionString: TEST_PG_URL, schema, autoAnalyze: false });
    client = new pg.Client({ connectionString: withDefaultUser(TEST_PG_URL), options: `-c search_path=${schema}` });
    await client.connect();
    // 6,000 sessions over four sources and 50 users, every tenth a hidden continuation step.
    await client.query(
      `INSERT INTO sessions (id, source, user_id, model, title, started_at, last_active_at, chain_started_at, list_hidden, preview)
       SELECT 's' || lpad(i::text, 6, '0'), ($1::text[])[1 + i % 4], 'u' || (i % 50), 'model-' || (i % 3),
              CASE WHEN i % 3 = 0 THEN 'title ' || i END,
              1.7e9 + i, 1.7e9 + i * 2 + (i % 7), 1.7e9 + i - (i % 5), CASE WHEN i % 10 = 0 THEN 1 ELSE 0 END, 'hello ' || i
         FROM generate_series(1, ${SESSIONS}) AS i`,
      [SOURCES],
    );
    await client.query("ANALYZE sessions");
  }, 60_000);

  afterAll(async () => {
    await client?.end();
    await db?.close();
    if (schema !== undefined) await dropSchema(schema);
  });

  it("lists the newest sessions (last active) from sessions_active", async () => {
    await expectKeysetWalk({ limit: 20 }, ["sessions_active"]);
    expect((await db.listSessions({ limit: 20 })).items).toHaveLength(20);
  });

  it("pages on from a cursor with the same walk", async () => {
    const cursor = encodeCursor({ order: "lastActive:tips", key: 1.7e9 + 6_000, id: "s003000" });
    await expectKeysetWalk({ limit: 20, cursor }, ["sessions_active"]);
  });

  it("filters by one source from sessions_source_active", async () => {
    await expectKeysetWalk({ limit: 20, sources: ["telegram"] }, ["sessions_source_active"]);
  });

  it("walks one range per source for several sources, and per other source when some are excluded", async () => {
    await expectKeysetWalk({ limit: 20, sources: ["telegram", "slack"] }, ["sessions_source_active"], 2);
    // The loose scan of distinct sources first, then one walk per remaining source in one statement.
    const excluded = statementsOf({ limit: 20, excludeSources: ["cli"] });
    expect(excluded).toHaveLength(2);
    const loose = nodes(await planOf(excluded[0]!));
    expect(loose.filter((n) => n["Node Type"] === "Seq Scan" && n["Relation Name"] === "sessions")).toEqual([]);
    const walks = nodes(await planOf(excluded[1]!));
    expect(walks.filter((n) => n["Node Type"] === "Sort")).toEqual([]);
    expect(walks.filter((n) => n["Index Name"] !== undefined).map((n) => n["Index Name"])).toEqual([
      "sessions_source_active",
      "sessions_source_active",
      "sessions_source_active",
    ]);
  });

  it("includes continuation steps with one walk per hidden flag", async () => {
    await expectKeysetWalk({ limit: 20, includeChildren: true }, ["sessions_active"], 2);
  });

  it("orders by start (chains, and every session) from the started indexes", async () => {
    await expectKeysetWalk({ limit: 20, orderBy: "started" }, ["sessions_chain_started"]);
    await expectKeysetWalk({ limit: 20, orderBy: "started", includeChildren: true }, ["sessions_started"]);
    await expectKeysetWalk({ limit: 20, orderBy: "started", sources: ["cli"] }, ["sessions_source_chain_started"]);
  });

  it("filters by user from the per-user index", async () => {
    await expectKeysetWalk({ limit: 20, userId: "u7" }, ["sessions_user_active"]);
  });
});
