/**
 * A real store made to fail: another program renames one of its tables behind its back (as a
 * broken migration or a careless operator would), so every query on that table fails inside the
 * backend itself. The table gets its name back afterwards (the PostgreSQL schema is reused).
 *
 * @module
 */
import Database from "better-sqlite3";
import pg from "pg";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";
import type { TestDatabase } from "../gateway/backends.js";

/** Runs `body` while `table` of the test's database is missing (renamed away), then puts it back. */
export async function withTableGone<T>(target: TestDatabase["target"], table: string, body: () => Promise<T>): Promise<T> {
  const gone = `${table}_gone_for_a_test`;
  const rename = async (from: string, to: string): Promise<void> => {
    if (target.schema === undefined) {
      const raw = new Database(target.url);
      try {
        raw.exec(`ALTER TABLE "${from}" RENAME TO "${to}"`);
      } finally {
        raw.close();
      }
      return;
    }
    const client = new pg.Client({ connectionString: withDefaultUser(target.url) });
    await client.connect();
    try {
      await client.query(`ALTER TABLE "${target.schema}"."${from}" RENAME TO "${to}"`);
    } finally {
      await client.end();
    }
  };
  await rename(table, gone);
  try {
    return await body();
  } finally {
    await rename(gone, table);
  }
}
