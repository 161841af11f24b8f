/**
 * Reading another program's SQLite file without ever writing to it (an import source such as
 * hermes-agent's `state.db`). The core knows only this interface; the driver is loaded with
 * `import()` from the SQLite backend folder, the one place that may use it.
 *
 * @module
 */
import { stat } from "node:fs/promises";
import { InvalidInputError, NotFoundError } from "./errors.js";

/** A SQL parameter. */
export type SqlValue = string | number | bigint | null;

/**
 * A SQLite file opened read-only (`readonly: true, fileMustExist: true`): it is never written,
 * whatever is run on it. Queries run synchronously; each is its own read snapshot.
 */
export interface ReadOnlySqliteFile {
  /** The file, as given. */
  readonly path: string;
  /** Every row of a query. */
  all<T>(sql: string, params?: readonly SqlValue[]): T[];
  /** The first row of a query, or `undefined`. */
  get<T>(sql: string, params?: readonly SqlValue[]): T | undefined;
  /** The columns of a table (empty when there is no such table). */
  columns(table: string): string[];
  /** Closes the file (idempotent). */
  close(): void;
}

/**
 * Opens `path` read-only. The file is never written; SQLite may create empty `-wal` and `-shm`
 * companions beside a WAL-mode file that no process has open (it needs them to read one).
 *
 * @throws {NotFoundError} when there is no file at `path`.
 * @throws {InvalidInputError} when `path` is a directory, or not a SQLite database, or cannot be read.
 * @example
 * const file = await openReadOnlySqliteFile("/home/me/.hermes/state.db");
 * try { console.log(file.columns("sessions")); } finally { file.close(); }
 */
export async function openReadOnlySqliteFile(path: string): Promise<ReadOnlySqliteFile> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT" || error.code === "ENOTDIR") throw new NotFoundError(`No file at ${path}.`, { cause: error });
    throw new InvalidInputError(`Cannot read ${path}: ${error.message}`, { cause: error });
  });
  if (info.isDirectory()) throw new InvalidInputError(`${path} is a directory; name the database file itself.`);
  const { openSqliteFileReadOnly } = await import("./sqlite/sqlite-read-only-file.js");
  return openSqliteFileReadOnly(path);
}
