/**
 * The {@link MetaStore} role: small named values kept in the database. Part of the storage
 * contract (see `./index.ts`).
 *
 * @module
 */

/** Small named values kept in the database (settings and markers, e.g. the gateway's home channels). */
export interface MetaStore {
  /** The value stored under `key`, or `null`. */
  getMeta(key: string): Promise<string | null>;
  /** Stores `value` under `key` (replacing any value). */
  setMeta(key: string, value: string): Promise<void>;
  /** Removes `key`; returns whether it existed. */
  deleteMeta(key: string): Promise<boolean>;
}
