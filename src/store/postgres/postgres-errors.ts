/**
 * The one place where PostgreSQL driver errors become Threadline errors. The
 * driver's error is kept as `cause`; nothing is ever turned into "no results".
 *
 * @module
 */
import { ConflictError, NotFoundError, StoreBusyError, StoreError, ThreadlineError } from "../errors.js";

/** SQLSTATEs after which a transaction is simply retried. */
const RETRYABLE = new Set(["40001", "40P01"]);

/** The SQLSTATE of a driver error, if any. */
export function pgCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** True for serialization failures and deadlocks: the transaction can be run again. */
export function isRetryable(error: unknown): boolean {
  const code = pgCode(error);
  return code !== undefined && RETRYABLE.has(code);
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "ECONNRESET", "EAI_AGAIN"]);

/** Translates a driver error (or passes a Threadline error through). `doing` says what was being done. */
export function translatePostgresError(error: unknown, doing: string, location = "the configured server"): ThreadlineError {
  if (error instanceof ThreadlineError) return error;
  const code = pgCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (code !== undefined) {
    if (CONNECTION_CODES.has(code) || code.startsWith("08") || code === "57P03") {
      return new StoreError(`Cannot reach PostgreSQL while ${doing}: is PostgreSQL running at ${location}? (${detail})`, { cause: error });
    }
    if (code === "28P01" || code === "28000") {
      return new StoreError(`PostgreSQL refused the login while ${doing} (${detail}). Check the user and password.`, {
        cause: error,
      });
    }
    if (code === "3D000") {
      return new StoreError(`The database in ${location} does not exist (${detail}). Create it first.`, { cause: error });
    }
    if (code === "23505") return new ConflictError(`A record already exists while ${doing} (${detail}).`, { cause: error });
    if (code === "23503") return new NotFoundError(`A referenced session does not exist while ${doing}.`, { cause: error });
    if (isRetryable(error) || code === "55P03") {
      return new StoreBusyError(`PostgreSQL kept hitting conflicting writers while ${doing}; nothing was written. Try again.`, {
        cause: error,
      });
    }
    if (code === "53100") {
      return new StoreError(`The PostgreSQL disk is full while ${doing}; nothing was written.`, { cause: error });
    }
  }
  return new StoreError(`PostgreSQL failed while ${doing}: ${detail}`, { cause: error });
}
