/**
 * The {@link MetaStore} role: small named values kept in the database. Part of the storage
 * contract (see `./index.ts`).
 *
 * @module
 */
import type { Page } from "./page.js";

/** One value of {@link MetaStore.listMeta}. */
export interface MetaEntry {
  key: string;
  value: string;
}

/** Options of {@link MetaStore.listMeta}. Entries come in key order. */
export interface ListMetaOptions {
  /** Page size, 1 to 1,000 (default 100). */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string | null;
}

/** Small named values kept in the database (settings and markers, e.g. the gateway's home channels). */
export interface MetaStore {
  /** The value stored under `key`, or `null`. */
  getMeta(key: string): Promise<string | null>;
  /** Stores `value` under `key` (replacing any value). */
  setMeta(key: string, value: string): Promise<void>;
  /** Removes `key`; returns whether it existed. */
  deleteMeta(key: string): Promise<boolean>;
  /**
   * Every value callers stored, in key order, with a keyset cursor (what `threadline db copy`
   * carries over). The store's own bookkeeping (its search-index watermark, the last automatic
   * prune) is left out: it describes this database, not the data.
   */
  listMeta(options?: ListMetaOptions): Promise<Page<MetaEntry>>;
}
