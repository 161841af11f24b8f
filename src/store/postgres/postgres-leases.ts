/**
 * Session-key leases (`session_leases`) on PostgreSQL: the statements behind
 * acquireLease, renewLease, releaseLease, getLease and the fence of fenced writes.
 * Callers run the writing ones inside the write transaction.
 *
 * Race safety: an acquisition locks the key's row (`INSERT … ON CONFLICT DO NOTHING`
 * then `SELECT … FOR UPDATE`), so concurrent acquirers in any process queue up and each
 * decides on the committed state; a fence takes the row's share lock, so an acquisition
 * (which bumps the token) waits for fenced writes in flight and every later fenced write
 * with the old token sees the new one.
 *
 * @module
 */
import type { Lease, LeaseFence } from "../contract.js";
import { assertFence, grantedToken, toLease, type LeaseRow } from "../lease-rows.js";
import type { CheckedLeaseRequest } from "../routing-input.js";
import type { Sql } from "./postgres-connection.js";

const COLUMNS = "key, holder, token, expires_at";

/** The row of a key (held, expired or released), or `undefined`. */
export async function leaseRow(sql: Sql, key: string): Promise<LeaseRow | undefined> {
  return sql.one<LeaseRow>(`SELECT ${COLUMNS} FROM session_leases WHERE key = $1`, [key]);
}

/** Grants (or renews for the same holder) the lease under the key's row lock; `null` when another holder has it. */
export async function acquireLease(sql: Sql, request: CheckedLeaseRequest): Promise<Lease | null> {
  const { key, holder, now, expiresAt } = request;
  // A new key: the insert is the grant (token 1). A concurrent inserter waits for this
  // transaction, then finds the row and decides below under its lock.
  const inserted = await sql.one<LeaseRow>(
    `INSERT INTO session_leases (${COLUMNS}) VALUES ($1, $2, 1, $3) ON CONFLICT (key) DO NOTHING RETURNING ${COLUMNS}`,
    [key, holder, expiresAt],
  );
  if (inserted !== undefined) return toLease(inserted);
  const current = await sql.one<LeaseRow>(`SELECT ${COLUMNS} FROM session_leases WHERE key = $1 FOR UPDATE`, [key]);
  const token = grantedToken(current, holder, now);
  if (token === null) return null;
  const stored = await sql.one<LeaseRow>(
    `UPDATE session_leases SET holder = $2, token = $3, expires_at = $4 WHERE key = $1 RETURNING ${COLUMNS}`,
    [key, holder, token, expiresAt],
  );
  return toLease(stored);
}

/** Extends the lease if `holder` still holds it with `token` (expired or not); `null` otherwise. */
export async function renewLease(sql: Sql, request: CheckedLeaseRequest, token: number): Promise<Lease | null> {
  const row = await sql.one<LeaseRow>(
    `UPDATE session_leases SET expires_at = $4 WHERE key = $1 AND holder = $2 AND token = $3 RETURNING ${COLUMNS}`,
    [request.key, request.holder, token, request.expiresAt],
  );
  return toLease(row);
}

/** Releases the lease (keeping its token) if `holder` holds it with `token`. */
export async function releaseLease(sql: Sql, key: string, holder: string, token: number): Promise<boolean> {
  return (
    (await sql.run("UPDATE session_leases SET holder = NULL, expires_at = 0 WHERE key = $1 AND holder = $2 AND token = $3", [
      key,
      holder,
      token,
    ])) > 0
  );
}

/** The lease of a key, or `null` when never taken or released. */
export async function getLease(sql: Sql, key: string): Promise<Lease | null> {
  return toLease(await leaseRow(sql, key));
}

/**
 * Throws `LeaseLostError` unless the fence's token is current. Call it first inside the
 * write: the share lock it takes holds off a takeover until the write commits.
 */
export async function checkFence(sql: Sql, fence: LeaseFence | null): Promise<void> {
  if (fence === null) return;
  const row = await sql.one<Pick<LeaseRow, "holder" | "token">>(
    "SELECT holder, token FROM session_leases WHERE key = $1 FOR SHARE",
    [fence.key],
  );
  assertFence(fence, row);
}
