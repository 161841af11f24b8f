/**
 * A page of a keyset-paged listing, shared by the roles that list (sessions, routing entries,
 * execution sessions, memories). Part of the storage contract (see `./index.ts`).
 *
 * @module
 */

/**
 * One page of a listing: every paged result of the contract has this shape
 * ({@link SessionHistory.listSessions}, {@link RouteStore.listRoutes},
 * {@link ExecutionStore.listExecutions}).
 */
export interface Page<T> {
  items: T[];
  /**
   * Pass it as `cursor`, with the same filters, to get the next page; `null` when this page
   * is the last.
   */
  nextCursor: string | null;
  /**
   * How many items match the filters in all (every page, not only this one), when the
   * listing keeps that count: {@link ExecutionStore.listExecutions} always sets it; the
   * other listings leave it out.
   */
  total?: number;
}
