/**
 * The one place where SQLite driver errors become Threadline errors. The driver's
 * error is kept as `cause`; nothing is ever turned into "no results".
 *
 * @module
 */
import {
  ConflictError,
  NotFoundError,
  StoreBusyError,
  StoreError,
  ThreadlineError,
} from "../errors.js";

/** True when an error is SQLite's "the database is locked by another connection". */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/** Translates a driver error (or passes a Threadline error through). `doing` says what was being done. */
export function translateSqliteError(error: unknown, doing: string): ThreadlineError {
  if (error instanceof ThreadlineError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const detail = error instanceof Error ? error.message : String(error);
  if (typeof code === "string") {
    if (isSqliteBusy(error)) {
      return new StoreBusyError(
        `The database stayed locked by another process while ${doing}; nothing was written. Try again, or raise lockTimeoutMs.`,
        { cause: error },
      );
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
    if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB") {
      return new StoreError(`The database file is damaged or not a Threadline database (${detail}).`, { cause: error });
    }
  }
  return new StoreError(`SQLite failed while ${doing}: ${detail}`, { cause: error });
}
