/**
 * Whether a message continues the session its key routes to, or a new session starts (a
 * suspended entry, a stale resume marker, a reset policy that fires), and what the model
 * and the user are told about an automatic reset. The `SessionRouter` asks this for every
 * routing decision.
 *
 * @module
 */
import type { Route, Session } from "../store/index.js";
import { evaluateReset, resetModelNotice, resetUserNotice, resolveResetPolicy, shouldNotifyUser, type ResetConfig } from "./reset-policy.js";
import { hadActivity, type ResetNotice } from "./session-entry.js";
import type { ChatType } from "./session-source.js";

/** What to do with the current route: keep it (bumped) or replace its session. */
export type Decision =
  | { kind: "keep"; route: Route; session: Session }
  | { kind: "new"; reason: string | null; auto: boolean; fresh: boolean; old: Session | null };

/** What a decision depends on besides the route: the reset policies, the resume freshness and background work. */
export interface DecisionRules {
  reset: ResetConfig;
  resumeFreshnessSeconds: number;
  hasActiveProcesses: (key: string) => boolean;
}

/** The decision for a live session its key routes to, at `now` (epoch seconds). */
export function decide(rules: DecisionRules, route: Route, session: Session, now: number): Decision {
  const old = session;
  if (route.suspended) return { kind: "new", reason: "suspended", auto: true, fresh: false, old };
  const policyFires = policyFiresFor(rules, route, now);
  if (route.resumePending) {
    const marked = route.lastResumeMarkedAt ?? route.updatedAt;
    const stale = rules.resumeFreshnessSeconds > 0 && now - marked > rules.resumeFreshnessSeconds;
    // A firing policy reports its own reason (as hermes-agent does); only a stale marker is "expired".
    if (policyFires !== null) return { kind: "new", reason: policyFires, auto: true, fresh: false, old };
    if (stale) return { kind: "new", reason: "resume_pending_expired", auto: true, fresh: false, old };
    return { kind: "keep", route, session };
  }
  if (policyFires !== null) return { kind: "new", reason: policyFires, auto: true, fresh: false, old };
  return { kind: "keep", route, session };
}

/** The policy reason (`idle`/`daily`) when the key's policy says reset now, else `null`. */
function policyFiresFor(rules: DecisionRules, route: Route, now: number): "idle" | "daily" | null {
  if (rules.hasActiveProcesses(route.key)) return null;
  const policy = resolveResetPolicy(rules.reset, route.platform ?? "", chatTypeOf(route.chatType));
  const verdict = evaluateReset(policy, route.updatedAt, now);
  return verdict.reset ? verdict.reason : null;
}

/** The notices of an automatic reset for `reason`, the old session being `old`. */
export function resetNoticeFor(reset: ResetConfig, reason: string, old: Session | null, now: number, platform: string | null): ResetNotice {
  const inactive = old === null ? 0 : Math.max(0, now - old.lastActiveAt);
  const notify = shouldNotifyUser(reset, platform ?? "", hadActivity(old));
  if (reason === "idle" || reason === "daily") {
    const atHour = resolveResetPolicy(reset, platform ?? "", chatTypeOf(old?.chatType ?? null)).atHour;
    return {
      model: resetModelNotice(reason, inactive, { atHour }),
      user: notify ? resetUserNotice(reason, inactive, { atHour }) : null,
    };
  }
  const cause = reason === "suspended" ? "the previous session was stopped" : "the previous session was interrupted and is too old to resume";
  return {
    model: `[System note: this is a new session (${cause}). The earlier conversation is not in your context; the user can restore it with /resume.]`,
    user: notify ? `Session automatically reset (${cause}). Previous conversation is saved; use /resume to go back to it.` : null,
  };
}

/** Whether a value is a parsed `ResetConfig` already (else it is a raw `reset:` section to parse). */
export function isResetConfig(value: unknown): value is ResetConfig {
  return value !== null && typeof value === "object" && "default" in value && "platforms" in value && "types" in value && "notifyExclude" in value;
}

/** A stored chat type as a policy lookup key (unknown values use the DM policy lookup order's default). */
export function chatTypeOf(value: string | null): ChatType {
  return value === "group" || value === "channel" || value === "thread" ? value : "dm";
}
