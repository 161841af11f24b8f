/**
 * The `session_leases` rows both backends store (same column names), their mapping to
 * {@link Lease}, and the decisions every backend makes the same way: whether an
 * acquisition is granted (and with which token) and whether a fence holds.
 *
 * A row is never deleted: a release sets `holder` to `NULL` and `expires_at` to 0 but
 * keeps `token`, so the next acquisition gets `token + 1` and a released holder's token
 * can never become current again.
 *
 * @module
 */
import type { Lease, LeaseFence } from "./contract.js";
import { LeaseLostError } from "./errors.js";

/** A `session_leases` row (`holder` is `NULL` once released). */
export interface LeaseRow {
  key: string;
  holder: string | null;
  token: number | string;
  expires_at: number;
}

/** A held row as a {@link Lease}; `null` for a released one. */
export function toLease(row: LeaseRow | undefined): Lease | null {
  if (row === undefined || row.holder === null) return null;
  return { key: row.key, holder: row.holder, token: Number(row.token), expiresAt: row.expires_at };
}

/**
 * The token an acquisition by `holder` at `now` gets given the key's current row, or
 * `null` when another holder has an unexpired lease. Same holder: the same token (a
 * renewal); a free, released or expired key: the previous token + 1 (1 for a new key).
 */
export function grantedToken(row: LeaseRow | undefined, holder: string, now: number): number | null {
  if (row === undefined) return 1;
  const token = Number(row.token);
  if (row.holder === holder) return token;
  if (row.holder === null || row.expires_at <= now) return token + 1;
  return null;
}

/**
 * Throws {@link LeaseLostError} unless the key's row (read inside the write's
 * transaction) is held with exactly the fence's token. Expiry is not checked.
 */
export function assertFence(fence: LeaseFence, row: Pick<LeaseRow, "holder" | "token"> | undefined): void {
  const current = row === undefined || row.holder === null ? null : Number(row.token);
  if (current !== fence.token) throw new LeaseLostError(fence.key, fence.token, current);
}
