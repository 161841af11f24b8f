/**
 * Errors thrown by every {@link SessionDB} backend. Each carries a stable `code`
 * that callers (CLI, HTTP server) map to exit codes or statuses; the message says
 * what was wrong and what to do.
 *
 * @module
 */

/** Stable error codes. See docs/errors.md for what each means and how to solve it. */
export type ThreadlineErrorCode =
  | "TL_ERR_INVALID_INPUT"
  | "TL_ERR_NOT_FOUND"
  | "TL_ERR_CONFLICT"
  | "TL_ERR_STORE_BUSY"
  | "TL_ERR_STORE_CLOSED"
  | "TL_ERR_SCHEMA_VERSION"
  | "TL_ERR_LEASE_LOST"
  | "TL_ERR_AMBIGUOUS_ID"
  | "TL_ERR_CORRUPT"
  | "TL_ERR_DRIVER_MISSING"
  | "TL_ERR_STORE";

/** Base class of every error Threadline throws on purpose. */
export class ThreadlineError extends Error {
  /** A stable machine-readable code (never changes between releases). */
  readonly code: ThreadlineErrorCode;

  constructor(code: ThreadlineErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** The caller passed something invalid (bad id, empty role, title too long, bad cursor…). Nothing was written. */
export class InvalidInputError extends ThreadlineError {
  /** Which argument or field was wrong, when known (e.g. `"title"`, `"messages[2].role"`). */
  readonly field: string | undefined;

  constructor(message: string, options?: { field?: string; cause?: unknown }) {
    super("TL_ERR_INVALID_INPUT", message, options);
    this.field = options?.field;
  }
}

/** A named session (or other record) does not exist. */
export class NotFoundError extends ThreadlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TL_ERR_NOT_FOUND", message, options);
  }
}

/**
 * The request conflicts with stored state: a title held by another session, an
 * append to an ended session, a duplicate id.
 */
export class ConflictError extends ThreadlineError {
  /** The session id the conflict is with, when there is one (e.g. the holder of a title). */
  readonly sessionId: string | undefined;

  constructor(message: string, options?: { sessionId?: string; cause?: unknown }) {
    super("TL_ERR_CONFLICT", message, options);
    this.sessionId = options?.sessionId;
  }
}

/** Another process held the database lock for longer than the configured lock timeout. Nothing was written. */
export class StoreBusyError extends ThreadlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TL_ERR_STORE_BUSY", message, options);
  }
}

/** The store was used after `close()`. */
export class StoreClosedError extends ThreadlineError {
  constructor(message = "The session database is closed; open it again with openSessionDB().") {
    super("TL_ERR_STORE_CLOSED", message);
  }
}

/** The database was written by a newer Threadline than this one; upgrade Threadline to open it. */
export class SchemaVersionError extends ThreadlineError {
  readonly found: number;
  readonly supported: number;

  constructor(found: number, supported: number) {
    super(
      "TL_ERR_SCHEMA_VERSION",
      `The database has schema version ${found}, but this Threadline supports up to ${supported}. ` +
        `Upgrade Threadline to open it (the database was left untouched).`,
    );
    this.found = found;
    this.supported = supported;
  }
}

/**
 * A fenced write (`options.fence`, `RouteWrite.fence`) found that the lease it names is no
 * longer held with its token: another holder took the key over (after an expiry) or the
 * lease was released. Nothing was written; the caller must stop the turn it was running.
 */
export class LeaseLostError extends ThreadlineError {
  /** The leased session key. */
  readonly key: string;
  /** The token the write presented. */
  readonly token: number;
  /** The key's current token, or `null` when the lease is released or was never taken. */
  readonly currentToken: number | null;

  constructor(key: string, token: number, currentToken: number | null) {
    super(
      "TL_ERR_LEASE_LOST",
      `The lease on "${key}" is no longer held with token ${token} (` +
        (currentToken === null ? "it is released or was never taken" : `the current token is ${currentToken}`) +
        "); nothing was written. Stop this turn: another holder owns the key now (acquire the lease again to continue).",
    );
    this.key = key;
    this.token = token;
    this.currentToken = currentToken;
  }
}

/** One record an ambiguous id could mean (see {@link AmbiguousIdError}). */
export interface AmbiguousIdCandidate {
  id: string;
  /** What it is, e.g. `"agent"` or `"workflow"`. */
  kind: string;
  name: string;
  /** Epoch seconds. */
  updatedAt: number;
}

/**
 * A partial id (a prefix or a base id) matches several records and nothing decides between
 * them. `.candidates` lists up to 5 of them; `.more` says whether there are others.
 */
export class AmbiguousIdError extends ThreadlineError {
  /** The id as the caller gave it. */
  readonly input: string;
  readonly candidates: readonly AmbiguousIdCandidate[];
  /** True when more records match than are listed. */
  readonly more: boolean;

  constructor(input: string, candidates: readonly AmbiguousIdCandidate[], more: boolean) {
    super(
      "TL_ERR_AMBIGUOUS_ID",
      `The id '${input}' is ambiguous: it matches ${candidates.map((c) => c.id).join(", ")}${more ? " and more" : ""}. ` +
        "Give more of the id.",
    );
    this.input = input;
    this.candidates = candidates;
    this.more = more;
  }
}

/**
 * The database file is damaged (SQLite's `SQLITE_CORRUPT*`) or is not a SQLite database at
 * all (`SQLITE_NOTADB`: a damaged header, a truncated file, or a path that names some other
 * file). `.location` is the file; the message names it and says to run
 * `threadline doctor --repair`, which copies every readable session into a fresh file and
 * keeps the damaged one as a backup. The driver's error is `.cause`.
 */
export class DatabaseCorruptError extends ThreadlineError {
  /** The damaged database file. */
  readonly location: string;

  constructor(location: string, message: string, options?: { cause?: unknown }) {
    super("TL_ERR_CORRUPT", message, options);
    this.location = location;
  }
}

/**
 * The database driver a target needs is not installed: `pg` for a `postgres://` URL (an
 * optional peer dependency, so SQLite-only installs stay small). Nothing was opened.
 */
export class DriverMissingError extends ThreadlineError {
  /** The npm package to install (e.g. `pg`). */
  readonly driver: string;

  constructor(driver: string, message: string, options?: { cause?: unknown }) {
    super("TL_ERR_DRIVER_MISSING", message, options);
    this.driver = driver;
  }
}

/** An unexpected storage failure (disk full, read-only file…), with the driver's error as `cause`. */
export class StoreError extends ThreadlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TL_ERR_STORE", message, options);
  }
}
