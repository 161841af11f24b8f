/**
 * The `session_leases` rows both backends store (same column names), their mapping to
 * {@link Lease}, and whether a fence holds (whether an acquisition is granted, and with
 * which token, is decided by the acquiring statement itself: `core/lease-steps.ts`).
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
 * Throws {@link LeaseLostError} unless the key's row (read inside the write's
 * transaction) is held with exactly the fence's token. Expiry is not checked.
 */
export function assertFence(fence: LeaseFence, row: Pick<LeaseRow, "holder" | "token"> | undefined): void {
  const current = row === undefined || row.holder === null ? null : Number(row.token);
  if (current !== fence.token) throw new LeaseLostError(fence.key, fence.token, current);
}
