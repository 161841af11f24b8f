/**
 * The PostgreSQL server the tests use: `THREADLINE_TEST_PG_URL`, default
 * `postgres://127.0.0.1:5432/test`. Unreachable → the tests fail with a clear message
 * (they are never skipped silently).
 *
 * @module
 */
import pg from "pg";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";

/** The server (and database) the PostgreSQL tests run against. */
export const TEST_PG_URL = process.env["THREADLINE_TEST_PG_URL"] ?? "postgres://127.0.0.1:5432/test";

/** Throws a clear error unless the test server answers. */
export async function requirePostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(TEST_PG_URL), connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    throw new Error(
      `PostgreSQL tests need a server at ${TEST_PG_URL.replace(/:[^:@/]*@/u, ":***@")} (${(error as Error).message}). ` +
        "Start one (.ci/run does: pg_ctlcluster <version> main start) or point THREADLINE_TEST_PG_URL at yours.",
      { cause: error },
    );
  } finally {
    await client.end().catch(() => {});
  }
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDefaultUser(TEST_PG_URL) });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '""')}" CASCADE`);
  } finally {
    await client.end();
  }
}
