/**
 * `threadline db backup` on a SQLite file: a consistent copy of a live database through
 * SQLite's online backup API (better-sqlite3's `db.backup()`), while other processes (a
 * running gateway) keep writing. The copy is written under a temp name beside the
 * destination with mode 0600, verified (integrity, schema version), switched out of WAL
 * mode so the one file stands alone, flushed to disk and renamed into place: the destination
 * is either the old file or the whole new one, never half a copy.
 *
 * @module
 */
import type Database from "better-sqlite3";
import { Database as SqliteDatabase } from "./sqlite-driver.js";
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, openSync, realpathSync, renameSync, rmSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { BackupOptions, BackupReport } from "../backup-report.js";
import { ConflictError, DatabaseCorruptError, InterruptedError, InvalidInputError, NotFoundError, StoreError } from "../errors.js";
import { isSqliteCorrupt, translateSqliteError } from "./sqlite-errors.js";

/** Pages copied per step by default while nobody else writes (16 MiB at 4 KiB pages): the event loop gets a turn between steps. */
const PAGES_PER_STEP = 4096;

/** "All the rest in one step" for better-sqlite3 (its largest rate). */
const ALL_PAGES = 0x7fffffff;

/** How long the source connection waits for a lock (a WAL reader rarely waits at all). */
const BUSY_TIMEOUT_MS = 10_000;

/** The backup file's mode: it holds private conversations, so its owner only. */
const BACKUP_MODE = 0o600;

/** The status of a path: `null` when nothing is there. */
function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

/** Checks the destination before anything is copied; returns whether a file there will be replaced. */
function checkDestination(source: string, destination: string, force: boolean): boolean {
  const dir = dirname(destination);
  const dirStat = statOrNull(dir);
  if (dirStat === null || !dirStat.isDirectory()) {
    throw new NotFoundError(
      `The directory ${dir} does not exist${dirStat === null ? "" : " (it is a file)"}, so the backup ${destination} cannot be written there. ` +
        `Create it first (mkdir -p ${dir}) or name a file in a directory that exists.`,
    );
  }
  const existing = statOrNull(destination);
  if (existing?.isDirectory()) {
    throw new InvalidInputError(`${destination} is a directory; name the backup file itself, e.g. ${join(destination, "state-backup.db")}.`, {
      field: "file",
    });
  }
  if (existing !== null && realpathSync(destination) === realpathSync(source)) {
    throw new InvalidInputError(`${destination} is the database itself; name another file for the backup.`, { field: "file" });
  }
  const leftovers = ["-wal", "-shm", "-journal"].filter((suffix) => statOrNull(`${destination}${suffix}`) !== null);
  if (!force && (existing !== null || leftovers.length > 0)) {
    const what = existing !== null ? `${destination} already exists` : `${destination}${leftovers[0]} (a file SQLite left beside it) exists`;
    throw new ConflictError(`${what}; nothing was written. Pass --force to replace it, or name a new file.`);
  }
  return existing !== null;
}

/** Removes a file and the files SQLite keeps beside it. */
function removeWithSidecars(path: string): void {
  for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
}

/** Whether `table` exists in the database. */
function hasTable(db: Database.Database, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) !== undefined;
}

/** Flushes a file (or a directory's entries) to disk. A directory that cannot be opened for it (some systems) is skipped. */
function fsyncPath(path: string, directory = false): void {
  let fd: number;
  try {
    fd = openSync(path, directory ? "r" : "r+");
  } catch (error) {
    if (directory) return;
    throw error;
  }
  try {
    fsyncSync(fd);
  } catch (error) {
    if (!directory) throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies the live database at `source` through SQLite's online backup API into a temp file
 * beside `destination`, verifies the copy, and renames it into place.
 *
 * Under write load from other processes SQLite starts the copy over whenever the source
 * changes between two steps; after the first restart the rest is copied in one step, which
 * holds one read snapshot for its length (in WAL mode writers go on meanwhile), so the backup
 * always finishes and is one consistent point in time.
 *
 * @throws {NotFoundError} when there is no file at `source`, or the destination's directory does not exist.
 * @throws {ConflictError} when the destination exists and `force` is not set.
 * @throws {InvalidInputError} when the destination is a directory or the database itself, or the source is not a Threadline database.
 * @throws {DatabaseCorruptError} when the copy fails its integrity check (the source is damaged: run doctor).
 */
export async function backupSqlite(sourcePath: string, destinationPath: string, options: BackupOptions = {}): Promise<BackupReport> {
  const started = performance.now();
  const source = resolve(sourcePath);
  const destination = resolve(destinationPath);
  if (statOrNull(source)?.isFile() !== true)
    throw new NotFoundError(`There is no database file at ${source}; nothing to back up. Check --db (or THREADLINE_DB).`);
  const step = options.pagesPerStep ?? PAGES_PER_STEP;
  if (!Number.isSafeInteger(step) || step < 1)
    throw new InvalidInputError(`pagesPerStep must be a whole number of at least 1, not ${step}.`, { field: "pagesPerStep" });
  const replaced = checkDestination(source, destination, options.force === true);
  const stopIfAsked = (): void => {
    if (options.signal?.aborted === true) {
      throw new InterruptedError(`The backup was interrupted; nothing was written to ${destination} (the partial copy was removed).`);
    }
  };
  stopIfAsked();

  let db: Database.Database;
  try {
    db = new SqliteDatabase(source, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (error) {
    throw translateSqliteError(error, `opening ${source} for a backup`, source);
  }
  const temp = join(dirname(destination), `.${basename(destination)}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    let schemaVersion: number;
    try {
      schemaVersion = db.pragma("user_version", { simple: true }) as number;
      if (!hasTable(db, "sessions") || !hasTable(db, "messages")) {
        throw new InvalidInputError(`${source} is a SQLite file but not a Threadline database (it has no sessions and messages tables); nothing was copied.`, {
          field: "db",
        });
      }
    } catch (error) {
      throw translateSqliteError(error, `reading ${source} for a backup`, source);
    }
    // The file exists with its final mode before a byte of history is in it; SQLite gives its
    // journal the same mode.
    closeSync(openSync(temp, "wx", BACKUP_MODE));
    chmodSync(temp, BACKUP_MODE);

    let restarts = 0;
    let lastCopied = -1;
    let pages = 0;
    try {
      const done = await db.backup(temp, {
        progress: ({ totalPages, remainingPages }) => {
          stopIfAsked();
          const copied = totalPages - remainingPages;
          // A pass that copied no more than the last one means SQLite started over (another process wrote).
          if (lastCopied > 0 && copied <= lastCopied) restarts++;
          lastCopied = copied;
          options.onProgress?.(copied, totalPages);
          return restarts > 0 ? ALL_PAGES : step;
        },
      });
      pages = done.totalPages;
    } catch (error) {
      throw translateSqliteError(error, `copying ${source} to ${temp}`, source);
    }
    stopIfAsked();
    options.onProgress?.(pages, pages);
    const found = verifyCopy(temp, source, schemaVersion);
    fsyncPath(temp);
    chmodSync(temp, BACKUP_MODE);
    stopIfAsked();
    if (replaced || options.force === true) for (const suffix of ["-journal", "-wal", "-shm"]) rmSync(`${destination}${suffix}`, { force: true });
    renameSync(temp, destination);
    fsyncPath(dirname(destination), true);
    return {
      backend: "sqlite",
      source,
      path: destination,
      bytes: statSync(destination).size,
      schemaVersion,
      ...found,
      pages,
      restarts,
      replaced,
      elapsedMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    removeWithSidecars(temp);
    throw error;
  } finally {
    db.close();
  }
}

/**
 * Opens the copy on its own and checks it: full integrity check, the source's schema version;
 * switches it from WAL to a rollback journal so the file stands alone (no `-wal` to carry
 * along; Threadline switches it back to WAL when it opens it); counts what it holds.
 */
function verifyCopy(temp: string, source: string, schemaVersion: number): Pick<BackupReport, "sessions" | "messages" | "attachments"> {
  let copy: Database.Database;
  try {
    copy = new SqliteDatabase(temp, { fileMustExist: true });
  } catch (error) {
    throw translateSqliteError(error, `opening the copy ${temp}`, temp);
  }
  try {
    copy.pragma("journal_mode = DELETE");
    const findings = copy.pragma("integrity_check", { simple: false }) as Array<{ integrity_check: string }>;
    const problems = findings.map((row) => row.integrity_check).filter((text) => text !== "ok");
    if (problems.length > 0) throw damagedCopy(source, `${problems.slice(0, 3).join("; ")}${problems.length > 3 ? "; …" : ""}`);
    const copiedVersion = copy.pragma("user_version", { simple: true }) as number;
    if (copiedVersion !== schemaVersion) {
      throw new StoreError(
        `The copy has schema version ${copiedVersion}, the database ${schemaVersion} (it was upgraded while it was copied), so no backup was written. Run the backup again.`,
      );
    }
    const count = (sql: string): number => Number(copy.prepare(sql).pluck().get() ?? 0);
    const media = hasTable(copy, "media");
    return {
      sessions: count("SELECT count(*) FROM sessions"),
      messages: count("SELECT count(*) FROM messages"),
      attachments: {
        count: media ? count("SELECT count(*) FROM media") : 0,
        bytes: media ? count("SELECT coalesce(sum(size), 0) FROM media") : 0,
      },
    };
  } catch (error) {
    if (isSqliteCorrupt(error)) throw damagedCopy(source, error instanceof Error ? error.message : String(error), error);
    throw translateSqliteError(error, `checking the copy ${temp}`, temp);
  } finally {
    copy.close();
  }
}

/** The copy is damaged, so the database it came from is: nothing is written, doctor is next. */
function damagedCopy(source: string, finding: string, cause?: unknown): DatabaseCorruptError {
  return new DatabaseCorruptError(
    source,
    `The copy of ${source} failed its integrity check (SQLite: ${finding}), so no backup was written. ` +
      `The database itself is probably damaged: run "threadline doctor --db ${source}" (it says what is damaged and how to repair it).`,
    { cause },
  );
}
