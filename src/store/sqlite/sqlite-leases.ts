/**
 * Session-key leases (`session_leases`) on SQLite: the statements behind acquireLease,
 * renewLease, releaseLease, getLease and the fence of fenced writes. Callers run the
 * writing ones inside the write queue's transaction (`BEGIN IMMEDIATE`), which every
 * process serialises, so a read-then-write here is atomic across processes.
 *
 * @module
 */
import type { Lease, LeaseFence } from "../contract.js";
import { assertFence, grantedToken, toLease, type LeaseRow } from "../lease-rows.js";
import type { CheckedLeaseRequest } from "../routing-input.js";
import type { SqliteConnection } from "./sqlite-connection.js";

/** The row of a key (held, expired or released), or `undefined`. */
export function leaseRow(conn: SqliteConnection, key: string): LeaseRow | undefined {
  return conn.stmt("SELECT key, holder, token, expires_at FROM session_leases WHERE key = ?").get(key) as LeaseRow | undefined;
}

/** Grants (or renews for the same holder) the lease; `null` when another holder has it. */
export function acquireLease(conn: SqliteConnection, request: CheckedLeaseRequest): Lease | null {
  const token = grantedToken(leaseRow(conn, request.key), request.holder, request.now);
  if (token === null) return null;
  conn
    .stmt(
      `INSERT INTO session_leases (key, holder, token, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at`,
    )
    .run(request.key, request.holder, token, request.expiresAt);
  return { key: request.key, holder: request.holder, token, expiresAt: request.expiresAt };
}

/** Extends the lease if `holder` still holds it with `token` (expired or not); `null` otherwise. */
export function renewLease(conn: SqliteConnection, request: CheckedLeaseRequest, token: number): Lease | null {
  const changed = conn
    .stmt("UPDATE session_leases SET expires_at = ? WHERE key = ? AND holder = ? AND token = ?")
    .run(request.expiresAt, request.key, request.holder, token).changes;
  return changed > 0 ? { key: request.key, holder: request.holder, token, expiresAt: request.expiresAt } : null;
}

/** Releases the lease (keeping its token) if `holder` holds it with `token`. */
export function releaseLease(conn: SqliteConnection, key: string, holder: string, token: number): boolean {
  return (
    conn
      .stmt("UPDATE session_leases SET holder = NULL, expires_at = 0 WHERE key = ? AND holder = ? AND token = ?")
      .run(key, holder, token).changes > 0
  );
}

/** The lease of a key, or `null` when never taken or released. */
export function getLease(conn: SqliteConnection, key: string): Lease | null {
  return toLease(leaseRow(conn, key));
}

/** Throws `LeaseLostError` unless the fence's token is current (call first inside the write). */
export function checkFence(conn: SqliteConnection, fence: LeaseFence | null): void {
  if (fence === null) return;
  assertFence(fence, leaseRow(conn, fence.key));
}
