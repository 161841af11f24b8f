import type { SessionDB } from "../../src/index.js";
import { log } from "../log.js";

export interface SizeResult {
  bytes: number;
}

/** Database bytes on disk (main file + WAL, or the server's size), after prune, before close. */
export async function runSize(db: SessionDB): Promise<SizeResult> {
  const stats = await db.getStats();
  const bytes = stats.databaseBytes;
  const index = stats.searchIndexBytes;
  const share = index === null ? "unknown" : `${index} bytes, ${((100 * index) / Math.max(1, bytes)).toFixed(1)}%`;
  log(
    `size: ${bytes} bytes (${(bytes / 1048576).toFixed(1)} MiB); search index ${share}; ` +
      `${stats.totalSessions} sessions, ${stats.totalMessages} messages remain`,
  );
  return { bytes };
}
