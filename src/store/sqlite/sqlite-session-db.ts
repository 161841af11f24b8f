/**
 * The SQLite implementation of {@link SessionDB} (better-sqlite3, WAL, FTS5): the store
 * core over {@link SqliteDialect}.
 *
 * Reads run synchronously on the calling tick (after any queued writes of this instance, so
 * a caller always reads its own writes); writes go through a group-commit queue and resolve
 * once durable.
 *
 * @module
 */
import type { SessionDB } from "../contract.js";
import { StoreCore } from "../core/store-core.js";
import { resolveSqliteConfig, type SqliteConfig } from "./sqlite-config.js";
import { openSqliteConnection } from "./sqlite-connection.js";
import { SqliteDialect } from "./sqlite-dialect.js";

/**
 * A {@link SessionDB} on one SQLite file. Open it with {@link SqliteSessionDB.open}
 * (or `openSessionDB(path)`).
 *
 * @example
 * const db = await SqliteSessionDB.open({ path: "/tmp/state.db" });
 * const s = await db.createSession({ source: "cli" });
 * await db.appendMessage(s.id, { role: "user", content: "hello" });
 * await db.close();
 */
export class SqliteSessionDB extends StoreCore implements SessionDB {
  /** Opens (creating and migrating as needed) a database file. */
  static async open(config: SqliteConfig): Promise<SqliteSessionDB> {
    const resolved = resolveSqliteConfig(config);
    const conn = await openSqliteConnection(resolved);
    return new SqliteSessionDB(new SqliteDialect(conn, resolved));
  }
}
