/**
 * Retention of execution sessions: an explicit `cleanup` that removes whole units (a run
 * without a parent, with its steps: a workflow and its steps count as one) that are older
 * than N days or beyond the newest M units, and reports what it removed. A unit is as old
 * as its newest member. Nothing here runs on its own: listing never deletes.
 *
 * @module
 */
import { InvalidInputError, type ExecutionStore } from "../store/index.js";

/** Options of `Executions.cleanup`. */
export interface CleanupOptions {
  /** Units whose newest member was last updated more than this many days ago go (default 30; 0: every unit). */
  olderThanDays?: number;
  /** Keep at most this many units, the newest (default 50; 0 keeps none). */
  maxSessions?: number;
  /** Only this owner's units. */
  userId?: string;
  /** "Now" in epoch seconds (default: the executions' clock). */
  now?: number;
}

/** What `cleanup` removed. */
export interface CleanupReport {
  /** Units removed (a workflow with its steps is one). */
  removedUnits: number;
  /** Sessions removed (every step counted). */
  removedSessions: number;
  /** Ids of every removed session: each unit's own id followed by its steps. */
  removedIds: string[];
}

const DAY_SECONDS = 86_400;
/** Units removed per transaction. */
const BATCH = 100;

/** Validated cleanup options. */
export function checkCleanupOptions(options: CleanupOptions, now: number): { cutoff: number | null; keep: number; userId?: string } {
  if (options === null || typeof options !== "object") throw new InvalidInputError("cleanup options must be an object.");
  const { olderThanDays = 30, maxSessions = 50 } = options;
  if (typeof olderThanDays !== "number" || !Number.isFinite(olderThanDays) || olderThanDays < 0) {
    throw new InvalidInputError("olderThanDays must be a number of days, 0 or more.", { field: "olderThanDays" });
  }
  if (typeof maxSessions !== "number" || !Number.isSafeInteger(maxSessions) || maxSessions < 0) {
    throw new InvalidInputError("maxSessions must be a whole number, 0 or more.", { field: "maxSessions" });
  }
  const at = options.now ?? now;
  if (typeof at !== "number" || !Number.isFinite(at)) {
    throw new InvalidInputError("now must be a time in epoch seconds.", { field: "now" });
  }
  return {
    cutoff: olderThanDays === 0 ? null : at - olderThanDays * DAY_SECONDS,
    keep: maxSessions,
    ...(options.userId === undefined ? {} : { userId: options.userId }),
  };
}

/** Removes old and excess units (see {@link CleanupOptions}); each batch of units in one transaction. */
export async function cleanupExecutions(db: ExecutionStore, options: CleanupOptions, now: number): Promise<CleanupReport> {
  const { cutoff, keep, userId } = checkCleanupOptions(options, now);
  const report: CleanupReport = { removedUnits: 0, removedSessions: 0, removedIds: [] };
  const removeAll = async (next: () => Promise<string[]>): Promise<void> => {
    for (;;) {
      const ids = await next();
      if (ids.length === 0) return;
      const result = await db.writeExecutions({ delete: ids });
      if (result === null) continue; // cannot happen without expectations; read again
      const deleted = new Set(result.deleted);
      report.removedUnits += ids.filter((id) => deleted.has(id)).length;
      report.removedSessions += result.deleted.length;
      report.removedIds.push(...result.deleted);
      if (result.deleted.length === 0) return; // removed by someone else meanwhile
    }
  };
  const scope = userId === undefined ? {} : { userId };
  // Over-age units first (all of them when olderThanDays is 0), then whatever exceeds maxSessions.
  await removeAll(async () =>
    (await db.listExecutionUnits(cutoff === null ? { ...scope, limit: BATCH } : { ...scope, updatedBefore: cutoff, limit: BATCH })).map((u) => u.id),
  );
  await removeAll(async () => (await db.listExecutionUnits({ ...scope, offset: keep, limit: BATCH })).map((u) => u.id));
  return report;
}
