/**
 * The identity alias registry on PostgreSQL: every alias row points straight at its
 * canonical id, so resolution is one lookup; recording a pair merges two groups.
 * Writers of one namespace are serialised by a transaction-scoped advisory lock, so
 * concurrent merges from any number of processes never leave a group split.
 *
 * @module
 */
import { canonicalOf } from "../route-rows.js";
import type { Sql } from "./postgres-connection.js";

/** Class id of the per-namespace advisory lock (two-key form; "tla" + 1). */
const ALIAS_LOCK_CLASS = 0x746c6101;

/** The canonical id of `id` (itself when unregistered). */
export async function resolveAlias(sql: Sql, namespace: string, id: string): Promise<string> {
  const canonical = await sql.value<string>("SELECT canonical FROM identity_aliases WHERE namespace = $1 AND alias = $2", [
    namespace,
    id,
  ]);
  return canonical ?? id;
}

/** Every id of `id`'s group: the canonical id first, then the others sorted. */
export async function listAliases(sql: Sql, namespace: string, id: string): Promise<string[]> {
  const canonical = await resolveAlias(sql, namespace, id);
  const others = await sql.column<string>(
    "SELECT alias FROM identity_aliases WHERE namespace = $1 AND canonical = $2 AND alias <> $2 ORDER BY alias COLLATE \"C\"",
    [namespace, canonical],
  );
  return [canonical, ...others];
}

/** Joins the groups of `a` and `b` (inside a write transaction); returns the group's canonical id. */
export async function recordAlias(sql: Sql, namespace: string, a: string, b: string): Promise<string> {
  await sql.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [ALIAS_LOCK_CLASS, namespace]);
  const ca = await resolveAlias(sql, namespace, a);
  const cb = await resolveAlias(sql, namespace, b);
  const members = new Set<string>([a, b, ca, cb]);
  const rows = await sql.column<string>(
    "SELECT alias FROM identity_aliases WHERE namespace = $1 AND canonical = ANY($2::text[])",
    [namespace, [...new Set([ca, cb])]],
  );
  for (const alias of rows) members.add(alias);
  const canonical = canonicalOf(members);
  await sql.run(
    `INSERT INTO identity_aliases(namespace, alias, canonical)
       SELECT $1, alias, $3 FROM unnest($2::text[]) AS alias
     ON CONFLICT (namespace, alias) DO UPDATE SET canonical = excluded.canonical
       WHERE identity_aliases.canonical IS DISTINCT FROM excluded.canonical`,
    [namespace, [...members], canonical],
  );
  return canonical;
}
