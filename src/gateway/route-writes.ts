/**
 * The fields and writes of routing entries that a `SessionRouter` commits: a fresh entry's
 * fields, the fields of a finished turn, a turn's messages and lease fence riding on a
 * routing write, and the one write of a compression (end, child, first messages).
 *
 * @module
 */
import {
  SUMMARY_MESSAGE_PREFIX,
  summaryMessageText,
  type InboundClaim,
  type LeaseFence,
  type NewMessage,
  type NewSession,
  type Route,
  type RouteFields,
  type RouteWrite,
  type Session,
} from "../store/index.js";
import type { Decision } from "./reset-decision.js";
import { hadActivity } from "./session-entry.js";
import type { SessionSource } from "./session-source.js";

/** Reason a session ends when a reset replaces it. */
export const END_REASON_RESET = "session_reset";

/** What a routing write carries besides the decision when it starts a turn. */
export interface TurnExtras {
  turnStartedAt?: number;
  appendMessages?: NewMessage[];
  fence?: LeaseFence;
  /** The platform messages the turn's user messages are (see {@link RouteWrite.claims}). */
  claims?: InboundClaim[];
}

/** Puts a turn's messages, fence and inbound claims on a routing write. */
export function withExtras(write: RouteWrite, extras: TurnExtras): void {
  if (extras.appendMessages !== undefined && extras.appendMessages.length > 0) write.appendMessages = extras.appendMessages;
  if (extras.fence !== undefined) write.fence = extras.fence;
  if (extras.claims !== undefined && extras.claims.length > 0) write.claims = extras.claims;
}

/**
 * The fields of a fresh routing entry for `sessionId` (no flags set), taking origin,
 * display name, platform and chat type from `source` (else from `previous`).
 */
export function newRouteFields(sessionId: string, now: number, source: SessionSource | null, previous: Route | null = null): RouteFields {
  return {
    sessionId,
    createdAt: now,
    updatedAt: now,
    origin: source === null ? (previous?.origin ?? null) : (JSON.parse(JSON.stringify(source)) as Record<string, unknown>),
    displayName: source === null ? (previous?.displayName ?? null) : displayNameOf(source),
    platform: source?.platform ?? previous?.platform ?? null,
    chatType: source?.chatType ?? previous?.chatType ?? null,
    wasAutoReset: false,
    autoResetReason: null,
    resetHadActivity: false,
    isFreshReset: false,
    expiryFinalized: false,
    suspended: false,
    resumePending: false,
    resumeReason: null,
    lastResumeMarkedAt: null,
    lastPromptTokens: 0,
    turnStartedAt: null,
    interruptedRestarts: 0,
    finalizeFailures: 0,
  };
}

function displayNameOf(source: SessionSource): string | null {
  if (source.chatType === "dm") return source.userName ?? source.chatName ?? source.userId ?? null;
  return source.chatName ?? source.chatId ?? null;
}

/** The fields of a route (without its key and version). */
export function fieldsOf(route: Route): RouteFields {
  const { key: _key, version: _version, ...fields } = route;
  return fields;
}

/** The stored entry alone, without what a {@link SessionEntry}-like value adds to it (totals, title, notices). */
export function routeOf(route: Route): Route {
  const { key, version } = route;
  return { ...fieldsOnly(route), key, version };
}

/** The entry's {@link RouteFields}, each named (no other property of the value comes along). */
function fieldsOnly(route: RouteFields): RouteFields {
  return {
    sessionId: route.sessionId,
    createdAt: route.createdAt,
    updatedAt: route.updatedAt,
    origin: route.origin,
    displayName: route.displayName,
    platform: route.platform,
    chatType: route.chatType,
    wasAutoReset: route.wasAutoReset,
    autoResetReason: route.autoResetReason,
    resetHadActivity: route.resetHadActivity,
    isFreshReset: route.isFreshReset,
    expiryFinalized: route.expiryFinalized,
    suspended: route.suspended,
    resumePending: route.resumePending,
    resumeReason: route.resumeReason,
    lastResumeMarkedAt: route.lastResumeMarkedAt,
    lastPromptTokens: route.lastPromptTokens,
    turnStartedAt: route.turnStartedAt,
    interruptedRestarts: route.interruptedRestarts,
    finalizeFailures: route.finalizeFailures,
  };
}

/**
 * The fields of an entry after its turn finished: `ok` clears the turn and resume markers,
 * the reset flags and the stuck-loop count, bumps activity and records the last prompt size;
 * `failed` clears only the turn marker; `interrupted` (shutdown) changes nothing.
 */
export function finishedTurnFields(route: Route, outcome: "ok" | "failed" | "interrupted", now: number, lastPromptTokens: number | undefined): RouteFields {
  const fields = fieldsOf(route);
  if (outcome === "failed") return { ...fields, turnStartedAt: null };
  if (outcome === "interrupted") return fields;
  return {
    ...fields,
    updatedAt: now,
    turnStartedAt: null,
    interruptedRestarts: 0,
    resumePending: false,
    resumeReason: null,
    lastResumeMarkedAt: null,
    isFreshReset: false,
    wasAutoReset: false,
    autoResetReason: null,
    resetHadActivity: false,
    lastPromptTokens: lastPromptTokens ?? route.lastPromptTokens,
  };
}

/**
 * The one write that starts the new session `id` for a key and ends the old one (reason
 * `session_reset`): the entry's fresh fields with the decision's reset flags, the new
 * session's row, and the turn's marker, messages and fence when a turn starts with it.
 */
export function newSessionWrite(
  key: string,
  route: Route | null,
  source: SessionSource | null,
  now: number,
  id: string,
  decision: Extract<Decision, { kind: "new" }>,
  extras: TurnExtras,
): RouteWrite {
  const fields = newRouteFields(id, now, source, route);
  const activity = hadActivity(decision.old);
  if (decision.auto) {
    fields.wasAutoReset = true;
    fields.autoResetReason = decision.reason;
    fields.resetHadActivity = activity;
  }
  fields.isFreshReset = decision.fresh;
  const origin = source ?? (route?.origin as SessionSource | null) ?? null;
  const write: RouteWrite = {
    key,
    expectedVersion: route?.version ?? null,
    route: fields,
    createSession: {
      id,
      source: origin?.platform ?? fields.platform ?? "gateway",
      userId: origin?.userId ?? null,
      sessionKey: key,
      chatId: origin?.chatId ?? null,
      chatType: origin?.chatType ?? null,
      threadId: origin?.threadId ?? null,
      startedAt: now,
    },
  };
  if (decision.old !== null && decision.old.endedAt === null) {
    write.endSession = { id: decision.old.id, reason: END_REASON_RESET, endedAt: now };
  }
  if (extras.turnStartedAt !== undefined) fields.turnStartedAt = extras.turnStartedAt;
  withExtras(write, extras);
  return write;
}

/** What a compression writes (see `SessionRouter.compressInto`). */
export interface CompressionOptions {
  title: string | null;
  summary?: string;
  messages?: NewMessage[];
  ifLastMessageId?: number | null;
  fence?: LeaseFence;
  fields?: Partial<NewSession>;
}

/**
 * The one write of a compression: the key moves to the child session `id`, the old session
 * ends with reason `compression` (guarded by `ifLastMessageId` when given), and the child is
 * created with its first messages (the summary alone, without `options.messages`).
 */
export function compressionWrite(key: string, route: Route, old: Session | null, id: string, now: number, options: CompressionOptions): RouteWrite {
  const guarded = options.ifLastMessageId !== undefined;
  const fields: RouteFields = { ...fieldsOf(route), sessionId: id, createdAt: now, updatedAt: now, lastPromptTokens: 0 };
  // A user turn for the model, marked as the summary it is (not something the user typed).
  const messages = options.messages ?? [
    {
      role: "user",
      content: summaryMessageText(route.sessionId, options.summary ?? ""),
      platformMessageId: `${SUMMARY_MESSAGE_PREFIX}${route.sessionId}`,
      timestamp: now,
    },
  ];
  const write: RouteWrite = {
    key,
    expectedVersion: route.version,
    route: fields,
    endSession: {
      id: route.sessionId,
      reason: "compression",
      endedAt: now,
      ...(guarded ? { ifLastMessageId: options.ifLastMessageId ?? null } : {}),
    },
    createSession: {
      source: old?.source ?? route.platform ?? "gateway",
      userId: old?.userId ?? null,
      model: old?.model ?? null,
      sessionKey: key,
      chatId: old?.chatId ?? null,
      chatType: old?.chatType ?? null,
      threadId: old?.threadId ?? null,
      ...options.fields,
      id,
      parentSessionId: route.sessionId,
      title: options.title,
      startedAt: now,
    },
    appendMessages: messages,
  };
  if (options.fence !== undefined) write.fence = options.fence;
  return write;
}
