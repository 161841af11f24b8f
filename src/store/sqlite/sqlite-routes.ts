/**
 * Routing entries (`routes`) on SQLite: the statements behind getRoute, listRoutes,
 * writeRoute and deleteRoute. Callers run them inside the write queue's transaction
 * where they write.
 *
 * @module
 */
import type { Page, Route, RouteFields } from "../contract.js";
import { ROUTE_COLUMNS, routeValues, toRoute, type RouteRow } from "../route-rows.js";
import { routeCursor, type CheckedListRoutes } from "../routing-input.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The entry of a key, or `undefined`. */
export function routeRow(conn: SqliteConnection, key: string): RouteRow | undefined {
  return conn.stmt("SELECT * FROM routes WHERE key = ?").get(key) as RouteRow | undefined;
}

/** The most recently updated entry routing to a session. */
export function routeBySession(conn: SqliteConnection, sessionId: string): Route | null {
  const row = conn.stmt("SELECT * FROM routes WHERE session_id = ? ORDER BY updated_at DESC, key LIMIT 1").get(sessionId) as RouteRow | undefined;
  return row === undefined ? null : toRoute(row);
}

const INSERT_ROUTE = `INSERT INTO routes (${ROUTE_COLUMNS.join(", ")}) VALUES (${ROUTE_COLUMNS.map(() => "?").join(", ")})`;
const UPDATE_ROUTE = `UPDATE routes SET ${ROUTE_COLUMNS.slice(1)
  .map((c) => `${c} = ?`)
  .join(", ")} WHERE key = ?`;

/**
 * Writes an entry at `version` (under the write lock, after the claim read the current one):
 * an UPDATE of the existing row, or an INSERT of a new key. Returns the entry as stored, built
 * from the values written through the same conversion as a read (no read back).
 */
export function storeRoute(conn: SqliteConnection, key: string, route: RouteFields, version: number, exists: boolean): Route {
  const values = routeValues(key, route, version, (flag) => (flag ? 1 : 0));
  if (exists) conn.stmt(UPDATE_ROUTE).run(...values.slice(1), key);
  else conn.stmt(INSERT_ROUTE).run(...values);
  return toRoute(Object.fromEntries(ROUTE_COLUMNS.map((column, i) => [column, values[i]])) as unknown as RouteRow);
}

/** A page of entries in key order. */
export function listRoutes(conn: SqliteConnection, options: CheckedListRoutes): Page<Route> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (options.after !== null) {
    where.push("key > ?");
    params.push(options.after);
  }
  if (options.updatedSince !== null) {
    where.push("updated_at >= ?");
    params.push(options.updatedSince);
  }
  if (options.updatedBefore !== null) {
    where.push("updated_at < ?");
    params.push(options.updatedBefore);
  }
  for (const [column, value] of [
    ["suspended", options.suspended],
    ["expiry_finalized", options.expiryFinalized],
    ["resume_pending", options.resumePending],
  ] as const) {
    if (value !== null) {
      where.push(`${column} = ?`);
      params.push(value ? 1 : 0);
    }
  }
  if (options.turnInProgress !== null) where.push(`turn_started_at IS ${options.turnInProgress ? "NOT NULL" : "NULL"}`);
  const sql = `SELECT * FROM routes ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY key LIMIT ?`;
  const rows = conn.stmt(sql).all(...params, options.limit + 1) as RouteRow[];
  const more = rows.length > options.limit;
  const items = rows.slice(0, options.limit).map(toRoute);
  return { items, nextCursor: more ? routeCursor(items[items.length - 1]!.key) : null };
}
