/**
 * The matrix-js-sdk store the Matrix adapter gives its client: the SDK's `MemoryStore`
 * (rooms, users and account data in memory) with two of its hooks taken over, so the sync
 * position survives restarts without keeping the whole sync state:
 *
 * - `getSavedSyncToken()` answers the `next_batch` token saved by the last run, so the SDK's
 *   first `/sync` continues from there (`since=<token>`) and the messages sent while the
 *   gateway was down arrive; with none saved the SDK makes an initial sync.
 * - `setSyncData(response)` is awaited by the SDK's sync loop after it has processed (and
 *   emitted the events of) each `/sync` response and before it asks for the next one; the
 *   adapter's `synced` hook waits there until the batch's messages are stored by the gateway,
 *   then saves `next_batch`. A crash before that point re-delivers the batch on the next start
 *   (and the gateway refuses message ids it already took); nothing is answered twice.
 *
 * `getSavedSync()` stays `null` (the SDK's room state is not persisted: the adapter looks up
 * what it needs about a room with the Client-Server API instead).
 *
 * @module
 */
import type { ISyncResponse, MemoryStore } from "matrix-js-sdk";

/** The adapter's side of the store. */
export interface SyncTokenHooks {
  /** The token to continue from (`null`: none saved; the SDK makes an initial sync). */
  load(): Promise<string | null>;
  /** Called after each processed `/sync` response; the next `/sync` waits for it. */
  synced(nextBatch: string): Promise<void>;
}

/**
 * A `MemoryStore` (the class from the lazily loaded SDK) that loads and reports the sync
 * token through `hooks`.
 */
export function createSyncTokenStore(MemoryStoreClass: typeof MemoryStore, hooks: SyncTokenHooks): MemoryStore {
  class SyncTokenStore extends MemoryStoreClass {
    override getSavedSyncToken(): Promise<string | null> {
      return hooks.load();
    }

    override async setSyncData(data: ISyncResponse): Promise<void> {
      await super.setSyncData(data);
      await hooks.synced(data.next_batch);
    }
  }
  return new SyncTokenStore();
}
