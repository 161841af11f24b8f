/**
 * `diagnoseDatabase` and `repairDatabase`: the checks and the salvage repair behind
 * `threadline doctor`, for the backend a target names (loaded only when used).
 *
 * @module
 */
import type { DoctorReport, RepairReport } from "./doctor-report.js";
import { InvalidInputError } from "./errors.js";
import { checkReportMedia } from "./media-doctor.js";
import { chooseDatabaseTarget } from "./open-session-db.js";

/**
 * Checks a database without changing it. SQLite: integrity, the search index, schema
 * version, WAL and free space. PostgreSQL: connectivity, schema version and the server's
 * view. Both: that every attachment reference resolves (`media`, through the store, when the
 * other checks allow opening it). The target is resolved as {@link openSessionDB} resolves it.
 *
 * @throws {NotFoundError} when a SQLite target names no file.
 * @example
 * const report = await diagnoseDatabase("/tmp/state.db");
 * if (!report.healthy) console.log(report.problems.join("\n"));
 */
export async function diagnoseDatabase(target?: string, options: DiagnoseOptions = {}): Promise<DoctorReport> {
  const chosen = chooseDatabaseTarget(target);
  let report: DoctorReport;
  if (chosen.backend === "postgres") {
    const { diagnosePostgres } = await import("./postgres/postgres-doctor.js");
    report = await diagnosePostgres({ connectionString: chosen.url, ...(chosen.schema === undefined ? {} : { schema: chosen.schema }) });
  } else {
    const { diagnoseSqlite } = await import("./sqlite/sqlite-doctor.js");
    report = diagnoseSqlite(chosen.path);
  }
  await checkReportMedia(report, target, { verify: options.verifyMedia === true });
  return report;
}

/** Options of {@link diagnoseDatabase}. */
export interface DiagnoseOptions {
  /** Re-hash every stored attachment (reads every blob; default false: references only). */
  verifyMedia?: boolean;
}

/**
 * Salvages a damaged SQLite file: copies every readable session, message and other row into
 * a fresh file made by the normal migrations, rebuilds the search index, keeps the damaged
 * file as `<file>.damaged-<timestamp>` (with its `-wal`/`-shm`) and puts the fresh file in
 * its place. The report says what could not be read.
 *
 * @throws {InvalidInputError} for a PostgreSQL target (repair is SQLite-only).
 * @throws {NotFoundError} when there is no file.
 * @throws {ConflictError} when another process has the database open.
 */
export async function repairDatabase(target?: string, options: { now?: Date } = {}): Promise<RepairReport> {
  const chosen = chooseDatabaseTarget(target);
  if (chosen.backend === "postgres") {
    throw new InvalidInputError("Repair is for SQLite files only; a PostgreSQL server keeps its data safe itself (restore from its backups).", {
      field: "target",
    });
  }
  const { repairSqlite } = await import("./sqlite/sqlite-repair.js");
  return repairSqlite(chosen.path, options);
}
