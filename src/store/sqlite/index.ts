/**
 * The SQLite backend (`threadline/sqlite`).
 *
 * @module
 */
export { SqliteSessionDB } from "./sqlite-session-db.js";
export { type SqliteConfig } from "./sqlite-config.js";
export { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION, type SqliteMigration } from "./sqlite-migrations.js";
export { diagnoseSqlite, repairSqlite, type SqliteRepairOptions } from "./sqlite-doctor.js";
