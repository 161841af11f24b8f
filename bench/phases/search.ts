import type { SessionDB } from "../../src/index.js";
import { fmtSeconds, log } from "../log.js";
import type { Percentiles } from "../percentile.js";
import { percentiles } from "../percentile.js";
import { timed } from "../timing.js";

export interface SearchResult extends Percentiles {
  /** Total results over all queries. */
  hits: number;
}

/** Each query of queries.json through searchMessages, limit 20. */
export async function runSearch(db: SessionDB, queries: readonly string[]): Promise<SearchResult> {
  const times: number[] = [];
  let hits = 0;
  let empty = 0;
  let slowest = { query: "", ms: -1 };
  for (const query of queries) {
    const { ms, value } = await timed(() => db.searchMessages(query, { limit: 20 }));
    times.push(ms);
    hits += value.length;
    if (value.length === 0) empty++;
    if (ms > slowest.ms) slowest = { query, ms };
  }
  const total = times.reduce((a, b) => a + b, 0);
  log(
    `search: ${queries.length} queries, ${hits} hits (${empty} queries with none) in ${fmtSeconds(total / 1000)}; slowest ${JSON.stringify(slowest.query)} ${slowest.ms.toFixed(3)} ms`,
  );
  return { ...percentiles(times), hits };
}
