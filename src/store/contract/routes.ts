/**
 * The {@link RouteStore} role (the gateway's routing entries) and its records. Part of the storage
 * contract (see `./index.ts`).
 *
 * @module
 */
import type { NewMessage, NewSession, Session, UsageUpdate } from "./history.js";
import type { ClaimedWrite } from "./inbound-claims.js";
import type { LeaseFence } from "./leases.js";
import type { Page } from "./page.js";

/** The flags and counters of a routing entry (see {@link Route}). */
export interface RouteState {
  /** The current session replaced the previous one by an automatic reset. */
  wasAutoReset: boolean;
  /** `idle`, `daily`, `suspended`, `resume_pending_expired`, … (with `wasAutoReset`). */
  autoResetReason: string | null;
  /** The session replaced by the automatic reset had messages or tokens. */
  resetHadActivity: boolean;
  /** The current session came from an explicit reset (`/new`, `/reset`) and has had no turn yet. */
  isFreshReset: boolean;
  /** The expiry watcher has finalised the current session. */
  expiryFinalized: boolean;
  /** The next message starts a new session (`/stop`, the stuck-loop guard). */
  suspended: boolean;
  /** The current session was interrupted and should be resumed. */
  resumePending: boolean;
  /** Why (`restart_interrupted`, `restart_timeout`, `shutdown_timeout`, …). */
  resumeReason: string | null;
  /** When `resumePending` was last set. */
  lastResumeMarkedAt: number | null;
  /** Prompt tokens of the last model call. */
  lastPromptTokens: number;
  /** When the turn in progress started; `null` when no turn runs. */
  turnStartedAt: number | null;
  /** Consecutive restarts that caught this key mid-turn (cleared by a successful turn). */
  interruptedRestarts: number;
  /** Failed finalisation attempts of the expiry watcher for the current session. */
  finalizeFailures: number;
}

/** Every field of a routing entry except its key and version. */
export interface RouteFields extends RouteState {
  /** The session this key routes to now. */
  sessionId: string;
  /** When this key started routing to `sessionId`. */
  createdAt: number;
  /** Last activity on this key. */
  updatedAt: number;
  /** The message origin (a gateway `SessionSource` as JSON). */
  origin: Record<string, unknown> | null;
  displayName: string | null;
  platform: string | null;
  chatType: string | null;
}

/** A gateway routing entry: a session key and the session it routes to now. */
export interface Route extends RouteFields {
  key: string;
  /** Grows by one on every write; the `expectedVersion` of the next conditional write. */
  version: number;
}

/**
 * A conditional write of a routing entry together with the session rows it implies,
 * committed in one transaction.
 */
export interface RouteWrite extends ClaimedWrite {
  key: string;
  /** The version last read, or `null` when the key must have no entry yet. */
  expectedVersion: number | null;
  route: RouteFields;
  /**
   * End this session in the same transaction (nothing happens if it already ended). With
   * `ifLastMessageId`, only while the newest visible message of that session is still the one
   * with this id (`null`: it has none); otherwise nothing is written and the call returns
   * `null`, as on a version conflict (a compression's guard against losing a message
   * appended meanwhile).
   */
  endSession?: { id: string; reason: string; endedAt?: number; ifLastMessageId?: number | null };
  /** Create this session in the same transaction; its `id` must equal `route.sessionId`. */
  createSession?: NewSession;
  /** Reopen this session (if ended) in the same transaction. */
  reopenSession?: string;
  /**
   * Append these messages to `route.sessionId` in the same transaction, in order, after the
   * session changes above, exactly as {@link SessionHistory.appendTurn} would: the session must
   * exist ({@link NotFoundError}) and be live ({@link ConflictError}); an invalid message is an
   * {@link InvalidInputError} naming it (`appendMessages[i]`). An empty array does nothing.
   */
  appendMessages?: NewMessage[];
  /**
   * Add this usage to `route.sessionId`'s totals in the same transaction, exactly as
   * {@link SessionHistory.recordUsage} in delta mode would. A total that would go below zero
   * makes the whole write reject with {@link InvalidInputError}, with nothing written.
   */
  recordUsage?: UsageUpdate;
  /**
   * Write only while this lease token is current (see {@link LeaseFence}); otherwise the
   * call throws {@link LeaseLostError} and writes nothing (checked before `expectedVersion`).
   */
  fence?: LeaseFence;
}

/** Options of {@link RouteStore.listRoutes}. Entries come in key order. */
export interface ListRoutesOptions {
  /** Default 100, 1 to 1,000. */
  limit?: number;
  cursor?: string | null;
  /** Only entries with `updatedAt >= updatedSince`. */
  updatedSince?: number;
  /** Only entries with `updatedAt < updatedBefore`. */
  updatedBefore?: number;
  suspended?: boolean;
  expiryFinalized?: boolean;
  resumePending?: boolean;
  /** Only entries with (`true`) or without (`false`) a turn in progress. */
  turnInProgress?: boolean;
}

/** The gateway's routing entries: which session each session key routes to now. */
export interface RouteStore {
  /** The routing entry of a key, or `null`. */
  getRoute(key: string): Promise<Route | null>;
  /** The entry routing to this session (the most recently updated one when several do), or `null`. */
  findRouteBySession(sessionId: string): Promise<Route | null>;
  /** Entries in key order, filtered, with a cursor. */
  listRoutes(options?: ListRoutesOptions): Promise<Page<Route>>;
  /**
   * Writes an entry if its version is still `expectedVersion`, with the session changes,
   * appended messages and usage it implies, atomically. Returns the stored entry, or `null`
   * (nothing written, appended or recorded) when another writer got there first. With `write.fence`, throws {@link LeaseLostError} (nothing
   * written) unless the lease token is current.
   */
  writeRoute(write: RouteWrite): Promise<Route | null>;
  /** Deletes an entry (only at `expectedVersion` when given). */
  deleteRoute(key: string, options?: { expectedVersion?: number }): Promise<boolean>;
  /**
   * The newest session that is still live (not ended) and carries this session key, or
   * `null` (to rebuild a lost entry). To list a key's sessions, use
   * {@link SessionHistory.listSessions} with `sessionKey`.
   */
  findLiveSessionByKey(key: string): Promise<Session | null>;
}
