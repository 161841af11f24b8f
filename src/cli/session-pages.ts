/**
 * Reading a whole session listing (or its first N rows and how many follow) through
 * `SessionDB.listSessions`, a page of at most 1,000 at a time.
 *
 * @module
 */
import type { ListSessionsOptions, SessionHistory, SessionSummary } from "../store/index.js";

/** The largest page `listSessions` serves. */
const PAGE_MAX = 1000;

/** What {@link collectSessions} read. */
export interface CollectedSessions {
  items: SessionSummary[];
  /** How many more sessions the listing holds after `items` (0 when it ended). */
  more: number;
}

/**
 * The first `max` sessions of a listing (all of them when `max` is `Infinity`), and how many
 * more exist after them (counted by paging on, so the count is exact).
 *
 * @example
 * const { items, more } = await collectSessions(db, { sources: ["cli"] }, 20);
 */
export async function collectSessions(db: SessionHistory, options: Omit<ListSessionsOptions, "limit" | "cursor">, max: number): Promise<CollectedSessions> {
  const items: SessionSummary[] = [];
  let cursor: string | null = null;
  do {
    const want = Math.min(PAGE_MAX, max - items.length);
    if (want <= 0) break;
    const page = await db.listSessions({ ...options, limit: want, cursor });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  let more = 0;
  while (cursor !== null) {
    const page = await db.listSessions({ ...options, limit: PAGE_MAX, cursor });
    more += page.items.length;
    cursor = page.nextCursor;
  }
  return { items, more };
}
