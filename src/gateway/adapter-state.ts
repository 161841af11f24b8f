/**
 * A small durable key/value store an adapter keeps its own bookkeeping in across restarts
 * (a platform's sync token or cursor, a short list of ids it must remember), so a restart
 * continues where the last run stopped. `threadline serve` hands each chat adapter one,
 * backed by the database's `meta` table ({@link adapterStateInMeta}); keys are namespaced
 * per platform, so adapters never see each other's values or the gateway's own meta keys.
 *
 * @module
 */
import type { MetaStore } from "../store/index.js";

/** Durable string values by key, private to one adapter. */
export interface AdapterStateStore {
  /** The value of `key`, or `null` when none was stored. */
  get(key: string): Promise<string | null>;
  /** Stores `value` under `key` (replacing what was there). */
  set(key: string, value: string): Promise<void>;
  /** Removes `key`; returns whether it was there. */
  delete(key: string): Promise<boolean>;
}

/** The prefix of every key {@link adapterStateInMeta} writes. */
export const ADAPTER_STATE_META_PREFIX = "adapter_state";

/**
 * An {@link AdapterStateStore} in the store's `meta` table, under
 * `adapter_state:<platform>:<key>`.
 *
 * @example
 * ```ts
 * const state = adapterStateInMeta(db, "matrix");
 * await state.set("sync_token:@bot:example.org", "s72594_4483_1934");
 * ```
 */
export function adapterStateInMeta(db: MetaStore, platform: string): AdapterStateStore {
  const full = (key: string): string => `${ADAPTER_STATE_META_PREFIX}:${platform}:${key}`;
  return {
    get: (key) => db.getMeta(full(key)),
    set: (key, value) => db.setMeta(full(key), value),
    delete: (key) => db.deleteMeta(full(key)),
  };
}

/** An {@link AdapterStateStore} in memory (tests, and adapters used without a database). */
export function adapterStateInMemory(): AdapterStateStore {
  const values = new Map<string, string>();
  return {
    get: async (key) => values.get(key) ?? null,
    set: async (key, value) => {
      values.set(key, value);
    },
    delete: async (key) => values.delete(key),
  };
}
