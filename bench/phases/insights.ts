import type { SessionDB } from "../../src/index.js";
import { log } from "../log.js";
import type { Percentiles } from "../percentile.js";
import { percentiles } from "../percentile.js";
import { timed } from "../timing.js";

export interface InsightsResult {
  /** The 30 days before the dataset's clock (what `threadline insights` asks by default). */
  last30Days: Percentiles;
  /** Every session of the database. */
  all: Percentiles;
}

const REPEAT = 20;

/** getInsights over the last 30 days before `clock`, then over everything, ×20 each (before prune). */
export async function runInsights(db: SessionDB, clock: number): Promise<InsightsResult> {
  return {
    last30Days: await repeat(db, clock - 30 * 86_400, "last 30 days"),
    all: await repeat(db, 0, "all sessions"),
  };
}

async function repeat(db: SessionDB, since: number, label: string): Promise<Percentiles> {
  const times: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    const { ms, value } = await timed(() => db.getInsights({ since }));
    times.push(ms);
    if (i === 0) {
      log(
        `insights (${label}): ${value.totals.sessions} sessions, ${value.totals.messages} messages, ` +
          `${value.totals.toolCalls} tool calls over ${value.tools.length} tools`,
      );
    }
  }
  return percentiles(times);
}
