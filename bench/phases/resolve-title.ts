import type { SessionDB } from "../../src/index.js";
import { log } from "../log.js";
import type { Percentiles } from "../percentile.js";
import { percentiles } from "../percentile.js";
import { evenPositions, timed } from "../timing.js";

/** resolveByTitle of the file's non-null titles at positions floor(i*t/200). */
export async function runResolveTitle(db: SessionDB, titles: readonly string[]): Promise<Percentiles> {
  const times: number[] = [];
  let failures = 0;
  for (const pos of evenPositions(titles.length)) {
    const title = titles[pos] as string;
    const { ms, value } = await timed(() => db.resolveByTitle(title));
    times.push(ms);
    if (value === null) {
      failures++;
      log(`resolve_title: ${JSON.stringify(title)} resolved to nothing`);
    }
  }
  log(`resolve_title: ${times.length} titles of ${titles.length}, ${failures} failure(s)`);
  return percentiles(times);
}
