/**
 * The identity alias registry on SQLite: every alias row points straight at its
 * canonical id, so resolution is one lookup; recording a pair merges two groups.
 *
 * @module
 */
import { canonicalOf } from "../route-rows.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The canonical id of `id` (itself when unregistered). */
export function resolveAlias(conn: SqliteConnection, namespace: string, id: string): string {
  const canonical = conn
    .stmt("SELECT canonical FROM identity_aliases WHERE namespace = ? AND alias = ?")
    .pluck()
    .get(namespace, id) as string | undefined;
  return canonical ?? id;
}

/** Every id of `id`'s group: the canonical id first, then the others sorted. */
export function listAliases(conn: SqliteConnection, namespace: string, id: string): string[] {
  const canonical = resolveAlias(conn, namespace, id);
  const others = conn
    .stmt("SELECT alias FROM identity_aliases WHERE namespace = ? AND canonical = ? AND alias <> ? ORDER BY alias")
    .pluck()
    .all(namespace, canonical, canonical) as string[];
  return [canonical, ...others];
}

/** Joins the groups of `a` and `b` (inside a write); returns the group's canonical id. */
export function recordAlias(conn: SqliteConnection, namespace: string, a: string, b: string): string {
  const ca = resolveAlias(conn, namespace, a);
  const cb = resolveAlias(conn, namespace, b);
  const members = new Set<string>([a, b, ca, cb]);
  for (const canonical of new Set([ca, cb])) {
    const rows = conn
      .stmt("SELECT alias FROM identity_aliases WHERE namespace = ? AND canonical = ?")
      .pluck()
      .all(namespace, canonical) as string[];
    for (const alias of rows) members.add(alias);
  }
  const canonical = canonicalOf(members);
  const upsert = conn.stmt(
    "INSERT INTO identity_aliases(namespace, alias, canonical) VALUES (?, ?, ?) " +
      "ON CONFLICT(namespace, alias) DO UPDATE SET canonical = excluded.canonical",
  );
  for (const alias of members) upsert.run(namespace, alias, canonical);
  return canonical;
}
