/**
 * The session listing on SQLite walks an index newest-first, as on PostgreSQL
 * (`test/store/postgres/listing-plan.test.ts`): the statements the store core builds
 * (`listing-steps.ts`, driven step by step) are explained on a file of 3,000 analysed
 * sessions, and every walk must go through the expected index (a SEARCH, or a SCAN in its
 * order), with no temporary B-tree for the ORDER BY and no SCAN of the table.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import type { ListSessionsOptions } from "../../../src/store/contract.js";
import { listSessionsPage } from "../../../src/store/core/listing-steps.js";

const SOURCES = ["cli", "discord", "slack", "telegram"];
let dir: string;
let raw: Database.Database;

/** The statements one listing runs (the loose scan of sources is answered with {@link SOURCES}). */
function statementsOf(options: ListSessionsOptions): Array<{ sql: string; params: unknown[] }> {
  const steps = listSessionsPage(
    options,
    (v) => v,
    (v) => v,
  );
  const out: Array<{ sql: string; params: unknown[] }> = [];
  let next = steps.next();
  while (next.done !== true) {
    const step = next.value;
    if (step.kind !== "sql") throw new Error("the listing ran a native step");
    out.push({ sql: step.sql, params: [...step.params] });
    next = steps.next(step.mode === "column" ? SOURCES : []);
  }
  return out;
}

/** One statement whose every walk goes through one of `indexes` (`walks` of them), nothing sorted, nothing scanned whole. */
function expectKeysetWalk(options: ListSessionsOptions, indexes: string[], walks = 1): void {
  const listing = statementsOf(options);
  expect(listing).toHaveLength(1);
  const details = (raw.prepare(`EXPLAIN QUERY PLAN ${listing[0]!.sql}`).all(...listing[0]!.params) as Array<{ detail: string }>).map((r) => r.detail);
  const shape = JSON.stringify(details);
  expect(
    details.filter((d) => d.includes("TEMP B-TREE")),
    shape,
  ).toEqual([]);
  // A SCAN in an index's order (no equality prefix: every session, by start) is a walk too; a SCAN of the table is not.
  expect(
    details.filter((d) => /^SCAN sessions$/u.test(d)),
    shape,
  ).toEqual([]);
  const searches = details.filter((d) => /^(?:SEARCH|SCAN) sessions USING (?:COVERING )?INDEX /u.test(d));
  expect(searches, shape).toHaveLength(walks);
  for (const search of searches) expect(indexes, shape).toContain(/USING (?:COVERING )?INDEX (\w+)/u.exec(search)?.[1]);
}

describe("sqlite: the session listing is a keyset walk of an index", () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tl-listing-plan-"));
    const path = join(dir, "plan.db");
    await (await openSessionDB(path)).close();
    raw = new Database(path);
    raw.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
      INSERT INTO sessions (id, source, user_id, model, started_at, last_active_at, chain_started_at, list_hidden, preview)
      SELECT printf('s%06d', i), CASE i % 4 WHEN 0 THEN 'cli' WHEN 1 THEN 'discord' WHEN 2 THEN 'slack' ELSE 'telegram' END,
             'u' || (i % 50), 'model', 1.7e9 + i, 1.7e9 + i * 2, 1.7e9 + i, CASE WHEN i % 10 = 0 THEN 1 ELSE 0 END, 'hello'
        FROM n;
      ANALYZE;
    `);
  });

  afterAll(() => {
    raw?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("lists the newest sessions, and one source, from their indexes", () => {
    expectKeysetWalk({ limit: 20 }, ["sessions_active"]);
    expectKeysetWalk({ limit: 20, sources: ["telegram"] }, ["sessions_source_active"]);
  });

  it("walks several ranges in one statement: sources, continuation steps", () => {
    expectKeysetWalk({ limit: 20, sources: ["telegram", "slack"] }, ["sessions_source_active"], 2);
    expectKeysetWalk({ limit: 20, includeChildren: true }, ["sessions_active"], 2);
  });

  it("orders by start and filters by user from their indexes", () => {
    expectKeysetWalk({ limit: 20, orderBy: "started" }, ["sessions_chain_started"]);
    expectKeysetWalk({ limit: 20, orderBy: "started", includeChildren: true }, ["sessions_started"]);
    expectKeysetWalk({ limit: 20, userId: "u7" }, ["sessions_user_active"]);
  });
});
