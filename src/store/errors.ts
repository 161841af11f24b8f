/**
 * The error family of Threadline: every error it throws on purpose is a
 * {@link ThreadlineError} with a stable `code`. The store's errors live here, and so do the
 * codes of every other part (the CLI, the HTTP API, the gateway, agents, adapters), so that
 * the one list below is every code there is. The CLI maps a code to an exit code and the HTTP
 * server to a status, each in one table; the message says what was wrong and what to do.
 * This file imports nothing else from the project.
 *
 * @module
 */

/**
 * Every stable error code, in the order docs/errors.md lists them. A code never changes
 * meaning between releases; new codes may be added.
 */
export const THREADLINE_ERROR_CODES = [
  // The store (and every caller that validates input).
  "TL_ERR_INVALID_INPUT",
  "TL_ERR_NOT_FOUND",
  "TL_ERR_CONFLICT",
  "TL_ERR_STORE_BUSY",
  "TL_ERR_STORE_CLOSED",
  "TL_ERR_SCHEMA_VERSION",
  "TL_ERR_LEASE_LOST",
  "TL_ERR_AMBIGUOUS_ID",
  "TL_ERR_CORRUPT",
  "TL_ERR_DRIVER_MISSING",
  "TL_ERR_STORE",
  // Running turns, agents and chat platforms.
  "TL_ERR_INTERRUPTED",
  "TL_ERR_TIMEOUT",
  "TL_ERR_AGENT",
  "TL_ERR_PLATFORM",
  "TL_ERR_HANDOFF",
  // The command line.
  "TL_ERR_USAGE",
  "TL_ERR_CONFIRMATION_REQUIRED",
  "TL_ERR_IO",
  "TL_ERR_INCOMPLETE",
  // The HTTP API.
  "TL_ERR_UNAUTHORIZED",
  "TL_ERR_FORBIDDEN",
  "TL_ERR_BAD_REQUEST",
  "TL_ERR_PAYLOAD_TOO_LARGE",
  "TL_ERR_UNSUPPORTED_MEDIA_TYPE",
  "TL_ERR_UNAVAILABLE",
  // Anywhere: a bug in Threadline.
  "TL_ERR_INTERNAL",
] as const;

/** Stable error codes. See docs/errors.md for what each means and how to solve it. */
export type ThreadlineErrorCode = (typeof THREADLINE_ERROR_CODES)[number];

/**
 * Base class of every error Threadline throws on purpose. Branch on `.code`, never on the
 * class name or the message. `.name` is the subclass's name (`NotFoundError`, `CliError`…).
 */
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

/**
 * A write that claims inbound platform messages (`RouteWrite.claims`) found one of them claimed
 * already: another process (a gateway replica) stored that message first. Nothing was written;
 * the message is a duplicate and must not be answered again.
 */
export class InboundClaimedError extends ConflictError {
  /** The platform of the message. */
  readonly platform: string;
  /** Its chat. */
  readonly chat: string;
  /** The platform's message id. */
  readonly messageId: string;

  constructor(claim: { platform: string; chat: string; messageId: string }) {
    super(
      `The ${claim.platform} message ${claim.messageId} of chat ${claim.chat} was already taken (by this or another gateway replica); nothing was written.`,
    );
    this.platform = claim.platform;
    this.chat = claim.chat;
    this.messageId = claim.messageId;
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
      `The id '${input}' is ambiguous: it matches ${candidates.map((c) => c.id).join(", ")}${more ? " and more" : ""}. Give more of the id.`,
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

/**
 * A running turn was stopped before it finished: `/stop`, a newer message that interrupts,
 * a shutdown, or the caller's abort signal. `partial` holds what the turn produced before the
 * stop (the gateway stores it), `usage` what it used. Agents throw it (or its subclass
 * `AgentInterruptedError` of `threadline/agents`) when their signal aborts; the gateway
 * catches it by this class, so it never loads the agents module.
 *
 * @typeParam TPartial - One produced message (`NewMessage` for agents).
 * @typeParam TUsage - The usage so far (`UsageUpdate` for agents).
 */
export class InterruptedError<TPartial = unknown, TUsage = unknown> extends ThreadlineError {
  /** What the turn produced before it was stopped (may be empty). */
  readonly partial: TPartial[];
  /** Tokens and calls used before the stop, when known. */
  readonly usage: TUsage | undefined;

  constructor(message = "The turn was interrupted.", options: { partial?: TPartial[]; usage?: TUsage; cause?: unknown } = {}) {
    super("TL_ERR_INTERRUPTED", message, { cause: options.cause });
    this.partial = options.partial ?? [];
    this.usage = options.usage;
  }
}

/**
 * A chat platform (or the endpoint an adapter delivers to) refused a call, answered with
 * something unusable, or could not be reached. `.platform` names it (`telegram`, `signal`…);
 * the message says what failed and what to check (a token, a permission, the service's
 * address). The platform's own error, with secrets removed, is `.cause` when there is one.
 */
export class PlatformError extends ThreadlineError {
  /** The platform whose call failed. */
  readonly platform: string;
  /**
   * The platform's own code for the failure, when it gave one: Matrix's `errcode`
   * (`M_FORBIDDEN`), a WhatsApp Graph API code (`131047`), Slack's `error` (`channel_not_found`).
   */
  readonly platformCode: string | number | null;

  constructor(platform: string, message: string, options: { platformCode?: string | number | null; cause?: unknown } = {}) {
    super("TL_ERR_PLATFORM", message, { cause: options.cause });
    this.platform = platform;
    this.platformCode = options.platformCode ?? null;
  }
}

/**
 * A bug in Threadline: an invariant it relies on did not hold (a row vanished under its own
 * lock, a helper was called without what it needs). Nothing the caller did can fix it;
 * report it with the message.
 */
export class InternalError extends ThreadlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("TL_ERR_INTERNAL", `${message} (this is a bug in Threadline; please report it)`, options);
  }
}
