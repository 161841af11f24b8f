import type { SessionDB } from "../../src/index.js";
import { log } from "../log.js";
import type { Percentiles } from "../percentile.js";
import { percentiles } from "../percentile.js";
import { evenPositions, timed } from "../timing.js";

/** getMessages of the sessions at positions floor(i*n/200) in file order. */
export async function runGetMessages(db: SessionDB, sessionIds: readonly string[]): Promise<Percentiles> {
  const times: number[] = [];
  let messages = 0;
  for (const pos of evenPositions(sessionIds.length)) {
    const id = sessionIds[pos] as string;
    const { ms, value } = await timed(() => db.getMessages(id));
    times.push(ms);
    messages += value.length;
  }
  log(`get_messages: ${times.length} transcripts, ${messages} messages`);
  return percentiles(times);
}
