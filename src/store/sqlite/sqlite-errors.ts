/**
 * The one place where SQLite driver errors become Threadline errors. The driver's
 * error is kept as `cause`; nothing is ever turned into "no results".
 *
 * @module
 */
import { ConflictError, DatabaseCorruptError, NotFoundError, StoreBusyError, StoreError, ThreadlineError } from "../errors.js";

/** True when an error is SQLite's "the database is locked by another connection". */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/** True when an error is SQLite's "the file is damaged" (`SQLITE_CORRUPT*`) or "not a database" (`SQLITE_NOTADB`). */
export function isSqliteCorrupt(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB");
}

/** A command line argument as a POSIX shell reads it (quoted only when needed). */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/u.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The one error for a damaged file, whatever was being done: it names the file, what SQLite
 * said, and the command that salvages what can be read.
 */
export function corruptDatabaseError(file: string, doing: string, error: unknown): DatabaseCorruptError {
  const detail = error instanceof Error ? error.message : String(error);
  return new DatabaseCorruptError(
    file,
    `The database file ${file} is damaged (SQLite: "${detail}" while ${doing}). ` +
      `Stop the processes that use it, then run "threadline doctor --repair --db ${shellWord(file)}": ` +
      "it copies every readable session into a fresh file and keeps the damaged one as a backup.",
    { cause: error },
  );
}

/**
 * Translates a driver error (or passes a Threadline error through). `doing` says what was
 * being done; `file` is the database file (named by the damaged-file error).
 */
export function translateSqliteError(error: unknown, doing: string, file = "(unknown file)"): ThreadlineError {
  if (error instanceof ThreadlineError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (typeof code === "string") {
    if (isSqliteBusy(error)) {
      return new StoreBusyError(`The database stayed locked by another process while ${doing}; nothing was written. Try again, or raise lockTimeoutMs.`, {
        cause: error,
      });
    }
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
      return new ConflictError(`A record already exists while ${doing} (${detail}).`, { cause: error });
    }
    if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") {
      return new NotFoundError(`A referenced session does not exist while ${doing}.`, { cause: error });
    }
    if (code === "SQLITE_FULL") {
      return new StoreError(`The disk is full while ${doing}; nothing was written. Free space and retry.`, { cause: error });
    }
    if (code === "SQLITE_READONLY" || code.startsWith("SQLITE_READONLY")) {
      return new StoreError(`The database is read-only while ${doing}. Check file permissions.`, { cause: error });
    }
    if (isSqliteCorrupt(error)) return corruptDatabaseError(file, doing, error);
  }
  return new StoreError(`SQLite failed while ${doing}: ${detail}`, { cause: error });
}
