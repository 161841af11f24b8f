import type { SessionDB } from "../../src/index.js";
import { fmtSeconds, log } from "../log.js";
import { timed } from "../timing.js";

export interface PruneResult {
  seconds: number;
  deleted: number;
}

const OLDER_THAN_DAYS = 60;

/** Deletes ended sessions older than 60 days before the dataset's clock (the store's own rule). */
export async function runPrune(db: SessionDB, clock: number): Promise<PruneResult> {
  const { ms, value } = await timed(() => db.pruneSessions({ olderThanDays: OLDER_THAN_DAYS, now: clock }));
  log(`prune: ${value} session(s) deleted in ${fmtSeconds(ms / 1000)}`);
  return { seconds: ms / 1000, deleted: value };
}
