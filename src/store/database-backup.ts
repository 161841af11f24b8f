/**
 * `backupDatabase`: the online backup behind `threadline db backup`, for the backend a
 * target names (SQLite only; the SQLite module is loaded only when used). A PostgreSQL target
 * is refused with the `pg_dump` command that backs it up instead.
 *
 * @module
 */
import type { BackupOptions, BackupReport } from "./backup-report.js";
import { InvalidInputError } from "./errors.js";
import { chooseDatabaseTarget } from "./open-session-db.js";

/**
 * Backs up a live SQLite database to `destination` through SQLite's online backup API, while
 * other processes keep writing: the copy goes to a temp file beside `destination` (mode
 * 0600), is checked (integrity, schema version), made standalone (no `-wal`), flushed to disk
 * and renamed into place. Stored attachments live inside the database file, so the copy holds
 * them too. The target is resolved as {@link openSessionDB} resolves it.
 *
 * @throws {InvalidInputError} for a PostgreSQL target (the message gives the `pg_dump` command).
 * @throws {NotFoundError} when there is no file at the target, or the destination's directory does not exist.
 * @throws {ConflictError} when the destination exists and `options.force` is not set.
 * @throws {DatabaseCorruptError} when the copy fails its integrity check.
 * @example
 * const report = await backupDatabase("/var/lib/threadline/state.db", "/backups/state-2026-11-28.db");
 * console.log(`${report.sessions} sessions, ${report.bytes} bytes`);
 */
export async function backupDatabase(target: string | undefined, destination: string, options: BackupOptions = {}): Promise<BackupReport> {
  const chosen = chooseDatabaseTarget(target);
  if (chosen.backend === "postgres") {
    throw new InvalidInputError(
      `"threadline db backup" copies SQLite files; ${redactedUrl(chosen.url)} is a PostgreSQL database, which pg_dump backs up while the gateway runs:\n` +
        `  ${pgDumpCommand(chosen.url, chosen.schema, destination)}\n` +
        "pg_dump takes the password from PGPASSWORD or ~/.pgpass, never from the command line; restore with pg_restore (docs/deploy.md, Backups).",
      { field: "db" },
    );
  }
  const { backupSqlite } = await import("./sqlite/sqlite-backup.js");
  return backupSqlite(chosen.path, destination, options);
}

/** A PostgreSQL URL without its password. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === "") return url;
    parsed.password = "";
    return parsed.toString().replace(/:@/u, "@");
  } catch {
    return url.replace(/:\/\/([^:/@]+):[^@]*@/u, "://$1@");
  }
}

/** A word as a POSIX shell reads it (quoted only when needed). */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/u.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The `pg_dump` command that backs up Threadline's schema of the database `url` names into
 * `destination` (custom format, for pg_restore), the password left out.
 *
 * @example
 * pgDumpCommand("postgres://tl:secret@db:5432/app", "threadline", "/backups/tl.dump");
 * // pg_dump --format=custom --schema=threadline --file=/backups/tl.dump postgres://tl@db:5432/app
 */
export function pgDumpCommand(url: string, schema: string | undefined, destination: string): string {
  return `pg_dump --format=custom --schema=${shellWord(schema ?? "public")} --file=${shellWord(destination)} ${shellWord(redactedUrl(url))}`;
}
