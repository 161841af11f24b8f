/**
 * `threadline/postgres`: the PostgreSQL backend. `openSessionDB("postgres://…")` (from
 * `threadline`) opens one too; import this entry point for the class itself and its config.
 *
 * The list is explicit; docs/api.md lists every export.
 *
 * @module
 */
export { PostgresSessionDB } from "./postgres-session-db.js";
export type { PostgresConfig } from "./postgres-config.js";
export { POSTGRES_SCHEMA_VERSION } from "./postgres-migrations.js";
