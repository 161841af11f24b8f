/**
 * Pairing, the parts both backends share: input validation (so they reject the same things
 * with the same messages), the pairing rows and their mapping to {@link PairingRequest} and
 * {@link PairingApproval}.
 *
 * @module
 */
import type { ListPairingOptions, PairingApproval, PairingApproveOptions, PairingCodeRequestOptions, PairingRequest } from "./contract.js";
import { InvalidInputError } from "./errors.js";
import { checkId, checkIdFilter, optionalText } from "./input-validation.js";

/** A `pairing_requests` row (same column names on both backends; PostgreSQL returns `bigint` as text). */
export interface PairingRequestRow {
  platform: string;
  code: string;
  user_id: string;
  user_name: string | null;
  chat_id: string | null;
  created_at: number | string;
  expires_at: number | string;
}

/** A `pairing_approvals` row. */
export interface PairingApprovalRow {
  platform: string;
  user_id: string;
  user_name: string | null;
  approved_at: number | string;
  approved_by: string | null;
}

/** The columns {@link toPairingRequest} reads. */
export const PAIRING_REQUEST_COLUMNS = "platform, code, user_id, user_name, chat_id, created_at, expires_at";
/** The columns {@link toPairingApproval} reads. */
export const PAIRING_APPROVAL_COLUMNS = "platform, user_id, user_name, approved_at, approved_by";

type Decode = (text: string | null) => string | null;

/** A row as a {@link PairingRequest}; `decode` undoes a backend's text encoding of the name. */
export function toPairingRequest(row: PairingRequestRow, decode: Decode): PairingRequest {
  return {
    platform: row.platform,
    code: row.code,
    userId: row.user_id,
    userName: decode(row.user_name),
    chatId: row.chat_id,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

/** A row as a {@link PairingApproval}. */
export function toPairingApproval(row: PairingApprovalRow, decode: Decode): PairingApproval {
  return {
    platform: row.platform,
    userId: row.user_id,
    userName: decode(row.user_name),
    approvedAt: Number(row.approved_at),
    approvedBy: row.approved_by,
  };
}

/** Checks a time in epoch milliseconds; `undefined` → now. */
export function checkMillis(value: unknown, field: string): number {
  if (value === undefined) return Date.now();
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError(`${field} must be a non-negative whole number of milliseconds since the epoch.`, { field });
  }
  return value;
}

/** A checked code request. */
export interface CheckedPairingCodeRequest {
  platform: string;
  userId: string;
  userName: string | null;
  chatId: string | null;
  now: number;
}

/** Checks `requestPairingCode`'s arguments. */
export function checkPairingCodeRequest(platform: unknown, userId: unknown, options: PairingCodeRequestOptions | undefined): CheckedPairingCodeRequest {
  const opts = checkOptions(options);
  return {
    platform: checkId(platform, "platform"),
    userId: checkId(userId, "userId"),
    userName: optionalText(opts.userName, "userName"),
    chatId: checkIdFilter(opts.chatId, "chatId"),
    now: checkMillis(opts.now, "now"),
  };
}

/** A checked approval. `code` is as typed (normalised by the steps: a malformed code is a failed approval). */
export interface CheckedPairingApproval {
  platform: string;
  code: string;
  by: string | null;
  now: number;
}

/** Checks `approvePairingCode`'s arguments. */
export function checkPairingApproval(platform: unknown, code: unknown, options: PairingApproveOptions | undefined): CheckedPairingApproval {
  const opts = checkOptions(options);
  if (typeof code !== "string") throw new InvalidInputError("code must be a string.", { field: "code" });
  return {
    platform: checkId(platform, "platform"),
    code,
    by: checkIdFilter(opts.by, "by"),
    now: checkMillis(opts.now, "now"),
  };
}

/** Checks `listPairing`'s options. */
export function checkListPairing(options: ListPairingOptions | undefined): { platform: string | null; now: number } {
  const opts = checkOptions(options);
  return { platform: checkIdFilter(opts.platform, "platform"), now: checkMillis(opts.now, "now") };
}

function checkOptions<T extends object>(options: T | undefined): Partial<T> {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object") throw new InvalidInputError("options must be an object.", { field: "options" });
  return options;
}
