import type { ListSessionsOptions, SessionDB } from "../../src/index.js";
import { log } from "../log.js";
import type { Percentiles } from "../percentile.js";
import { percentiles } from "../percentile.js";
import { timed } from "../timing.js";

export interface ListRecentResult {
  all: Percentiles;
  telegram: Percentiles;
}

const REPEAT = 200;

/** The 20 most recent sessions ×200, then the same filtered to source `telegram` ×200. */
export async function runListRecent(db: SessionDB): Promise<ListRecentResult> {
  const all = await repeatList(db, { limit: 20 }, "all sources");
  const telegram = await repeatList(db, { limit: 20, sources: ["telegram"] }, "telegram");
  return { all, telegram };
}

async function repeatList(db: SessionDB, options: ListSessionsOptions, label: string): Promise<Percentiles> {
  const times: number[] = [];
  let rows = 0;
  let withPreview = 0;
  for (let i = 0; i < REPEAT; i++) {
    const { ms, value } = await timed(() => db.listSessions(options));
    times.push(ms);
    if (i === 0) {
      rows = value.items.length;
      withPreview = value.items.filter((s) => s.preview !== null).length;
    }
  }
  log(`list_recent (${label}): ${REPEAT} calls, ${rows} rows each, ${withPreview} with a preview`);
  return percentiles(times);
}
