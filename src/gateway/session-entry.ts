/**
 * The gateway's view of a routing entry: the stored {@link Route} with the token and
 * cost totals of the session it routes to.
 *
 * @module
 */
import type { Route, Session, SessionUsage } from "../store/index.js";

/** A routing entry as the gateway uses it. */
export interface SessionEntry extends Route {
  /** The routing key (`agent:main:telegram:dm:42`). Same as `key`. */
  sessionKey: string;
  /** Token and cost totals of the current session. */
  usage: SessionUsage;
  /** Input + output tokens of the current session. */
  totalTokens: number;
  /** Visible messages of the current session. */
  messageCount: number;
  /** The title of the current session, if any. */
  title: string | null;
  /**
   * Set only on the entry returned by the call that performed an automatic reset: what to
   * tell the model, and the user (`null` when the user is not to be told).
   */
  resetNotice?: ResetNotice;
}

/** The notices of an automatic reset. */
export interface ResetNotice {
  /** For the model's context on the first turn of the new session. */
  model: string;
  /** For the user, or `null` (notify off, platform excluded, or the old session was empty). */
  user: string | null;
}

const EMPTY_USAGE: SessionUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  apiCalls: 0,
  estimatedCostUsd: 0,
  actualCostUsd: null,
  billingProvider: null,
  billingMode: null,
  costStatus: null,
};

/** Combines a route with its session (which may have been deleted: zero totals then). */
export function toSessionEntry(route: Route, session: Session | null): SessionEntry {
  const usage = session?.usage ?? EMPTY_USAGE;
  return {
    ...route,
    sessionKey: route.key,
    usage,
    totalTokens: usage.inputTokens + usage.outputTokens,
    messageCount: session?.messageCount ?? 0,
    title: session?.title ?? null,
  };
}

/** Whether a session had any activity: a message or a non-zero token total. */
export function hadActivity(session: Session | null): boolean {
  if (session === null) return false;
  const u = session.usage;
  return session.messageCount > 0 || u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens + u.reasoningTokens > 0;
}
