/**
 * The PostgreSQL backend (`threadline/postgres`).
 *
 * @module
 */
export { PostgresSessionDB } from "./postgres-session-db.js";
export { type PostgresConfig } from "./postgres-config.js";
export { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, type PostgresMigration } from "./postgres-migrations.js";
export { diagnosePostgres } from "./postgres-doctor.js";
