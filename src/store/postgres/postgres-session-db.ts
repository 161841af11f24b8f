/**
 * The PostgreSQL implementation of {@link SessionDB} (node-postgres pool, one schema,
 * tsvector + GIN search): the store core over {@link PostgresDialect}.
 *
 * Every write is one transaction, retried on serialization failures and deadlocks. Writes to
 * a session first lock its row (`SELECT … FOR UPDATE`), so appends from any number of
 * processes are serialised per session: a turn's messages stay contiguous and counters stay
 * exact.
 *
 * @module
 */
import type { SessionDB } from "../contract.js";
import { StoreCore } from "../core/store-core.js";
import { redactPassword, resolvePostgresConfig, type PostgresConfig } from "./postgres-config.js";
import { createPool } from "./postgres-connection.js";
import { PostgresDialect } from "./postgres-dialect.js";
import { translatePostgresError } from "./postgres-errors.js";
import { migrate } from "./postgres-migrations.js";

/**
 * A {@link SessionDB} in one PostgreSQL schema. Open it with
 * {@link PostgresSessionDB.open} (or `openSessionDB("postgres://…")`).
 *
 * @example
 * const db = await PostgresSessionDB.open({ connectionString: "postgres://127.0.0.1:5432/app" });
 * const s = await db.createSession({ source: "api-server" });
 * await db.appendMessage(s.id, { role: "user", content: "hello" });
 * await db.close();
 */
export class PostgresSessionDB extends StoreCore implements SessionDB {
  /** The schema holding the tables. */
  readonly schema: string;

  private constructor(dialect: PostgresDialect, schema: string) {
    super(dialect);
    this.schema = schema;
  }

  /** Connects, creates the schema if missing and migrates it (under an advisory lock). */
  static async open(config: PostgresConfig): Promise<PostgresSessionDB> {
    const resolved = resolvePostgresConfig(config);
    const pool = createPool(resolved);
    const location = redactPassword(resolved.connectionString);
    try {
      const client = await pool.connect();
      try {
        await migrate(client, resolved.schema);
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => {});
      throw translatePostgresError(error, "opening the database", location);
    }
    return new PostgresSessionDB(new PostgresDialect(pool, location, { autoAnalyze: resolved.autoAnalyze }), resolved.schema);
  }
}
