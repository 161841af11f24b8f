/**
 * The gateway-state rows both backends store (`routes`, `inbound_queue`; same column
 * names) and their mapping to contract records.
 *
 * @module
 */
import type { QueuedItem, Route, RouteFields } from "./contract.js";
import { InternalError } from "./errors.js";

/** A `routes` row. Booleans are stored as 0/1 (SQLite) or booleans (PostgreSQL). */
export interface RouteRow {
  key: string;
  session_id: string;
  created_at: number;
  updated_at: number;
  origin: string | null;
  display_name: string | null;
  platform: string | null;
  chat_type: string | null;
  was_auto_reset: number | boolean;
  auto_reset_reason: string | null;
  reset_had_activity: number | boolean;
  is_fresh_reset: number | boolean;
  expiry_finalized: number | boolean;
  suspended: number | boolean;
  resume_pending: number | boolean;
  resume_reason: string | null;
  last_resume_marked_at: number | null;
  last_prompt_tokens: number | string;
  turn_started_at: number | null;
  interrupted_restarts: number;
  finalize_failures: number;
  version: number | string;
}

/** The columns of `routes` in {@link routeValues} order. */
export const ROUTE_COLUMNS = [
  "key",
  "session_id",
  "created_at",
  "updated_at",
  "origin",
  "display_name",
  "platform",
  "chat_type",
  "was_auto_reset",
  "auto_reset_reason",
  "reset_had_activity",
  "is_fresh_reset",
  "expiry_finalized",
  "suspended",
  "resume_pending",
  "resume_reason",
  "last_resume_marked_at",
  "last_prompt_tokens",
  "turn_started_at",
  "interrupted_restarts",
  "finalize_failures",
  "version",
] as const;

/** Column values of an entry, in {@link ROUTE_COLUMNS} order; `flag` encodes booleans for the backend. */
export function routeValues(key: string, route: RouteFields, version: number, flag: (value: boolean) => number | boolean): unknown[] {
  return [
    key,
    route.sessionId,
    route.createdAt,
    route.updatedAt,
    route.origin === null ? null : JSON.stringify(route.origin),
    route.displayName,
    route.platform,
    route.chatType,
    flag(route.wasAutoReset),
    route.autoResetReason,
    flag(route.resetHadActivity),
    flag(route.isFreshReset),
    flag(route.expiryFinalized),
    flag(route.suspended),
    flag(route.resumePending),
    route.resumeReason,
    route.lastResumeMarkedAt,
    route.lastPromptTokens,
    route.turnStartedAt,
    route.interruptedRestarts,
    route.finalizeFailures,
    version,
  ];
}

/** Maps a `routes` row to a {@link Route}. */
export function toRoute(row: RouteRow): Route {
  return {
    key: row.key,
    sessionId: row.session_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    origin: row.origin === null ? null : (JSON.parse(row.origin) as Record<string, unknown>),
    displayName: row.display_name,
    platform: row.platform,
    chatType: row.chat_type,
    wasAutoReset: Boolean(row.was_auto_reset),
    autoResetReason: row.auto_reset_reason,
    resetHadActivity: Boolean(row.reset_had_activity),
    isFreshReset: Boolean(row.is_fresh_reset),
    expiryFinalized: Boolean(row.expiry_finalized),
    suspended: Boolean(row.suspended),
    resumePending: Boolean(row.resume_pending),
    resumeReason: row.resume_reason,
    lastResumeMarkedAt: row.last_resume_marked_at,
    lastPromptTokens: Number(row.last_prompt_tokens),
    turnStartedAt: row.turn_started_at,
    interruptedRestarts: row.interrupted_restarts,
    finalizeFailures: row.finalize_failures,
    version: Number(row.version),
  };
}

/** An `inbound_queue` row. */
export interface QueueRow {
  id: number | string;
  key: string;
  payloads: string;
  message_ids: string;
  merge_key: string | null;
  enqueued_at: number;
  last_event_at: number;
  claimed_at: number | null;
}

/** Maps an `inbound_queue` row to a {@link QueuedItem}. */
export function toQueuedItem(row: QueueRow): QueuedItem {
  return {
    id: Number(row.id),
    key: row.key,
    payloads: JSON.parse(row.payloads) as unknown[],
    messageIds: JSON.parse(row.message_ids) as string[],
    mergeKey: row.merge_key,
    enqueuedAt: row.enqueued_at,
    lastEventAt: row.last_event_at,
    claimedAt: row.claimed_at,
  };
}

/** The canonical id of an identity: the shortest, ties broken lexicographically. */
export function canonicalOf(ids: Iterable<string>): string {
  let best: string | null = null;
  for (const id of ids) {
    if (best === null || id.length < best.length || (id.length === best.length && id < best)) best = id;
  }
  if (best === null) throw new InternalError("canonicalOf was called without any id");
  return best;
}

/**
 * Whether an event merges into the queue's last item: same non-null merge key, the last
 * item not claimed, and (with a window) close enough in time.
 */
export function mergesInto(tail: QueuedItem | undefined, mergeKey: string | null, mergeWithinSeconds: number | null, at: number): tail is QueuedItem {
  if (tail === undefined || mergeKey === null || tail.claimedAt !== null || tail.mergeKey !== mergeKey) return false;
  return mergeWithinSeconds === null || at - tail.lastEventAt <= mergeWithinSeconds;
}
