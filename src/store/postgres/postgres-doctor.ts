/**
 * `threadline doctor` on a PostgreSQL target: connectivity, the schema version and the
 * server's view of the database. Repair is SQLite-only (a server keeps its own data safe:
 * use its backups and `amcheck`).
 *
 * @module
 */
import type { PostgresDoctorReport } from "../doctor-report.js";
import { createPool, Sql } from "./postgres-connection.js";
import { redactPassword, resolvePostgresConfig, type PostgresConfig } from "./postgres-config.js";
import { mediaNotChecked } from "../media-doctor.js";
import { POSTGRES_SCHEMA_VERSION } from "./postgres-migrations.js";

/** Checks a PostgreSQL target without changing it (the schema is not created or migrated). */
export async function diagnosePostgres(config: PostgresConfig): Promise<PostgresDoctorReport> {
  const resolved = resolvePostgresConfig(config);
  const problems: string[] = [];
  const report: PostgresDoctorReport = {
    backend: "postgres",
    location: redactPassword(resolved.connectionString),
    healthy: false,
    problems,
    connected: false,
    schemaVersion: null,
    supportedSchemaVersion: POSTGRES_SCHEMA_VERSION,
    schema: resolved.schema,
    server: null,
    media: mediaNotChecked(),
  };
  const pool = createPool({ ...resolved, poolSize: 1 });
  try {
    const sql = new Sql(pool);
    const server = await sql.one<{ version: string; database: string; bytes: number }>(
      "SELECT current_setting('server_version') AS version, current_database() AS database, pg_database_size(current_database())::bigint AS bytes",
    );
    report.connected = true;
    let checksumFailures: number | null = null;
    try {
      checksumFailures = (await sql.value<number | null>("SELECT checksum_failures::bigint FROM pg_stat_database WHERE datname = current_database()")) ?? null;
    } catch {
      checksumFailures = null; // servers before 12 do not count them
    }
    report.server = { version: server!.version, database: server!.database, databaseBytes: server!.bytes, checksumFailures };
    if (checksumFailures !== null && checksumFailures > 0)
      problems.push(`The server counted ${checksumFailures} data-checksum failure(s) in this database: check its disks and restore from a backup.`);
    const table = await sql.value<string | null>("SELECT to_regclass($1)::text", [`"${resolved.schema}".threadline_migrations`]);
    if (table === null || table === undefined) {
      problems.push(`The schema "${resolved.schema}" holds no Threadline tables yet (the first open creates them).`);
    } else {
      report.schemaVersion = (await sql.value<number | null>(`SELECT max(version) FROM "${resolved.schema}".threadline_migrations`)) ?? 0;
      if (report.schemaVersion > POSTGRES_SCHEMA_VERSION) {
        problems.push(`The schema version is ${report.schemaVersion}, newer than this Threadline's ${POSTGRES_SCHEMA_VERSION}: upgrade Threadline.`);
      }
    }
  } catch (error) {
    problems.push(`${report.connected ? "Querying" : "Connecting to"} ${report.location} failed: ${error instanceof Error ? error.message : String(error)}.`);
  } finally {
    await pool.end().catch(() => {});
  }
  report.healthy = problems.length === 0;
  return report;
}
