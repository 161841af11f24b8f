/**
 * Pairing (`pairing_requests`, `pairing_approvals`, `pairing_senders`, `pairing_lockouts`),
 * once for every backend: the statements behind the `PairingStore` methods. Every
 * write runs under the platform's pairing lock (`StoreDialect.lockPairing`), so the limits
 * (pending codes per platform, failed approvals) are decided by one writer at a time in any
 * process, and of concurrent approvals of one code exactly one finds it.
 *
 * Times are epoch milliseconds. Expired codes are deleted by the next write of their
 * platform; a sender's last request time is kept (for the 10-minute limit) and deleted once
 * it no longer limits anything.
 *
 * @module
 */
import type { PairingApproveOutcome, PairingCodeOutcome, PairingList } from "../contract.js";
import { generatePairingCode, normalizePairingCode, PAIRING_LIMITS } from "../pairing-code.js";
import {
  PAIRING_APPROVAL_COLUMNS,
  PAIRING_REQUEST_COLUMNS,
  toPairingApproval,
  toPairingRequest,
  type CheckedPairingApproval,
  type CheckedPairingCodeRequest,
  type PairingApprovalRow,
  type PairingRequestRow,
} from "../pairing-input.js";
import { all, one, run, value, type Steps } from "./steps.js";

type Decode = (text: string | null) => string | null;
type Encode = (text: string | null) => string | null;

/** Whether the person is approved on the platform. */
export function* isApproved(platform: string, userId: string): Steps<boolean> {
  return (yield* value<number>("SELECT 1 FROM pairing_approvals WHERE platform = ? AND user_id = ?", [platform, userId])) !== undefined;
}

/** Deletes the platform's expired codes and the request times that no longer limit anyone. */
function* sweep(platform: string, now: number): Steps<void> {
  yield* run("DELETE FROM pairing_requests WHERE platform = ? AND expires_at <= ?", [platform, now]);
  yield* run("DELETE FROM pairing_senders WHERE platform = ? AND requested_at <= ?", [platform, now - PAIRING_LIMITS.requestIntervalMs]);
}

/** `requestPairingCode`, under the platform's lock. */
export function* requestCode(request: CheckedPairingCodeRequest, encode: Encode): Steps<PairingCodeOutcome> {
  const { platform, userId, now } = request;
  if (yield* isApproved(platform, userId)) return { kind: "already-approved" };
  yield* sweep(platform, now);
  const last = yield* value<number | string>("SELECT requested_at FROM pairing_senders WHERE platform = ? AND user_id = ?", [platform, userId]);
  if (last !== undefined && now - Number(last) < PAIRING_LIMITS.requestIntervalMs) return { kind: "rate-limited" };
  const pending = Number(yield* value<number | string>("SELECT count(*) FROM pairing_requests WHERE platform = ? AND expires_at > ?", [platform, now]));
  if (pending >= PAIRING_LIMITS.maxPendingPerPlatform) return { kind: "too-many-pending" };
  let code = generatePairingCode();
  // 32^8 codes and at most 3 pending: a clash is all but impossible, but never reuse a live one.
  while ((yield* value<number>("SELECT 1 FROM pairing_requests WHERE platform = ? AND code = ?", [platform, code])) !== undefined) {
    code = generatePairingCode();
  }
  const expiresAt = now + PAIRING_LIMITS.codeTtlMs;
  yield* run(`INSERT INTO pairing_requests (${PAIRING_REQUEST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
    platform,
    code,
    userId,
    encode(request.userName),
    request.chatId,
    now,
    expiresAt,
  ]);
  yield* run(
    `INSERT INTO pairing_senders (platform, user_id, requested_at) VALUES (?, ?, ?)
     ON CONFLICT (platform, user_id) DO UPDATE SET requested_at = excluded.requested_at`,
    [platform, userId, now],
  );
  return { kind: "code", code, expiresAt };
}

/** `approvePairingCode`, under the platform's lock. */
export function* approveCode(approval: CheckedPairingApproval, decode: Decode): Steps<PairingApproveOutcome> {
  const { platform, now } = approval;
  const lock = yield* one<{ failures: number | string; locked_until: number | string | null }>(
    "SELECT failures, locked_until FROM pairing_lockouts WHERE platform = ?",
    [platform],
  );
  let failures = lock === undefined ? 0 : Number(lock.failures);
  if (lock !== undefined && lock.locked_until !== null) {
    const until = Number(lock.locked_until);
    if (until > now) return { kind: "locked-out", until };
    failures = 0; // the lockout has ended: the count starts again
  }
  yield* sweep(platform, now);
  const code = normalizePairingCode(approval.code);
  const row =
    code === null
      ? undefined
      : yield* one<PairingRequestRow>(`SELECT ${PAIRING_REQUEST_COLUMNS} FROM pairing_requests WHERE platform = ? AND code = ? AND expires_at > ?`, [
          platform,
          code,
          now,
        ]);
  if (row === undefined) {
    failures += 1;
    const lockedUntil = failures >= PAIRING_LIMITS.maxFailedApprovals ? now + PAIRING_LIMITS.lockoutMs : null;
    yield* run(
      `INSERT INTO pairing_lockouts (platform, failures, locked_until) VALUES (?, ?, ?)
       ON CONFLICT (platform) DO UPDATE SET failures = excluded.failures, locked_until = excluded.locked_until`,
      [platform, failures, lockedUntil],
    );
    return { kind: "unknown-code" };
  }
  if (lock !== undefined) yield* run("DELETE FROM pairing_lockouts WHERE platform = ?", [platform]);
  const request = toPairingRequest(row, decode);
  yield* run(
    `INSERT INTO pairing_approvals (${PAIRING_APPROVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (platform, user_id) DO UPDATE SET user_name = excluded.user_name, approved_at = excluded.approved_at, approved_by = excluded.approved_by`,
    [platform, row.user_id, row.user_name, now, approval.by],
  );
  yield* run("DELETE FROM pairing_requests WHERE platform = ? AND user_id = ?", [platform, row.user_id]);
  return {
    kind: "approved",
    request,
    approval: { platform, userId: request.userId, userName: request.userName, approvedAt: now, approvedBy: approval.by },
  };
}

/** `listPairing`: unexpired codes oldest first, approvals by platform then time. */
export function* listPairing(platform: string | null, now: number, decode: Decode): Steps<PairingList> {
  const where = platform === null ? "" : "platform = ? AND ";
  const params = platform === null ? [] : [platform];
  const pending = yield* all<PairingRequestRow>(
    `SELECT ${PAIRING_REQUEST_COLUMNS} FROM pairing_requests WHERE ${where}expires_at > ? ORDER BY created_at, platform, code`,
    [...params, now],
  );
  const approved = yield* all<PairingApprovalRow>(
    `SELECT ${PAIRING_APPROVAL_COLUMNS} FROM pairing_approvals${platform === null ? "" : " WHERE platform = ?"} ORDER BY platform, approved_at, user_id`,
    params,
  );
  return {
    pending: pending.map((r) => toPairingRequest(r, decode)),
    approved: approved.map((r) => toPairingApproval(r, decode)),
  };
}

/** `revokePairing`. */
export function* revoke(platform: string, userId: string): Steps<boolean> {
  return (yield* run("DELETE FROM pairing_approvals WHERE platform = ? AND user_id = ?", [platform, userId])) > 0;
}
