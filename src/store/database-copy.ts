/**
 * `threadline db copy`, backend-agnostic: moves a whole database into another through the
 * `SessionDB` contract only (so SQLite → PostgreSQL, PostgreSQL → SQLite and SQLite → SQLite all
 * work): every session with its messages and attachments, then the durable state a gateway needs
 * (execution sessions, memory, pairing approvals, identity aliases, routing entries, meta values
 * such as the home channels). What is transient (leases, inbound claims and queue items, pending
 * pairing codes and their counters, handoffs in flight) is left out: see docs/deploy.md.
 *
 * Memory stays bounded: sessions stream out of the export a few at a time (database-copy-sessions.ts),
 * each blob goes through a spool file a stored chunk at a time, and every other table is read a
 * page at a time.
 *
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ImportProblem, SessionDB } from "./contract.js";
import { copySessions, type SessionCounts } from "./database-copy-sessions.js";
import { copyGatewayState, type StateCounts } from "./database-copy-state.js";
import { ConflictError, InvalidInputError } from "./errors.js";

/** How many of each kind {@link copyDatabase} wrote. */
export interface DatabaseCopyCounts extends StateCounts, SessionCounts {}

/** Sessions written at once into a database server (PostgreSQL): lanes, each a connection of the pool. */
const SERVER_LANES = 4;

/** What {@link copyDatabase} did. */
export interface DatabaseCopyReport {
  counts: DatabaseCopyCounts;
  /** Wall-clock seconds the copy took. */
  seconds: number;
  /** Sessions the target refused (nothing of each was written), by their position in the source's export. */
  sessionErrors: ImportProblem[];
  /** Other records the target refused (`"route <key>: …"`), nothing of each written. */
  stateErrors: string[];
}

/** Options of {@link copyDatabase}. */
export interface DatabaseCopyOptions {
  /** Called after each session is written, with the running counts (for a progress bar). */
  onSession?: (counts: Readonly<DatabaseCopyCounts>) => void;
  /**
   * Sessions written at once (default: {@link SERVER_LANES} into a database server, 1 into a SQLite
   * file, whose writes are one at a time anyway); 1 to 16.
   */
  lanes?: number;
  /** Where blobs are spooled on their way (default: a new folder under the OS temp dir, removed after). */
  spoolParent?: string;
}

/**
 * What durable data a database already holds, as phrases (`"3 sessions"`, `"execution
 * sessions"`); empty when it holds none. Reads one row of each listing.
 */
export async function databaseContents(db: SessionDB): Promise<string[]> {
  const held: string[] = [];
  const sessions = await db.getStats({ searchIndexBytes: false });
  if (sessions.totalSessions > 0) held.push(`${sessions.totalSessions} session${sessions.totalSessions === 1 ? "" : "s"}`);
  const executions = await db.listExecutions({ limit: 1 });
  if (executions.total > 0) held.push(`${executions.total} execution session${executions.total === 1 ? "" : "s"}`);
  if ((await db.listMemories({ limit: 1 })).items.length > 0) held.push("memory");
  if ((await db.listRoutes({ limit: 1 })).items.length > 0) held.push("routing entries");
  if ((await db.listPairing()).approved.length > 0) held.push("pairing approvals");
  if ((await db.listAliasEntries({ limit: 1 })).items.length > 0) held.push("identity aliases");
  if ((await db.listMeta({ limit: 1 })).items.length > 0) held.push("gateway settings (meta)");
  return held;
}

/**
 * Copies everything durable from `from` into `to`, which must be empty (a new SQLite file, or
 * a new PostgreSQL database or schema). Stop every process writing `from` first: what is written
 * during the copy may be missed.
 *
 * @throws {InvalidInputError} when `from` and `to` are the same database.
 * @throws {ConflictError} when `to` already holds data (nothing is written).
 * @example
 * const report = await copyDatabase(await openSessionDB("state.db"), await openSessionDB("postgres://db/threadline"));
 * console.log(report.counts.sessions, report.seconds);
 */
export async function copyDatabase(from: SessionDB, to: SessionDB, options: DatabaseCopyOptions = {}): Promise<DatabaseCopyReport> {
  const started = performance.now();
  if (options.lanes !== undefined && (!Number.isInteger(options.lanes) || options.lanes < 1 || options.lanes > 16)) {
    throw new InvalidInputError("lanes must be a whole number from 1 to 16.", { field: "lanes" });
  }
  // A server's location leaves the schema out: two schemas of one database are two databases.
  if (from === to || (!from.capabilities.multiHost && from.location === to.location)) {
    throw new InvalidInputError(`The source and the target are the same database (${from.location}); name another target.`, { field: "to" });
  }
  const held = await databaseContents(to);
  if (held.length > 0) {
    throw new ConflictError(
      `The target ${to.location} already holds ${held.join(", ")}; db copy writes only into an empty database. ` +
        "Name a new SQLite file, or an empty PostgreSQL database or schema (e.g. ?schema=threadline_new), or empty this one first.",
    );
  }
  const counts: DatabaseCopyCounts = {
    sessions: 0,
    messages: 0,
    mediaBlobs: 0,
    mediaBytes: 0,
    executions: 0,
    memories: 0,
    pairingApprovals: 0,
    aliases: 0,
    routes: 0,
    meta: 0,
  };
  const spool = await mkdtemp(join(options.spoolParent ?? tmpdir(), "threadline-copy-"));
  let sessionErrors: ImportProblem[];
  try {
    // A server takes several sessions at once (one connection each); a SQLite file one writer at a time.
    const lanes = options.lanes ?? (to.capabilities.multiHost ? SERVER_LANES : 1);
    sessionErrors = await copySessions(from, to, spool, lanes, counts, () => options.onSession?.(counts));
  } finally {
    await rm(spool, { recursive: true, force: true });
  }
  const stateErrors = await copyGatewayState(from, to, counts);
  return { counts, seconds: (performance.now() - started) / 1000, sessionErrors, stateErrors };
}
