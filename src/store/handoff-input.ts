/**
 * Cross-platform handoffs, the parts both backends share: input validation (so they reject
 * the same things with the same messages), the `handoffs` row shape and its mapping to
 * {@link Handoff}, and the rule of which states a handoff may end from.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import type { ClaimHandoffOptions, Handoff, HandoffResult, HandoffStatus, NewHandoff } from "./contract.js";
import { ConflictError, InvalidInputError } from "./errors.js";
import { checkId, checkTime, optionalText } from "./input-validation.js";

/** A `handoffs` row (same column names on both backends). */
export interface HandoffRow {
  id: string;
  session_id: string;
  platform: string;
  status: string;
  reason: string | null;
  created_at: number;
  updated_at: number;
  claimed_by: string | null;
  chat_id: string | null;
  thread_id: string | null;
  session_key: string | null;
}

/** The columns of a `handoffs` row that {@link toHandoff} reads. */
export const HANDOFF_COLUMNS = "id, session_id, platform, status, reason, created_at, updated_at, claimed_by, chat_id, thread_id, session_key";

/** A row as a {@link Handoff}; `decode` undoes a backend's text encoding of `reason`. */
export function toHandoff(row: HandoffRow, decode: (text: string | null) => string | null = (t) => t): Handoff {
  return {
    id: row.id,
    sessionId: row.session_id,
    platform: row.platform,
    status: row.status as HandoffStatus,
    reason: decode(row.reason),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    claimedBy: row.claimed_by,
    chatId: row.chat_id,
    threadId: row.thread_id,
    sessionKey: row.session_key,
  };
}

/** A checked {@link NewHandoff}, with its new id. */
export interface CheckedNewHandoff {
  id: string;
  sessionId: string;
  platform: string;
  createdAt: number;
}

/** Checks a {@link NewHandoff} and picks the new handoff's id. */
export function checkNewHandoff(input: NewHandoff, now: number): CheckedNewHandoff {
  if (input === null || typeof input !== "object") {
    throw new InvalidInputError("createHandoff needs { sessionId, platform }.", { field: "input" });
  }
  return {
    id: randomUUID(),
    sessionId: checkId(input.sessionId, "sessionId"),
    platform: checkId(input.platform, "platform"),
    createdAt: checkTime(input.now, "now", now),
  };
}

/** Checked {@link ClaimHandoffOptions}. */
export interface CheckedClaimHandoff {
  platforms: string[];
  holder: string;
  /** `null`: any age. */
  createdBefore: number | null;
  now: number;
}

/** Checks {@link ClaimHandoffOptions}. */
export function checkClaimHandoff(options: ClaimHandoffOptions, now: number): CheckedClaimHandoff {
  if (options === null || typeof options !== "object") {
    throw new InvalidInputError("claimHandoff needs { platforms, holder }.", { field: "options" });
  }
  if (!Array.isArray(options.platforms)) {
    throw new InvalidInputError("platforms must be an array of platform names.", { field: "platforms" });
  }
  if (options.platforms.length > 1000) {
    throw new InvalidInputError("platforms may name at most 1,000 platforms.", { field: "platforms" });
  }
  const platforms = [...new Set(options.platforms.map((p, i) => checkId(p, `platforms[${i}]`)))];
  return {
    platforms,
    holder: checkId(options.holder, "holder"),
    createdBefore: options.createdBefore === undefined ? null : checkTime(options.createdBefore, "createdBefore", 0),
    now: checkTime(options.now, "now", now),
  };
}

/** A checked {@link HandoffResult}: what {@link finishHandoff} stores. */
export interface CheckedHandoffResult {
  status: "completed" | "failed";
  reason: string | null;
  chatId: string | null;
  threadId: string | null;
  sessionKey: string | null;
  now: number;
}

function optionalId(value: unknown, field: string): string | null {
  return value === undefined || value === null ? null : checkId(value, field);
}

/** Checks a {@link HandoffResult}. */
export function checkHandoffResult(result: HandoffResult, now: number): CheckedHandoffResult {
  if (result === null || typeof result !== "object") {
    throw new InvalidInputError('finishHandoff needs { status: "completed" | "failed", … }.', { field: "result" });
  }
  if (result.status !== "completed" && result.status !== "failed") {
    throw new InvalidInputError('result.status must be "completed" or "failed".', { field: "status" });
  }
  const checked: CheckedHandoffResult = {
    status: result.status,
    reason: result.status === "failed" ? optionalText(result.reason, "reason") : null,
    chatId: optionalId(result.chatId, "chatId"),
    threadId: optionalId(result.threadId, "threadId"),
    sessionKey: optionalId(result.sessionKey, "sessionKey"),
    now: checkTime(result.now, "now", now),
  };
  if (checked.status === "completed" && (checked.chatId === null || checked.sessionKey === null)) {
    throw new InvalidInputError("A completed handoff needs the target chatId and sessionKey.", {
      field: checked.chatId === null ? "chatId" : "sessionKey",
    });
  }
  return checked;
}

/**
 * Throws {@link ConflictError} unless a handoff in `status` may end as `result`:
 * `completed` only from `running`, `failed` from `pending` or `running`.
 */
export function assertCanFinish(id: string, status: string, result: CheckedHandoffResult): void {
  const allowed = result.status === "completed" ? status === "running" : status === "pending" || status === "running";
  if (allowed) return;
  const hint =
    status === "completed" || status === "failed" ? `it has already ${status === "completed" ? "completed" : "failed"}` : "claim it first (claimHandoff)";
  throw new ConflictError(`Handoff ${id} is ${status} and cannot become ${result.status}: ${hint}.`);
}
