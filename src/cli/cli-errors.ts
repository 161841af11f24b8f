/**
 * How a `threadline` command fails: the exit codes ({@link EXIT}), the one table from error
 * code to exit code, {@link CliError}, and the `threadline: <message>` line on stderr. It loads
 * nothing but the store's error classes (src/store/errors.ts, which imports nothing), so the
 * program table and every command definition can use it without loading the store.
 *
 * @module
 */
import { InvalidInputError, ThreadlineError, type ThreadlineErrorCode } from "../store/errors.js";
import type { CliIo } from "./cli-io.js";

/** Exit codes: 0 ok, 1 failure, 2 usage or bad input, 3 not found, 4 conflict / refused. */
export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3, conflict: 4 } as const;

/** One of the {@link EXIT} codes. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * Error code → exit code: the one table (a `Record` over every code, so a new code does not
 * compile until it has an exit code). Anything that is not a {@link ThreadlineError} exits 1.
 */
export const ERROR_EXIT_CODE: Readonly<Record<ThreadlineErrorCode, ExitCode>> = {
  TL_ERR_INVALID_INPUT: EXIT.usage,
  TL_ERR_USAGE: EXIT.usage,
  TL_ERR_AMBIGUOUS_ID: EXIT.usage,
  TL_ERR_BAD_REQUEST: EXIT.usage,
  TL_ERR_PAYLOAD_TOO_LARGE: EXIT.usage,
  TL_ERR_UNSUPPORTED_MEDIA_TYPE: EXIT.usage,
  TL_ERR_NOT_FOUND: EXIT.notFound,
  TL_ERR_CONFLICT: EXIT.conflict,
  TL_ERR_CONFIRMATION_REQUIRED: EXIT.conflict,
  TL_ERR_STORE_BUSY: EXIT.failure,
  TL_ERR_STORE_CLOSED: EXIT.failure,
  TL_ERR_SCHEMA_VERSION: EXIT.failure,
  TL_ERR_LEASE_LOST: EXIT.failure,
  TL_ERR_CORRUPT: EXIT.failure,
  TL_ERR_DRIVER_MISSING: EXIT.failure,
  TL_ERR_STORE: EXIT.failure,
  TL_ERR_INTERRUPTED: EXIT.failure,
  TL_ERR_TIMEOUT: EXIT.failure,
  TL_ERR_AGENT: EXIT.failure,
  TL_ERR_PLATFORM: EXIT.failure,
  TL_ERR_HANDOFF: EXIT.failure,
  TL_ERR_IO: EXIT.failure,
  TL_ERR_INCOMPLETE: EXIT.failure,
  TL_ERR_UNAUTHORIZED: EXIT.failure,
  TL_ERR_FORBIDDEN: EXIT.failure,
  TL_ERR_UNAVAILABLE: EXIT.failure,
  TL_ERR_INTERNAL: EXIT.failure,
};

/**
 * A failure of a command itself (a refused argument, a missing file, a refusal without
 * `--yes`); the message goes to stderr as is (an empty one prints nothing: the command
 * already said what was wrong). The exit code comes from `code` ({@link ERROR_EXIT_CODE}).
 *
 * @example
 * throw new CliError("TL_ERR_USAGE", "Use either --continue or --resume, not both."); // exit 2
 */
export class CliError extends ThreadlineError {
  constructor(code: ThreadlineErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** The exit code for an error: `ERROR_EXIT_CODE[error.code]` for a {@link ThreadlineError}, else 1. */
export function exitCodeOf(error: unknown): ExitCode {
  return error instanceof ThreadlineError ? ERROR_EXIT_CODE[error.code] : EXIT.failure;
}

/** Writes `threadline: <message>` to stderr and returns the exit code. */
export function reportError(io: CliIo, error: unknown): number {
  const message = error instanceof Error ? error.message : String(error);
  if (message !== "") io.stderr.write(`threadline: ${message}\n`);
  return exitCodeOf(error);
}

/** Parses a whole number option ≥ `min`. */
export function parseCount(value: string, name: string, min = 1): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new InvalidInputError(`${name} must be a whole number ≥ ${min} (got "${value}").`, { field: name });
  return n;
}
