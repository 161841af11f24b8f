/**
 * The SQLite backend (`threadline/sqlite`).
 *
 * @module
 */
export { SqliteSessionDB } from "./sqlite-session-db.js";
export { type SqliteConfig } from "./sqlite-config.js";
export { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION, type SqliteMigration } from "./sqlite-migrations.js";
export { diagnoseSqlite } from "./sqlite-doctor.js";
export { repairSqlite, type SqliteRepairOptions } from "./sqlite-repair.js";
