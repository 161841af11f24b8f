/**
 * The {@link LeaseStore} role (leases on session keys across gateway replicas) and its records,
 * with the lease fence that other roles' writes may carry. Part of the storage contract (see
 * `./index.ts`).
 *
 * @module
 */

/**
 * A lease on a session key: while a gateway replica holds it, no other replica runs a turn
 * of that key. Leases expire unless renewed, so a crashed holder cannot block a key forever.
 */
export interface Lease {
  /** The session key (a routing key). */
  key: string;
  /** Who holds it: an id unique to one running holder (e.g. replica id + process start), never reused after a restart. */
  holder: string;
  /**
   * Fencing token: grows (by one) every time the lease changes hands, including after a
   * release or an expiry; a renewal (or a re-acquisition by the same holder) keeps it.
   * Pass it as {@link LeaseFence} on every write of the turn.
   */
  token: number;
  /** When it lapses (epoch seconds); from then on another holder may take it. */
  expiresAt: number;
}

/** Options of {@link LeaseStore.acquireLease} and {@link LeaseStore.renewLease}. */
export interface LeaseOptions {
  /** How long the lease lasts from `now`, in seconds (more than 0, at most 86,400). */
  ttlSeconds: number;
  /** "Now" (default: the current time of this process). Replicas must keep their clocks in sync. */
  now?: number;
}

/**
 * A fence on a write: the write happens only if, inside its transaction, the lease on `key`
 * is held (not released) with exactly `token`. Expiry is not checked: an expired lease that
 * nobody else has taken still fences; a newer holder's acquisition bumps the token, which is
 * what makes a stale holder's late write fail with {@link LeaseLostError}.
 */
export interface LeaseFence {
  /** The leased session key. */
  key: string;
  /** {@link Lease.token} as acquired. */
  token: number;
}

/** Options of a transcript write that may be fenced by a lease. */
export interface FencedWriteOptions {
  /** Refuse the write (with {@link LeaseLostError}, nothing written) unless this lease token is current. */
  fence?: LeaseFence;
}

/** Leases on session keys, so that of several gateway replicas only one runs a key's turn. */
export interface LeaseStore {
  /**
   * Takes the lease on a session key for `holder`, atomically across processes (of two
   * concurrent acquirers exactly one wins). Granted when the key is free (never leased or
   * released), expired (`expiresAt <= now`), or already held by `holder` (a renewal: new
   * expiry, same token, even if it had expired meanwhile). A grant to a new holder gets the
   * previous token + 1 (1 for a key never leased). Returns the lease, or `null` when
   * another holder has it.
   */
  acquireLease(key: string, holder: string, options: LeaseOptions): Promise<Lease | null>;
  /**
   * Extends a lease to `now + ttlSeconds` if `holder` still holds it with `token`, even when
   * it has just expired, as long as nobody else took it (the token still fences then).
   * Returns the renewed lease, or `null` when it was released or taken over.
   */
  renewLease(key: string, holder: string, token: number, options: LeaseOptions): Promise<Lease | null>;
  /**
   * Gives a lease up (if `holder` still holds it with `token`, expired or not), so the next
   * acquirer need not wait for the expiry; its token then no longer fences. Returns whether
   * it was released.
   */
  releaseLease(key: string, holder: string, token: number): Promise<boolean>;
  /**
   * The current lease of a key, or `null` when it was never leased or is released. An expired
   * lease is still returned until someone takes it: compare `expiresAt` with now.
   */
  getLease(key: string): Promise<Lease | null>;
}
