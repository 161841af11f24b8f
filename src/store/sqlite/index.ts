/**
 * `threadline/sqlite`: the SQLite backend. `openSessionDB(path)` (from `threadline`) opens
 * one too; import this entry point for the class itself and its config.
 *
 * The list is explicit; docs/api.md lists every export.
 *
 * @module
 */
export { SqliteSessionDB } from "./sqlite-session-db.js";
export type { SqliteConfig } from "./sqlite-config.js";
export { SQLITE_SCHEMA_VERSION } from "./sqlite-migrations.js";
