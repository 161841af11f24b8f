/**
 * A real store made to fail: another program renames one of its tables behind its back (as a
 * broken migration or a careless operator would), so every query on that table fails inside the
 * backend itself. The table gets its name back afterwards (the PostgreSQL schema is reused).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";
import { withDefaultUser } from "../../src/store/postgres/postgres-connection.js";
import { openSessionDB, type SessionDB } from "../../src/index.js";
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

/**
 * Runs `body` with a second handle on the test's database, made to give up on a lock after
 * 200 ms, while another program holds the lock on `table` (SQLite: the write lock of the file;
 * PostgreSQL: `LOCK TABLE … IN ACCESS EXCLUSIVE MODE`, and `lock_timeout` on the handle's sessions).
 */
export async function withTableLocked<T>(target: TestDatabase["target"], table: string, body: (db: SessionDB) => Promise<T>): Promise<T> {
  if (target.schema === undefined) {
    const raw = new Database(target.url);
    raw.exec("BEGIN IMMEDIATE");
    const db = await openSessionDB(target.url, { lockTimeoutMs: 200 });
    try {
      return await body(db);
    } finally {
      await db.close();
      raw.exec("ROLLBACK");
      raw.close();
    }
  }
  const client = new pg.Client({ connectionString: withDefaultUser(target.url) });
  await client.connect();
  await client.query("BEGIN");
  await client.query(`LOCK TABLE "${target.schema}"."${table}" IN ACCESS EXCLUSIVE MODE`);
  // The handle logs in as a role of its own whose sessions wait 200 ms for a lock (the store sets its own `options`).
  const role = `tl_busy_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: withDefaultUser(target.url) });
  await admin.connect();
  const schema = `"${target.schema}"`;
  await admin.query(`CREATE ROLE ${role} LOGIN`);
  await admin.query(`ALTER ROLE ${role} SET lock_timeout = '200ms'`);
  await admin.query(`GRANT ALL ON SCHEMA ${schema} TO ${role}`);
  await admin.query(`GRANT ALL ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
  await admin.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`);
  const url = new URL(target.url);
  url.username = role;
  let db: SessionDB | null = null;
  try {
    db = await openSessionDB(url.toString(), { schema: target.schema, poolSize: 2 });
    return await body(db);
  } finally {
    await db?.close();
    await client.query("ROLLBACK");
    await client.end();
    await admin.query(`DROP OWNED BY ${role}`);
    await admin.query(`DROP ROLE ${role}`);
    await admin.end();
  }
}
