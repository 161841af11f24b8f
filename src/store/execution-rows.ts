/**
 * The `executions` row shape both backends store (same column names), its mapping to
 * contract records, and the bookkeeping of the listing totals (`execution_counts`): every
 * record counts towards a few keys (all records, records without a parent, per kind and
 * name, each also per owner), so `listExecutions` reads its `total` from one row instead
 * of counting.
 *
 * @module
 */
import type { ExecutionKind, ExecutionRecord, ExecutionSummary, Page } from "./contract.js";
import { encodeCursor } from "./cursor.js";

/** An `executions` row (`result` only when selected). */
export interface ExecutionRow {
  id: string;
  kind: string;
  name: string;
  base_id: string;
  parent_id: string | null;
  user_id: string | null;
  created_at: number;
  updated_at: number;
  unit_updated_at: number;
  message_count: number;
  agents_involved: string | null;
  version: number;
  is_step: number;
  result?: string;
}

/** Every column but `result`. */
export const EXECUTION_SUMMARY_COLUMNS =
  "id, kind, name, base_id, parent_id, user_id, created_at, updated_at, unit_updated_at, message_count, agents_involved, version, is_step";

/** The summary of a row. */
export function toExecutionSummary(row: ExecutionRow): ExecutionSummary {
  return {
    id: row.id,
    kind: row.kind as ExecutionKind,
    name: row.name,
    baseId: row.base_id,
    parentId: row.parent_id,
    userId: row.user_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    unitUpdatedAt: Number(row.unit_updated_at),
    messageCount: Number(row.message_count),
    agentsInvolved: row.agents_involved === null ? null : (JSON.parse(row.agents_involved) as Record<string, string>),
    version: Number(row.version),
  };
}

/** The record of a row selected with its `result`. */
export function toExecutionRecord(row: ExecutionRow): ExecutionRecord {
  return { ...toExecutionSummary(row), result: JSON.parse(row.result ?? "null") as unknown };
}

/** The listing filters a total is kept for. */
export interface ExecutionCountFilter {
  userId: string | null;
  kind: string | null;
  name: string | null;
  directOnly: boolean;
}

/** The `execution_counts` key of one filter combination. */
export function executionCountKey(filter: ExecutionCountFilter): string {
  const scope = filter.directOnly ? "direct" : "all";
  return JSON.stringify(filter.kind === null ? [filter.userId, scope] : [filter.userId, scope, filter.kind, filter.name]);
}

/** Every count key a row adds one to. */
export function executionCountKeys(row: Pick<ExecutionRow, "kind" | "name" | "user_id" | "is_step">): string[] {
  const keys: string[] = [];
  for (const userId of row.user_id === null ? [null] : [null, row.user_id]) {
    for (const directOnly of row.is_step ? [false] : [false, true]) {
      keys.push(executionCountKey({ userId, kind: null, name: null, directOnly }));
      keys.push(executionCountKey({ userId, kind: row.kind, name: row.name, directOnly }));
    }
  }
  return keys;
}

/** Count changes gathered during one write, applied at its end in key order (a fixed lock order). */
export class ExecutionCountDeltas {
  readonly #deltas = new Map<string, number>();

  /** Counts a new row. */
  add(row: Pick<ExecutionRow, "kind" | "name" | "user_id" | "is_step">): void {
    for (const key of executionCountKeys(row)) this.#deltas.set(key, (this.#deltas.get(key) ?? 0) + 1);
  }

  /** Uncounts a removed (or replaced) row. */
  remove(row: Pick<ExecutionRow, "kind" | "name" | "user_id" | "is_step">): void {
    for (const key of executionCountKeys(row)) this.#deltas.set(key, (this.#deltas.get(key) ?? 0) - 1);
  }

  /** The non-zero changes, in key order. */
  entries(): Array<[string, number]> {
    return [...this.#deltas.entries()].filter(([, n]) => n !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

/** The smallest string greater than every string that starts with `prefix` (for an index range scan). */
export function prefixUpperBound(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

/** The ordering a `listExecutions` cursor belongs to (a cursor of another listing is rejected). */
export const EXECUTION_LIST_ORDER = "executions:updatedAt";

/**
 * How many rows to read from each range of a listing (each newest first, after the cursor)
 * and how many of them to skip: with one range the page itself plus one row (to tell whether
 * another page follows); with several, every range from its start, as the skipped rows are
 * only known once the ranges are merged.
 */
export function executionPageWindow(q: { offset: number; limit: number }, ranges: number): { limit: number; offset: number } {
  return ranges > 1 ? { limit: q.offset + q.limit + 1, offset: 0 } : { limit: q.limit + 1, offset: q.offset };
}

/**
 * Merges the rows read for each range of a listing (as {@link executionPageWindow} says)
 * into the requested page, with the keyset cursor of the next page.
 */
export function mergeExecutionPage(rows: ExecutionRow[], q: { offset: number; limit: number }, ranges: number): Page<ExecutionSummary> {
  let window = rows;
  if (ranges > 1) {
    rows.sort((a, b) => Number(b.updated_at) - Number(a.updated_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    window = rows.slice(q.offset);
  }
  const page = window.slice(0, q.limit);
  const last = page[page.length - 1];
  const nextCursor =
    window.length > q.limit && last !== undefined ? encodeCursor({ order: EXECUTION_LIST_ORDER, key: Number(last.updated_at), id: last.id }) : null;
  return { items: page.map(toExecutionSummary), nextCursor };
}
