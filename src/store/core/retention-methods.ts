/**
 * Deletion and retention of the store core ({@link StoreCore}): deleting a session, pruning and
 * auto-pruning, as functions of the dialect.
 *
 * @module
 */
import type { AutoPruneOptions, PruneOptions } from "../contract.js";
import { InvalidInputError } from "../errors.js";
import { checkId, checkPruneOptions, checkTime } from "../input-validation.js";
import { now } from "./clock.js";
import { type PruneScope, deleteRows, pruneBatch } from "./deletion-steps.js";
import { sessionRow } from "./lineage-steps.js";
import { run, value } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";

const DAY_SECONDS = 86_400;

const AUTO_PRUNE_META_KEY = "auto_prune.last_run_at";

export async function deleteSession(d: StoreDialect<unknown>, id: string): Promise<boolean> {
  checkId(id, "id");
  return d.write(`deleting session ${id}`, function* () {
    const row = yield* sessionRow(id, d.forUpdate);
    if (row === undefined) return false;
    yield* deleteRows(d, [row]);
    return true;
  });
}

export async function pruneSessions(d: StoreDialect<unknown>, options: PruneOptions): Promise<number> {
  const { cutoffDays, sources, vacuum } = checkPruneOptions(options);
  return pruneInBatches(d, cutoffDays, sources, checkTime(options.now, "now", now()), vacuum);
}

/**
 * Deletes in batches ({@link pruneBatch}), each its own write, so other writers (this
 * instance's through its write queue, other processes through the database lock) run
 * between batches; then reclaims space (`vacuum`: true, bounded steps; "full", the whole file).
 */
async function pruneInBatches(
  d: StoreDialect<unknown>,
  olderThanDays: number,
  sources: string[] | null,
  at: number,
  vacuum: boolean | "full",
): Promise<number> {
  const cutoff = at - olderThanDays * DAY_SECONDS;
  let deleted = 0;
  let after: string | null = "";
  while (after !== null) {
    const scope: PruneScope = { cutoff, sources, after };
    const batch = await d.write("pruning sessions", () => pruneBatch(d, scope));
    deleted += batch.deleted;
    after = batch.next;
  }
  if (deleted > 0) {
    await d.mergeIndex();
    d.afterBulkChange();
  }
  // Space comes back to the file system where the backend can do that without locking others out.
  if (vacuum === "full") await d.compact({ full: true });
  else if (deleted > 0 && vacuum) await d.compact({ full: false });
  return deleted;
}

export async function autoPrune(d: StoreDialect<unknown>, options: AutoPruneOptions): Promise<{ ran: boolean; deleted: number }> {
  const interval = options?.intervalSeconds ?? DAY_SECONDS;
  if (typeof interval !== "number" || !Number.isFinite(interval) || interval < 0) {
    throw new InvalidInputError("intervalSeconds must be a number of seconds, 0 or more.", { field: "intervalSeconds" });
  }
  const at = checkTime(options?.now, "now", now());
  const prune = checkPruneOptions(options);
  // Claim the run in the database (under the meta row's lock), so every process sharing it agrees on the last run.
  const due = await d.write("scheduling an auto-prune", function* () {
    yield* run("INSERT INTO meta(key, value) VALUES (?, '') ON CONFLICT (key) DO NOTHING", [AUTO_PRUNE_META_KEY]);
    const last = yield* value<string>(`SELECT value FROM meta WHERE key = ?${d.forUpdate}`, [AUTO_PRUNE_META_KEY]);
    if (last !== undefined && last !== "" && at - Number(last) < interval) return false;
    yield* run("UPDATE meta SET value = ? WHERE key = ?", [String(at), AUTO_PRUNE_META_KEY]);
    return true;
  });
  if (!due) return { ran: false, deleted: 0 };
  return { ran: true, deleted: await pruneInBatches(d, prune.cutoffDays, prune.sources, at, prune.vacuum) };
}
