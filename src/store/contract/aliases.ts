/**
 * The {@link AliasStore} role: identity aliases per namespace (platform). Part of the storage
 * contract (see `./index.ts`).
 *
 * @module
 */
import type { Page } from "./page.js";

/** One registered id of {@link AliasStore.listAliasEntries}: `alias` names the same person as `canonical`. */
export interface AliasEntry {
  namespace: string;
  alias: string;
  /** The group's canonical id (an entry whose `alias` is `canonical` is the group's own row). */
  canonical: string;
}

/** Options of {@link AliasStore.listAliasEntries}. Entries come in namespace, then alias order. */
export interface ListAliasEntriesOptions {
  /** Page size, 1 to 1,000 (default 100). */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string | null;
}

/** Identity aliases: several platform ids that name one person, per namespace (platform). */
export interface AliasStore {
  /** Records that `a` and `b` name one identity in `namespace`; returns the canonical id (shortest, then lexicographically first). */
  recordAlias(namespace: string, a: string, b: string): Promise<string>;
  /** The canonical id of `id` in `namespace` (`id` itself when it has no alias). */
  resolveAlias(namespace: string, id: string): Promise<string>;
  /** Every id of `id`'s identity in `namespace`: the canonical id first, then its aliases sorted (`[id]` when it has none). */
  listAliases(namespace: string, id: string): Promise<string[]>;
  /** Every registered id of every namespace, with a keyset cursor (what `threadline db copy` carries over). */
  listAliasEntries(options?: ListAliasEntriesOptions): Promise<Page<AliasEntry>>;
}
