import type { SessionDB } from "../../src/index.js";
import { fmtSeconds, log } from "../log.js";
import type { Percentiles } from "../percentile.js";
import { percentiles } from "../percentile.js";
import { performance } from "node:perf_hooks";
import { parseSearchQuery } from "../../src/store/search/index.js";
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

/** Inputs of 100,000 characters that a backtracking parser would take quadratic time on (test/store/search/search-query.test.ts checks their result). */
const HUGE_QUERIES: readonly string[] = [
  `${")".repeat(100_000)}a`,
  `${"(".repeat(100_000)}a`,
  `${"*".repeat(100_000)}a`,
  `${'"'.repeat(100_000)}a`,
  `${"a-".repeat(50_000)}*`,
  "a ".repeat(50_000),
  "部".repeat(100_000),
];

/** The slowest parse of {@link HUGE_QUERIES}, in milliseconds (linear-time parsing keeps it in the low milliseconds). */
export function runHugeQueryParse(): { slowestMs: number } {
  let slowest = { query: "", ms: -1 };
  for (const query of HUGE_QUERIES) {
    const start = performance.now();
    parseSearchQuery(query);
    const ms = performance.now() - start;
    if (ms > slowest.ms) slowest = { query: query.slice(0, 8), ms };
  }
  log(`search: parsing ${HUGE_QUERIES.length} queries of 100,000 characters: slowest ${JSON.stringify(slowest.query)}… ${slowest.ms.toFixed(3)} ms`);
  return { slowestMs: slowest.ms };
}
