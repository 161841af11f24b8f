/**
 * The identity alias registry, once for every backend: every alias row points straight at
 * its canonical id, so resolution is one lookup; recording a pair merges two groups. Writers
 * of one namespace must be serialised (the dialect's `lockAliasNamespace`), so concurrent
 * merges from any number of processes never leave a group split.
 *
 * @module
 */
import { canonicalOf } from "../route-rows.js";
import { column, placeholders, run, value, type Steps } from "./steps.js";

/** The canonical id of `id` (itself when unregistered). */
export function* resolveAlias(namespace: string, id: string): Steps<string> {
  return (yield* value<string>("SELECT canonical FROM identity_aliases WHERE namespace = ? AND alias = ?", [namespace, id])) ?? id;
}

/** Every id of `id`'s group: the canonical id first, then the others in code-point order (`bytewise`: the dialect's collation clause for that). */
export function* listAliases(namespace: string, id: string, bytewise: string): Steps<string[]> {
  const canonical = yield* resolveAlias(namespace, id);
  const others = yield* column<string>(`SELECT alias FROM identity_aliases WHERE namespace = ? AND canonical = ? AND alias <> ? ORDER BY alias${bytewise}`, [
    namespace,
    canonical,
    canonical,
  ]);
  return [canonical, ...others];
}

/** Joins the groups of `a` and `b` (inside a write, after the namespace's writer lock); returns the group's canonical id. */
export function* recordAlias(namespace: string, a: string, b: string): Steps<string> {
  const ca = yield* resolveAlias(namespace, a);
  const cb = yield* resolveAlias(namespace, b);
  const members = new Set<string>([a, b, ca, cb]);
  const groups = [...new Set([ca, cb])];
  const rows = yield* column<string>(`SELECT alias FROM identity_aliases WHERE namespace = ? AND canonical IN (${placeholders(groups.length)})`, [
    namespace,
    ...groups,
  ]);
  for (const alias of rows) members.add(alias);
  const canonical = canonicalOf(members);
  for (const alias of members) {
    yield* run(
      `INSERT INTO identity_aliases(namespace, alias, canonical) VALUES (?, ?, ?)
         ON CONFLICT (namespace, alias) DO UPDATE SET canonical = excluded.canonical
         WHERE identity_aliases.canonical <> excluded.canonical`,
      [namespace, alias, canonical],
    );
  }
  return canonical;
}
