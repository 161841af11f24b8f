/**
 * Validation of gateway-state input (routing entries, aliases, queued events, leases), shared
 * by both backends so they reject the same things with the same messages.
 *
 * @module
 */
import type { FencedWriteOptions, LeaseFence, LeaseOptions, ListRoutesOptions, NewQueuedEvent, NewSession, RouteFields, RouteWrite } from "./contract.js";
import { InvalidInputError } from "./errors.js";
import { checkId, checkLimit, checkNewSession, checkTime, normalizeMessage, optionalText, toJson, type NormalizedMessage } from "./input-validation.js";
import { planUsageUpdate, type UsagePlan } from "./usage-update.js";

/** Default and ceiling of a queue's waiting items. */
export const DEFAULT_QUEUE_DEPTH = 32;
/** Default page size of {@link ListRoutesOptions}. */
export const DEFAULT_ROUTE_PAGE = 100;

/**
 * Checks a value used as a routing key or a session id handed to the store directly:
 * besides {@link checkId}, no path separators, no `..` and no drive prefix, so it can
 * never name a file outside its place if anything ever uses it as one.
 */
export function checkPathSafe(value: unknown, field: string): string {
  const text = checkId(value, field);
  if (/[/\\]/u.test(text) || text.includes("..") || /^[A-Za-z]:/u.test(text)) {
    throw new InvalidInputError(
      `${field} "${text}" contains a path separator, ".." or a drive prefix; ` +
        "build keys with buildSessionKey (it escapes such characters) and use store-made session ids.",
      { field },
    );
  }
  return text;
}

function checkFlag(value: unknown, field: string): boolean {
  if (typeof value !== "boolean") throw new InvalidInputError(`route.${field} must be true or false.`, { field });
  return value;
}

function checkCount(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidInputError(`route.${field} must be a whole number ≥ 0.`, { field });
  }
  return value;
}

function optionalTime(value: unknown, field: string): number | null {
  if (value === null) return null;
  return checkTime(value, `route.${field}`, 0);
}

/** Checks every field of a routing entry. */
export function checkRouteFields(route: RouteFields): RouteFields {
  if (route === null || typeof route !== "object") {
    throw new InvalidInputError("route must be an object with every routing field.", { field: "route" });
  }
  const origin = route.origin;
  if (origin !== null && (typeof origin !== "object" || Array.isArray(origin))) {
    throw new InvalidInputError("route.origin must be a JSON object or null.", { field: "origin" });
  }
  if (origin !== null) toJson(origin, "route.origin");
  return {
    sessionId: checkPathSafe(route.sessionId, "route.sessionId"),
    createdAt: checkTime(route.createdAt ?? null, "route.createdAt", 0),
    updatedAt: checkTime(route.updatedAt ?? null, "route.updatedAt", 0),
    origin,
    displayName: optionalText(route.displayName, "route.displayName"),
    platform: optionalText(route.platform, "route.platform"),
    chatType: optionalText(route.chatType, "route.chatType"),
    wasAutoReset: checkFlag(route.wasAutoReset, "wasAutoReset"),
    autoResetReason: optionalText(route.autoResetReason, "route.autoResetReason"),
    resetHadActivity: checkFlag(route.resetHadActivity, "resetHadActivity"),
    isFreshReset: checkFlag(route.isFreshReset, "isFreshReset"),
    expiryFinalized: checkFlag(route.expiryFinalized, "expiryFinalized"),
    suspended: checkFlag(route.suspended, "suspended"),
    resumePending: checkFlag(route.resumePending, "resumePending"),
    resumeReason: optionalText(route.resumeReason, "route.resumeReason"),
    lastResumeMarkedAt: optionalTime(route.lastResumeMarkedAt, "lastResumeMarkedAt"),
    lastPromptTokens: checkCount(route.lastPromptTokens, "lastPromptTokens"),
    turnStartedAt: optionalTime(route.turnStartedAt, "turnStartedAt"),
    interruptedRestarts: checkCount(route.interruptedRestarts, "interruptedRestarts"),
    finalizeFailures: checkCount(route.finalizeFailures, "finalizeFailures"),
  };
}

/** A checked {@link RouteWrite}. */
export interface CheckedRouteWrite {
  key: string;
  expectedVersion: number | null;
  route: RouteFields;
  endSession: { id: string; reason: string; endedAt: number; ifLastMessageId: number | null | undefined } | null;
  createSession: NewSession | null;
  reopenSession: string | null;
  /** Messages to append to `route.sessionId`, validated; `null` when none (an empty array is a no-op). */
  appendMessages: NormalizedMessage[] | null;
  /** The usage (delta) to add to `route.sessionId`'s totals, planned; `null` when none. */
  recordUsage: UsagePlan | null;
  fence: LeaseFence | null;
}

/** Checks a {@link RouteWrite}. */
export function checkRouteWrite(write: RouteWrite, now: number): CheckedRouteWrite {
  if (write === null || typeof write !== "object") {
    throw new InvalidInputError("writeRoute needs { key, expectedVersion, route }.", { field: "write" });
  }
  const key = checkPathSafe(write.key, "key");
  const expected = write.expectedVersion;
  if (expected !== null && (typeof expected !== "number" || !Number.isSafeInteger(expected) || expected < 1)) {
    throw new InvalidInputError("expectedVersion must be the version read (a whole number ≥ 1) or null for a new key.", {
      field: "expectedVersion",
    });
  }
  const route = checkRouteFields(write.route);
  let endSession: CheckedRouteWrite["endSession"] = null;
  if (write.endSession !== undefined) {
    endSession = {
      id: checkId(write.endSession.id, "endSession.id"),
      reason: checkId(write.endSession.reason, "endSession.reason"),
      endedAt: checkTime(write.endSession.endedAt, "endSession.endedAt", now),
      ifLastMessageId: checkLastMessageId(write.endSession.ifLastMessageId, "endSession.ifLastMessageId"),
    };
  }
  let createSession: CheckedRouteWrite["createSession"] = null;
  if (write.createSession !== undefined) {
    createSession = checkNewSession(write.createSession);
    if (createSession.id !== route.sessionId) {
      throw new InvalidInputError("createSession.id must equal route.sessionId (the entry routes to the session it creates).", {
        field: "createSession.id",
      });
    }
  }
  const reopenSession = write.reopenSession === undefined ? null : checkId(write.reopenSession, "reopenSession");
  let appendMessages: NormalizedMessage[] | null = null;
  if (write.appendMessages !== undefined) {
    if (!Array.isArray(write.appendMessages)) {
      throw new InvalidInputError("appendMessages must be an array of messages.", { field: "appendMessages" });
    }
    const normalized = write.appendMessages.map((m, i) => normalizeMessage(m, `appendMessages[${i}]`, now));
    appendMessages = normalized.length === 0 ? null : normalized;
  }
  const recordUsage = write.recordUsage === undefined ? null : planUsageUpdate(write.recordUsage, "delta");
  const fence = write.fence === undefined ? null : checkFence(write.fence);
  return { key, expectedVersion: expected, route, endSession, createSession, reopenSession, appendMessages, recordUsage, fence };
}

/** Checked {@link ListRoutesOptions}. */
export interface CheckedListRoutes {
  limit: number;
  after: string | null;
  updatedSince: number | null;
  updatedBefore: number | null;
  suspended: boolean | null;
  expiryFinalized: boolean | null;
  resumePending: boolean | null;
  turnInProgress: boolean | null;
}

const ROUTE_CURSOR = /^r:(.+)$/su;

/** The cursor after the entry `key`. */
export function routeCursor(key: string): string {
  return Buffer.from(`r:${key}`, "utf8").toString("base64url");
}

/** Checks {@link ListRoutesOptions}. */
export function checkListRoutes(options: ListRoutesOptions = {}): CheckedListRoutes {
  let after: string | null = null;
  if (options.cursor !== undefined && options.cursor !== null) {
    const match = typeof options.cursor === "string" ? ROUTE_CURSOR.exec(Buffer.from(options.cursor, "base64url").toString("utf8")) : null;
    if (match === null) {
      throw new InvalidInputError("The cursor is not a routing-list cursor; pass the nextCursor of the previous page unchanged.", {
        field: "cursor",
      });
    }
    after = match[1]!;
  }
  const bool = (value: unknown, field: string): boolean | null => {
    if (value === undefined || value === null) return null;
    if (typeof value !== "boolean") throw new InvalidInputError(`${field} must be true or false.`, { field });
    return value;
  };
  return {
    limit: checkLimit(options.limit, DEFAULT_ROUTE_PAGE),
    after,
    updatedSince: options.updatedSince === undefined ? null : checkTime(options.updatedSince, "updatedSince", 0),
    updatedBefore: options.updatedBefore === undefined ? null : checkTime(options.updatedBefore, "updatedBefore", 0),
    suspended: bool(options.suspended, "suspended"),
    expiryFinalized: bool(options.expiryFinalized, "expiryFinalized"),
    resumePending: bool(options.resumePending, "resumePending"),
    turnInProgress: bool(options.turnInProgress, "turnInProgress"),
  };
}

/** A checked {@link NewQueuedEvent}. */
export interface CheckedQueuedEvent {
  messageId: string | null;
  payload: string;
  mergeKey: string | null;
  mergeWithinSeconds: number | null;
  at: number;
}

/** Checks a queued event and the queue depth option. */
export function checkQueuedEvent(event: NewQueuedEvent, options: { maxDepth?: number }, now: number): { event: CheckedQueuedEvent; maxDepth: number } {
  if (event === null || typeof event !== "object") {
    throw new InvalidInputError("event must be an object with a payload.", { field: "event" });
  }
  if (event.payload === undefined) throw new InvalidInputError("event.payload is required (any JSON value).", { field: "payload" });
  const within = event.mergeWithinSeconds ?? null;
  if (within !== null && (typeof within !== "number" || !Number.isFinite(within) || within < 0)) {
    throw new InvalidInputError("event.mergeWithinSeconds must be a number of seconds ≥ 0, or null.", {
      field: "mergeWithinSeconds",
    });
  }
  const maxDepth = options.maxDepth ?? DEFAULT_QUEUE_DEPTH;
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 1 || maxDepth > 10_000) {
    throw new InvalidInputError("maxDepth must be a whole number from 1 to 10,000.", { field: "maxDepth" });
  }
  const messageId = event.messageId === undefined || event.messageId === null ? null : checkId(event.messageId, "event.messageId");
  const mergeKey = event.mergeKey === undefined || event.mergeKey === null ? null : checkId(event.mergeKey, "event.mergeKey");
  return {
    event: {
      messageId,
      payload: toJson(event.payload, "event.payload"),
      mergeKey,
      mergeWithinSeconds: within,
      at: checkTime(event.at, "event.at", now),
    },
    maxDepth,
  };
}

/** Checks a queued item id. */
export function checkItemId(value: unknown): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidInputError("itemId must be the id of a queued item (a whole number ≥ 1).", { field: "itemId" });
  }
  return value;
}

/** Longest lease, in seconds (one day). */
export const MAX_LEASE_TTL_SECONDS = 86_400;

/** Checks a lease token (a whole number ≥ 1). */
export function checkLeaseToken(value: unknown, field = "token"): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidInputError(`${field} must be a lease token as acquired (a whole number ≥ 1).`, { field });
  }
  return value;
}

/** Checked arguments of acquireLease / renewLease. */
export interface CheckedLeaseRequest {
  key: string;
  holder: string;
  /** `now + ttlSeconds`. */
  expiresAt: number;
  now: number;
}

/** Checks the key, holder and {@link LeaseOptions} of an acquisition or renewal. */
export function checkLeaseRequest(key: unknown, holder: unknown, options: LeaseOptions, now: number): CheckedLeaseRequest {
  const checkedKey = checkPathSafe(key, "key");
  const checkedHolder = checkId(holder, "holder");
  if (options === null || typeof options !== "object") {
    throw new InvalidInputError("options must be { ttlSeconds, now? }.", { field: "options" });
  }
  const ttl = options.ttlSeconds;
  if (typeof ttl !== "number" || !Number.isFinite(ttl) || ttl <= 0 || ttl > MAX_LEASE_TTL_SECONDS) {
    throw new InvalidInputError(`ttlSeconds must be a number of seconds above 0 and at most ${MAX_LEASE_TTL_SECONDS}.`, {
      field: "ttlSeconds",
    });
  }
  const at = checkTime(options.now, "now", now);
  return { key: checkedKey, holder: checkedHolder, expiresAt: at + ttl, now: at };
}

/** Checks a {@link LeaseFence}. */
export function checkFence(fence: unknown): LeaseFence {
  if (fence === null || typeof fence !== "object") {
    throw new InvalidInputError("fence must be { key, token } (the lease key and its token).", { field: "fence" });
  }
  const { key, token } = fence as Partial<LeaseFence>;
  return { key: checkPathSafe(key, "fence.key"), token: checkLeaseToken(token, "fence.token") };
}

/** The checked fence of a transcript write's options, or `null` when it has none. */
export function fenceOf(options: FencedWriteOptions | undefined): LeaseFence | null {
  if (options === undefined || options === null) return null;
  if (typeof options !== "object") throw new InvalidInputError("options must be an object.", { field: "options" });
  return options.fence === undefined ? null : checkFence(options.fence);
}

/** Checks an `ifLastMessageId` guard: `undefined` (no guard), `null` (no message yet) or a message id. */
export function checkLastMessageId(value: unknown, field: string): number | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidInputError(`${field} must be a message id (a whole number ≥ 1), or null for a session without messages.`, { field });
  }
  return value;
}
