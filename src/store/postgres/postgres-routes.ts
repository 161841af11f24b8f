/**
 * Routing entries (`routes`) on PostgreSQL: the statements behind getRoute, listRoutes,
 * writeRoute and deleteRoute. Callers run the writing ones inside the write transaction.
 * Free-text fields (display name, platform, chat type, reasons) use the NUL escape of
 * {@link encodeText}; `origin` is JSON text, stored as is.
 *
 * @module
 */
import type { Page, Route, RouteFields } from "../contract.js";
import { InternalError } from "../errors.js";
import { ROUTE_COLUMNS, routeValues, toRoute as sharedToRoute, type RouteRow } from "../route-rows.js";
import { routeCursor, type CheckedListRoutes } from "../routing-input.js";
import type { Sql } from "./postgres-connection.js";
import { decodeText, encodeText } from "./postgres-rows.js";

const COLUMN_LIST = ROUTE_COLUMNS.join(", ");
const PLACEHOLDERS = ROUTE_COLUMNS.map((_, i) => `$${i + 1}`).join(", ");
/** `SET` list of an update: every column but the key, from the same parameters as the insert. */
const SET_LIST = ROUTE_COLUMNS.map((column, i) => `${column} = $${i + 1}`)
  .slice(1)
  .join(", ");

/** A `routes` row as a {@link Route}, NUL escapes decoded. */
export function toRoute(row: RouteRow): Route {
  return sharedToRoute({
    ...row,
    display_name: decodeText(row.display_name),
    platform: decodeText(row.platform),
    chat_type: decodeText(row.chat_type),
    auto_reset_reason: decodeText(row.auto_reset_reason),
    resume_reason: decodeText(row.resume_reason),
  });
}

/** Parameters of an entry in `ROUTE_COLUMNS` order, free text encoded. */
function params(key: string, route: RouteFields, version: number): unknown[] {
  const encoded: RouteFields = {
    ...route,
    displayName: encodeText(route.displayName),
    platform: encodeText(route.platform),
    chatType: encodeText(route.chatType),
    autoResetReason: encodeText(route.autoResetReason),
    resumeReason: encodeText(route.resumeReason),
  };
  return routeValues(key, encoded, version, (flag) => flag);
}

/** The entry of a key, or `undefined`; `lock` takes its row lock (`FOR UPDATE`) until commit. */
export async function routeRow(sql: Sql, key: string, lock = false): Promise<RouteRow | undefined> {
  return sql.one<RouteRow>(`SELECT * FROM routes WHERE key = $1${lock ? " FOR UPDATE" : ""}`, [key]);
}

/** The most recently updated entry routing to a session. */
export async function routeBySession(sql: Sql, sessionId: string): Promise<Route | null> {
  const row = await sql.one<RouteRow>("SELECT * FROM routes WHERE session_id = $1 ORDER BY updated_at DESC, key LIMIT 1", [sessionId]);
  return row === undefined ? null : toRoute(row);
}

/**
 * Inserts a new entry at version 1 unless the key has one. A concurrent inserter of the
 * same key waits for this transaction and then finds the row. Returns the stored row,
 * or `undefined` when the key already had an entry (nothing written).
 */
export async function insertRouteIfAbsent(sql: Sql, key: string, route: RouteFields): Promise<RouteRow | undefined> {
  return sql.one<RouteRow>(`INSERT INTO routes (${COLUMN_LIST}) VALUES (${PLACEHOLDERS}) ON CONFLICT (key) DO NOTHING RETURNING *`, params(key, route, 1));
}

/** Overwrites the (locked) entry of a key at `version`; returns the stored row. */
export async function updateRoute(sql: Sql, key: string, route: RouteFields, version: number): Promise<RouteRow> {
  const row = await sql.one<RouteRow>(`UPDATE routes SET ${SET_LIST} WHERE key = $1 RETURNING *`, params(key, route, version));
  if (row === undefined) throw new InternalError(`The routing entry ${key} vanished under its own row lock`);
  return row;
}

/** A page of entries in key order (primary-key scan). */
export async function listRoutes(sql: Sql, options: CheckedListRoutes): Promise<Page<Route>> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (options.after !== null) where.push(`key > $${values.push(options.after)}`);
  if (options.updatedSince !== null) where.push(`updated_at >= $${values.push(options.updatedSince)}`);
  if (options.updatedBefore !== null) where.push(`updated_at < $${values.push(options.updatedBefore)}`);
  for (const [column, value] of [
    ["suspended", options.suspended],
    ["expiry_finalized", options.expiryFinalized],
    ["resume_pending", options.resumePending],
  ] as const) {
    if (value !== null) where.push(`${column} = $${values.push(value)}`);
  }
  if (options.turnInProgress !== null) where.push(`turn_started_at IS ${options.turnInProgress ? "NOT NULL" : "NULL"}`);
  const text = `SELECT * FROM routes ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ` + `ORDER BY key LIMIT $${values.push(options.limit + 1)}`;
  const rows = await sql.all<RouteRow>(text, values);
  const more = rows.length > options.limit;
  const items = rows.slice(0, options.limit).map(toRoute);
  return { items, nextCursor: more ? routeCursor(items[items.length - 1]!.key) : null };
}
