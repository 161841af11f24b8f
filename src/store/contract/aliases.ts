/**
 * The {@link AliasStore} role: identity aliases per namespace (platform). Part of the storage
 * contract (see `./index.ts`).
 *
 * @module
 */

/** Identity aliases: several platform ids that name one person, per namespace (platform). */
export interface AliasStore {
  /** Records that `a` and `b` name one identity in `namespace`; returns the canonical id (shortest, then lexicographically first). */
  recordAlias(namespace: string, a: string, b: string): Promise<string>;
  /** The canonical id of `id` in `namespace` (`id` itself when it has no alias). */
  resolveAlias(namespace: string, id: string): Promise<string>;
  /** Every id of `id`'s identity in `namespace`: the canonical id first, then its aliases sorted (`[id]` when it has none). */
  listAliases(namespace: string, id: string): Promise<string[]>;
}
