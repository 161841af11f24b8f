/**
 * Session-key leases (`session_leases`), once for every backend: the statements behind
 * acquireLease, renewLease, releaseLease, getLease and the fence of fenced writes. Acquiring,
 * renewing and releasing are one statement each (run by `writeStatement`: on PostgreSQL
 * without BEGIN/COMMIT); an acquisition of an existing key is decided under the row lock its
 * upsert takes (SQLite's write lock already excludes every other writer).
 * A fenced write takes the lease row's share lock (`forShare`) first, so a takeover (which
 * bumps the token) waits for fenced writes in flight.
 *
 * @module
 */
import type { Lease, LeaseFence } from "../contract.js";
import { assertFence, toLease, type LeaseRow } from "../lease-rows.js";
import type { CheckedLeaseRequest } from "../routing-input.js";
import { one, run, type Steps } from "./steps.js";

const COLUMNS = "key, holder, token, expires_at";

/** Row-lock suffixes of a dialect (`""` where a write already excludes other writers). */
export interface LockSuffixes {
  forUpdate: string;
  forShare: string;
}

/** The lease of a key, or `null` when never taken or released. */
export function* getLease(key: string): Steps<Lease | null> {
  return toLease(yield* one<LeaseRow>(`SELECT ${COLUMNS} FROM session_leases WHERE key = ?`, [key]));
}

/**
 * Grants (or renews for the same holder) the lease; `null` when another holder has it. One
 * statement: a new key is granted by its insert (token 1); an existing one is decided under
 * the row lock the upsert takes (a concurrent acquirer waits, then sees this one's row): the
 * same holder keeps its token, a released or expired lease goes to the caller with the token
 * bumped, and a running lease of another holder is left alone (no row comes back).
 */
export function* acquireLease(request: CheckedLeaseRequest): Steps<Lease | null> {
  const { key, holder, now, expiresAt } = request;
  const row = yield* one<LeaseRow>(
    `INSERT INTO session_leases (${COLUMNS}) VALUES (?, ?, 1, ?)
     ON CONFLICT (key) DO UPDATE SET
       holder = excluded.holder,
       token = CASE WHEN session_leases.holder = excluded.holder THEN session_leases.token ELSE session_leases.token + 1 END,
       expires_at = excluded.expires_at
     WHERE session_leases.holder = excluded.holder OR session_leases.holder IS NULL OR session_leases.expires_at <= ?
     RETURNING ${COLUMNS}`,
    [key, holder, expiresAt, now],
  );
  return toLease(row);
}

/** Extends the lease if `holder` still holds it with `token` (expired or not); `null` otherwise. */
export function* renewLease(request: CheckedLeaseRequest, token: number): Steps<Lease | null> {
  const row = yield* one<LeaseRow>(`UPDATE session_leases SET expires_at = ? WHERE key = ? AND holder = ? AND token = ? RETURNING ${COLUMNS}`, [
    request.expiresAt,
    request.key,
    request.holder,
    token,
  ]);
  return toLease(row);
}

/** Releases the lease (keeping its token) if `holder` holds it with `token`. */
export function* releaseLease(key: string, holder: string, token: number): Steps<boolean> {
  const changed = yield* run("UPDATE session_leases SET holder = NULL, expires_at = 0 WHERE key = ? AND holder = ? AND token = ?", [key, holder, token]);
  return changed > 0;
}

/** Throws `LeaseLostError` unless the fence's token is current. Call it first inside the write. */
export function* checkFence(fence: LeaseFence | null, locks: LockSuffixes): Steps<void> {
  if (fence === null) return;
  const row = yield* one<Pick<LeaseRow, "holder" | "token">>(`SELECT holder, token FROM session_leases WHERE key = ?${locks.forShare}`, [fence.key]);
  assertFence(fence, row);
}
