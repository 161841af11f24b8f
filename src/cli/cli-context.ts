/**
 * What every `threadline` command shares: opening the database named by `--db` (else
 * THREADLINE_DB, else the default file), naming a session by id, unique id prefix or
 * title, and turning errors into a clear stderr line and an exit code.
 *
 * @module
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { defaultDatabasePath, NotFoundError, openSessionDB, type SessionDB, type SessionHistory } from "../store/index.js";
import { CliError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";

export { CliError, ERROR_EXIT_CODE, EXIT, exitCodeOf, parseCount, reportError, type ExitCode } from "./cli-errors.js";

/** A blank target (an empty THREADLINE_DB reaching `--db` through its environment binding) counts as none. */
function givenTarget(target: string | undefined): string | undefined {
  return target !== undefined && target.trim() !== "" ? target : undefined;
}

/**
 * The database a command uses: `target` (`--db`) unless blank, else THREADLINE_DB of `env`
 * unless blank, else the default file in `env`'s data home (`$THREADLINE_HOME/state.db`).
 */
export function databaseTarget(target: string | undefined, env: NodeJS.ProcessEnv): string {
  return givenTarget(target) ?? givenTarget(env["THREADLINE_DB"]) ?? defaultDatabasePath(env);
}

/**
 * Opens the database for a command that may create it (chat, serve, import, api) and always
 * closes it. A blank `target` counts as none (THREADLINE_DB of `env`, else the default file).
 */
export async function withDatabase<T>(target: string | undefined, env: NodeJS.ProcessEnv, run: (db: SessionDB) => Promise<T>): Promise<T> {
  const db = await openSessionDB(databaseTarget(target, env));
  try {
    return await run(db);
  } finally {
    await db.close();
  }
}

/**
 * The SQLite file a target names when that file does not exist (the path as given, with
 * `file://` taken off), else `null`: an existing file, or a URL (`postgres://`, or a scheme
 * `openSessionDB` refuses with its own message: the data does not live in a local file).
 */
export async function missingDatabaseFile(chosen: string): Promise<string | null> {
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//iu.test(chosen) && !/^file:\/\//iu.test(chosen);
  if (isUrl) return null;
  const path = chosen.replace(/^file:\/\//iu, "");
  const missing = await stat(path).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === "ENOENT" || error.code === "ENOTDIR",
  );
  return missing ? path : null;
}

/** A path as given, with its absolute form when that differs. */
function shownPath(path: string): string {
  return resolve(path) === path ? path : `${path} (${resolve(path)})`;
}

/** The refusal of a missing database file the user named (`--db`, THREADLINE_DB, the config file's `database`). */
function namedDatabaseMissing(path: string, fromEnvOnly: boolean): CliError {
  return new CliError(
    "TL_ERR_NOT_FOUND",
    `No database at ${shownPath(path)}. Check the path (${fromEnvOnly ? "THREADLINE_DB" : "--db, THREADLINE_DB or the config file's database"}); only chat, serve, import and api create a new database.`,
  );
}

/**
 * Opens a database that must already exist, for a command that serves it (`mcp`) or needs
 * it to be there: a SQLite file that does not exist is refused with exit 3 naming the path,
 * and nothing is created (a mistyped `--db` would otherwise leave an empty database and its
 * directories behind). A `postgres://` URL is opened as is: the database lives on the server.
 * Reading commands use {@link openReadableDatabase} instead, where a missing default
 * database reads as empty.
 *
 * @param target `--db` as given (blank or missing: THREADLINE_DB of `env`, else the default file).
 * @param env The environment of the run (THREADLINE_DB, THREADLINE_HOME).
 * @throws {CliError} `TL_ERR_NOT_FOUND` (exit 3) when the file does not exist.
 * @example
 * const db = await openExistingDatabase(options.db, io.env);
 * try { … } finally { await db.close(); }
 */
export async function openExistingDatabase(target: string | undefined, env: NodeJS.ProcessEnv): Promise<SessionDB> {
  const given = givenTarget(target);
  const fromEnv = givenTarget(env["THREADLINE_DB"]);
  const chosen = databaseTarget(target, env);
  const missing = await missingDatabaseFile(chosen);
  if (missing !== null) {
    if (given === undefined && fromEnv === undefined) {
      throw new CliError(
        "TL_ERR_NOT_FOUND",
        `No database at ${shownPath(missing)}: nothing has been stored yet. Start a conversation with "threadline chat" (or run "threadline serve"), or name another database with --db or THREADLINE_DB.`,
      );
    }
    throw namedDatabaseMissing(missing, given === undefined);
  }
  return openSessionDB(chosen);
}

/** What a reading command reads ({@link openReadableDatabase}). */
export interface ReadableDatabase {
  db: SessionDB;
  /** Where the data lives: the database's location, or the default file's path when it does not exist yet. */
  location: string;
  /**
   * The default database (no `--db`, THREADLINE_DB or config file `database`) does not exist
   * yet: nothing has been stored, `db` is an empty in-memory database and nothing was created.
   */
  notCreatedYet: boolean;
}

/** The target of an empty database that lives in memory only (nothing on disk). */
const EMPTY_IN_MEMORY = ":memory:";

/**
 * Opens the database of a command that only reads or changes what is stored (list, show,
 * search, export, stats, insights, browse, rename, delete, prune). A missing SQLite file the
 * user named (`--db`, THREADLINE_DB, the config file's `database`) is refused with exit 3
 * naming the path, and nothing is created. The DEFAULT database missing is a first run, not
 * an error: the command reads an empty database (in memory; nothing is created on disk), so
 * `list` says "No sessions yet.", a search finds nothing, `prune` has nothing to do and
 * `show <x>` is "not found". A `postgres://` URL is opened as is.
 *
 * @param target `--db` as given (blank or missing: THREADLINE_DB of `env`, else the default file).
 * @param env The environment of the run (THREADLINE_DB, THREADLINE_HOME).
 * @throws {CliError} `TL_ERR_NOT_FOUND` (exit 3) when a file the user named does not exist.
 */
export async function openReadableDatabase(target: string | undefined, env: NodeJS.ProcessEnv): Promise<ReadableDatabase> {
  const given = givenTarget(target);
  const fromEnv = givenTarget(env["THREADLINE_DB"]);
  const chosen = databaseTarget(target, env);
  const missing = await missingDatabaseFile(chosen);
  if (missing === null) {
    const db = await openSessionDB(chosen);
    return { db, location: db.location, notCreatedYet: false };
  }
  if (given !== undefined || fromEnv !== undefined) throw namedDatabaseMissing(missing, given === undefined);
  return { db: await openSessionDB(EMPTY_IN_MEMORY), location: resolve(missing), notCreatedYet: true };
}

/**
 * {@link openReadableDatabase} for the length of `run`, closed afterwards; `run` also gets
 * where the data lives and whether the default database does not exist yet.
 */
export async function withExistingDatabase<T>(
  target: string | undefined,
  env: NodeJS.ProcessEnv,
  run: (db: SessionDB, where: Omit<ReadableDatabase, "db">) => Promise<T>,
): Promise<T> {
  const { db, ...where } = await openReadableDatabase(target, env);
  try {
    return await run(db, where);
  } finally {
    await db.close();
  }
}

/** What {@link resolveSessionRef} may tell the person about the session it took. */
export interface SessionRefOptions {
  /**
   * Called with one line when the name could have meant other sessions too (lineage variants
   * `t #N`, collision forms `t (N)`, a session whose id starts with the title), naming the one
   * taken and the others. The CLI writes it to stderr.
   */
  note?: (line: string) => void;
}

/** How many other sessions a note or a not-found error names. */
const SHOWN_ALTERNATIVES = 5;

/**
 * The id of the session named by `ref`: an exact id, then the session holding exactly that
 * title, then a unique id prefix. A title never stands for another member of its lineage
 * ("my project" is never "my project #3"): to continue the newest session of a compression
 * chain, follow its parent links from the session found here. Ambiguous prefixes and unknown
 * names are clear errors; a not-found title lists the similar titles there are.
 */
export async function resolveSessionRef(db: SessionHistory, ref: string, options: SessionRefOptions = {}): Promise<string> {
  if (typeof ref !== "string" || ref.trim() === "") throw new CliError("TL_ERR_USAGE", "Name a session by its id, an id prefix or its title.");
  const exact = await db.getSession(ref);
  if (exact !== null) return exact.id;
  const byTitle = await db.resolveByTitle(ref);
  if (byTitle !== null) {
    if (options.note !== undefined) {
      const others = (await db.similarTitles(ref, SHOWN_ALTERNATIVES)).map((s) => `"${s.title}" (${s.id})`);
      const prefixed = await db.resolveSessionId(ref).catch(() => null);
      if (prefixed !== null && prefixed !== byTitle) others.push(`the session whose id starts "${ref}" (${prefixed})`);
      if (others.length > 0) {
        const title = (await db.getSession(byTitle))?.title ?? ref;
        options.note(
          `took the session titled exactly "${title}" (${byTitle}); also like it: ${others.join(", ")}. Name one by its full title or id to take it instead.`,
        );
      }
    }
    return byTitle;
  }
  const byPrefix = await db.resolveSessionId(ref);
  if (byPrefix !== null) return byPrefix;
  const candidates = (await db.listSessions({ limit: 1000, includeChildren: true })).items.filter((s) => s.id.startsWith(ref));
  if (candidates.length > 1) {
    const shown = candidates
      .slice(0, SHOWN_ALTERNATIVES)
      .map((s) => `  ${s.id}${s.title ? `  ${s.title}` : ""}`)
      .join("\n");
    throw new CliError("TL_ERR_AMBIGUOUS_ID", `"${ref}" matches ${candidates.length} sessions; give more of the id:\n${shown}`);
  }
  const similar = await db.similarTitles(ref, SHOWN_ALTERNATIVES);
  if (similar.length > 0) {
    throw new NotFoundError(
      `No session is titled exactly "${ref}" (titles are case-sensitive) or has an id starting with it; similar titles: ${similar.map((s) => `"${s.title}" (${s.id})`).join(", ")}. Name one of them.`,
    );
  }
  throw new NotFoundError(`No session with the id, id prefix or title "${ref}". Run "threadline sessions list" to see them.`);
}

/** A {@link SessionRefOptions.note} that writes `threadline: <line>` to stderr. */
export function noteOnStderr(io: CliIo): (line: string) => void {
  return (line) => io.stderr.write(`threadline: ${line}\n`);
}
