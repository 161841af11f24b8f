/**
 * The backend-independent half of a session listing: validating options, choosing
 * which index ranges to walk (one per source and hidden flag, newest first), and
 * merging the walked rows into one keyset page. Backends only run the range queries.
 *
 * @module
 */
import type { ListSessionsOptions, Page, SessionSummary, SourceIdentity } from "./contract.js";
import { decodeCursor, encodeCursor, type CursorPosition } from "./cursor.js";
import { InvalidInputError } from "./errors.js";
import { checkIdentityFilter, checkIdFilter, checkIdSetFilter, checkLimit, checkNameList, checkUserIdFilter } from "./input-validation.js";
import { toSummary, type SummaryRow } from "./session-rows.js";

/** Default page size. */
export const DEFAULT_LIST_LIMIT = 20;

/** One index range to walk: rows of `source` (any when null) with `list_hidden = hidden` (any when null). */
export interface ListingRange {
  source: string | null;
  hidden: number | null;
}

/** What to walk and how to page it. */
export interface ListingPlan {
  limit: number;
  /** The column the rows are ordered by (descending, then id descending). */
  key: "last_active_at" | "started_at" | "chain_started_at";
  /** Rows after this position only (keyset), or null for the first page. */
  after: CursorPosition | null;
  ranges: ListingRange[];
  order: string;
  includeChildren: boolean;
  /** Only sessions of this user, or null. */
  userId: string | null;
  /** Only sessions of any of these users (empty: none), or null. */
  userIds: string[] | null;
  /** Only sessions of any of these (source, user id) pairs (empty: none), or null. */
  identities: SourceIdentity[] | null;
  /** Only sessions of this chat, or null. */
  chatId: string | null;
  /** Only sessions carrying this session key, or null. */
  sessionKey: string | null;
  /** Ordering time at or after this, or null. */
  since: number | null;
  /** Ordering time before this, or null. */
  until: number | null;
  /** Only these models, or null. */
  models: string[] | null;
  /** Titled only (true), untitled only (false), or both (null). */
  titled: boolean | null;
}

function checkBound(value: unknown, field: string): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidInputError(`${field} must be a time in epoch seconds (a finite number).`, { field });
  }
  return value;
}

/**
 * Validates listing options and plans the walk. `allSources` is called only when
 * sources are excluded without a list of sources to include.
 */
export function planListing(options: ListSessionsOptions, allSources: () => string[]): ListingPlan {
  const limit = checkLimit(options.limit, DEFAULT_LIST_LIMIT);
  const orderBy = options.orderBy ?? "lastActive";
  if (orderBy !== "lastActive" && orderBy !== "started") {
    throw new InvalidInputError(`orderBy must be "lastActive" or "started", not "${String(orderBy)}".`, { field: "orderBy" });
  }
  const includeChildren = options.includeChildren === true;
  const sources = checkNameList(options.sources, "sources");
  const excluded = checkNameList(options.excludeSources, "excludeSources");
  const userId = checkUserIdFilter(options.userId);
  const userIds = checkIdSetFilter(options.userIds, "userIds");
  const identities = checkIdentityFilter(options.identities, "identities");
  const chatId = checkIdFilter(options.chatId, "chatId");
  const sessionKey = checkIdFilter(options.sessionKey, "sessionKey");
  const since = checkBound(options.since, "since");
  const until = checkBound(options.until, "until");
  if (since !== null && until !== null && until < since) {
    throw new InvalidInputError("until must not be before since.", { field: "until" });
  }
  const models = checkNameList(options.models, "models");
  if (options.titled !== undefined && options.titled !== null && typeof options.titled !== "boolean") {
    throw new InvalidInputError("titled must be true, false or absent.", { field: "titled" });
  }
  const titled = typeof options.titled === "boolean" ? options.titled : null;
  const order = `${orderBy}:${includeChildren ? "all" : "tips"}`;
  const after = options.cursor === undefined || options.cursor === null ? null : decodeCursor(options.cursor, order);

  let walk: Array<string | null> = [null];
  if (sources !== null) walk = excluded ? sources.filter((s) => !excluded.includes(s)) : sources;
  else if (excluded !== null) walk = allSources().filter((s) => !excluded.includes(s));

  let key: ListingPlan["key"];
  let hiddenValues: Array<number | null>;
  if (orderBy === "lastActive") {
    key = "last_active_at";
    hiddenValues = includeChildren ? [0, 1] : [0];
  } else if (includeChildren) {
    key = "started_at";
    hiddenValues = [null];
  } else {
    key = "chain_started_at";
    hiddenValues = [0];
  }
  const ranges = walk.flatMap((source) => hiddenValues.map((hidden) => ({ source, hidden })));
  return { limit, key, after, ranges, order, includeChildren, userId, userIds, identities, chatId, sessionKey, since, until, models, titled };
}

/**
 * Merges the rows walked for each range (each at most `limit + 1`, newest first) into
 * a page. `decode` undoes a backend's storage encoding of free text.
 */
export function mergeListing(plan: ListingPlan, rows: SummaryRow[], decode?: (value: string | null) => string | null): Page<SessionSummary> {
  const sortKey = (row: SummaryRow): number => row[plan.key];
  if (plan.ranges.length > 1) {
    rows.sort((a, b) => sortKey(b) - sortKey(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  }
  const page = rows.slice(0, plan.limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > plan.limit && last !== undefined ? encodeCursor({ order: plan.order, key: sortKey(last), id: last.id }) : null;
  return { items: page.map((row) => toSummary(row, !plan.includeChildren, decode)), nextCursor };
}
