/**
 * The better-sqlite3 side of {@link ReadOnlySqliteFile}: another program's file opened with
 * `readonly: true, fileMustExist: true`, driver errors turned into clear Threadline errors.
 *
 * @module
 */
import type Database from "better-sqlite3";
import { Database as SqliteDatabase } from "./sqlite-driver.js";
import { InvalidInputError, NotFoundError, StoreBusyError } from "../errors.js";
import type { ReadOnlySqliteFile, SqlValue } from "../read-only-sqlite-file.js";

/** How long a read waits for the owning program's write lock (rollback-journal files). */
const BUSY_TIMEOUT_MS = 5000;

/** Opens `path` read-only and checks that it is a readable SQLite database. */
export function openSqliteFileReadOnly(path: string): ReadOnlySqliteFile {
  let db: Database.Database;
  try {
    db = new SqliteDatabase(path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw translate(error, path, "opening it");
  }
  const run = <T>(doing: string, fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      throw translate(error, path, doing);
    }
  };
  // Reading the schema is what finds a file that is not a database at all.
  run("reading its schema", () => db.prepare("SELECT count(*) FROM sqlite_master").get());
  let closed = false;
  return {
    path,
    all: <T>(sql: string, params: readonly SqlValue[] = []) => run("reading it", () => db.prepare(sql).all(...params) as T[]),
    get: <T>(sql: string, params: readonly SqlValue[] = []) => run("reading it", () => db.prepare(sql).get(...params) as T | undefined),
    columns: (table: string) =>
      run("reading its schema", () => (db.prepare("SELECT name FROM pragma_table_info(?)").all(table) as Array<{ name: string }>).map((c) => c.name)),
    close: () => {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function translate(error: unknown, path: string, doing: string): Error {
  const code = (error as { code?: unknown } | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (code === "SQLITE_NOTADB") {
    return new InvalidInputError(`${path} is not a SQLite database (SQLite: "${detail}" while ${doing}). Check the path.`, { cause: error });
  }
  if (typeof code === "string" && code.startsWith("SQLITE_CANTOPEN")) {
    return new NotFoundError(`Cannot open ${path} for reading (SQLite: "${detail}"). Check the path and its permissions.`, { cause: error });
  }
  if (typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))) {
    return new StoreBusyError(`${path} stayed locked by the program that writes it while ${doing}; try again, or stop that program first.`, { cause: error });
  }
  if (typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_READONLY"))) {
    return new InvalidInputError(
      `${path} cannot be read as it is (SQLite: "${detail}" while ${doing}). ` +
        `If the program that writes it crashed, start and stop that program once so it recovers the file, then try again.`,
      { cause: error },
    );
  }
  return new InvalidInputError(`Reading ${path} failed while ${doing}: ${detail}`, { cause: error });
}
