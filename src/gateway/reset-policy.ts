/**
 * Automatic session resets: when a gateway session goes stale (idle too long, or
 * past the daily reset hour), the next message starts a new session. This module
 * parses the `reset` config, picks the policy for a chat and decides, with exact
 * boundaries, whether a reset is due.
 *
 * @module
 */
import { z } from "zod";
import { InvalidInputError } from "../store/index.js";
import { CHAT_TYPES, type ChatType } from "./session-source.js";

/** The reset modes. */
export const RESET_MODES = ["none", "idle", "daily", "both"] as const;

/** `none`: never; `idle`: after inactivity; `daily`: at a local hour; `both`: whichever comes first. */
export type ResetMode = (typeof RESET_MODES)[number];

/** When a session resets automatically. */
export interface ResetPolicy {
  /** Which triggers apply. */
  mode: ResetMode;
  /** Minutes of inactivity after which an `idle`/`both` session resets (default 1440). */
  idleMinutes: number;
  /** The local hour (0–23) at which a `daily`/`both` session resets (default 4). */
  atHour: number;
}

/** The whole reset configuration: a default policy, overrides and notification settings. */
export interface ResetConfig {
  /** The policy used when no override matches. */
  default: ResetPolicy;
  /** Per-platform policies (checked first), fully resolved. */
  platforms: Record<string, ResetPolicy>;
  /** Per-chat-type policies (checked after platforms), fully resolved. */
  types: Partial<Record<ChatType, ResetPolicy>>;
  /** Whether to tell users their session was reset (default `true`). */
  notify: boolean;
  /** Platforms never notified (default `["api-server", "webhook"]`). */
  notifyExclude: string[];
}

/** The outcome of {@link evaluateReset}. */
export type ResetDecision =
  | { reset: false }
  | {
      reset: true;
      /** What triggered the reset. */
      reason: "idle" | "daily";
      /** Seconds between the last update and now (never negative). */
      inactiveSeconds: number;
    };

/** The policy used when nothing is configured: never reset. */
export const DEFAULT_RESET_POLICY: Readonly<ResetPolicy> = Object.freeze({ mode: "none", idleMinutes: 1440, atHour: 4 });

/** Platforms that are not notified of resets unless configured otherwise. */
export const DEFAULT_NOTIFY_EXCLUDE: readonly string[] = Object.freeze(["api-server", "webhook"]);

const POLICY_KEYS = ["mode", "idleMinutes", "atHour"] as const;
const CONFIG_KEYS = [...POLICY_KEYS, "notify", "notifyExclude", "platforms", "types"] as const;

const policyFields = {
  mode: z.enum(RESET_MODES).optional(),
  idleMinutes: z.number().int().min(1).optional(),
  atHour: z.number().int().min(0).max(23).optional(),
};
const overrideSchema = z.strictObject(policyFields).nullable();
const configSchema = z.strictObject({
  ...policyFields,
  notify: z.boolean().optional(),
  notifyExclude: z.array(z.string()).optional(),
  platforms: z.record(z.string(), z.unknown()).optional(),
  types: z.strictObject(Object.fromEntries(CHAT_TYPES.map((t) => [t, overrideSchema.optional()]))).optional(),
});

type PathPart = PropertyKey;

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function formatPath(path: readonly PathPart[]): string {
  let out = "reset";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_][\w-]*$/.test(part)) out += `.${part}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

function valueAt(root: unknown, path: readonly PathPart[]): unknown {
  let current = root;
  for (const part of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = Object.hasOwn(current, part) ? (current as Record<PropertyKey, unknown>)[part] : undefined;
  }
  return current;
}

function expectation(path: readonly PathPart[]): string {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (typeof last === "number" && parent === "notifyExclude") return "must be a platform name (a string)";
  switch (last) {
    case "mode":
      return `must be one of ${RESET_MODES.join(", ")}`;
    case "idleMinutes":
      return "must be a whole number of minutes greater than 0";
    case "atHour":
      return "must be a whole hour from 0 to 23";
    case "notify":
      return "must be true or false";
    case "notifyExclude":
      return 'must be a list of platform names, e.g. ["api-server", "webhook"]';
    case "platforms":
      return "must be a mapping from platform name to a policy ({ mode, idleMinutes, atHour })";
    case "types":
      return `must be a mapping from chat type (${CHAT_TYPES.join(", ")}) to a policy ({ mode, idleMinutes, atHour })`;
    default:
      return path.length === 0
        ? "must be a mapping of reset settings (mode, idleMinutes, atHour, notify, notifyExclude, platforms, types)"
        : "must be a policy mapping ({ mode, idleMinutes, atHour }) or empty";
  }
}

function allowedKeysAt(path: readonly PathPart[]): { what: string; allowed: readonly string[] } {
  if (path.length === 0) return { what: "setting", allowed: CONFIG_KEYS };
  if (path.length === 1 && path[0] === "types") return { what: "chat type", allowed: CHAT_TYPES };
  return { what: "policy setting", allowed: POLICY_KEYS };
}

function issueMessage(issue: z.core.$ZodIssue, raw: unknown, prefix: readonly PathPart[]): string {
  const path = [...prefix, ...issue.path];
  if (issue.code === "unrecognized_keys") {
    const { what, allowed } = allowedKeysAt(path);
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(", ");
    const noun = issue.keys.length === 1 ? `unknown ${what}` : `unknown ${what}s`;
    return `${formatPath(path)}: ${noun} ${keys}; allowed: ${allowed.join(", ")}`;
  }
  return `${formatPath(path)}: ${expectation(path)} (got ${describeValue(valueAt(raw, path))})`;
}

/**
 * Every problem of a `reset` section (already defaulted to `{}`): the top-level settings and
 * each platform's policy, all in one list (a wrong top-level key does not hide a wrong
 * platform policy).
 */
function resetIssues(input: unknown): Array<{ message: string; path: PathPart[] }> {
  const issues: Array<{ message: string; path: PathPart[] }> = [];
  const result = configSchema.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) issues.push({ message: issueMessage(issue, input, []), path: [...issue.path] });
  }
  // Platforms are validated entry by entry from the raw object so that every name (even one
  // like "__proto__") is checked.
  const rawPlatforms = valueAt(input, ["platforms"]);
  if (rawPlatforms !== null && typeof rawPlatforms === "object" && !Array.isArray(rawPlatforms)) {
    for (const [name, value] of Object.entries(rawPlatforms as Record<string, unknown>)) {
      const parsed = overrideSchema.safeParse(value);
      if (parsed.success) continue;
      for (const issue of parsed.error.issues) {
        const prefix = ["platforms", name];
        issues.push({ message: issueMessage(issue, input, prefix), path: [...prefix, ...issue.path] });
      }
    }
  }
  return issues;
}

/**
 * Every problem of the `reset` section of a config file (`undefined` or `null`: none), each
 * naming its path and the fix, as {@link parseResetConfig} reports them; empty when it
 * accepts the section.
 *
 * @example
 * resetConfigProblems({ mode: "weekly", platforms: { telegram: { atHour: 25 } } });
 * // ["reset.mode: must be one of none, idle, daily, both (got \"weekly\")",
 * //  "reset.platforms.telegram.atHour: must be a whole hour from 0 to 23 (got 25)"]
 */
export function resetConfigProblems(raw: unknown): string[] {
  return resetIssues(raw ?? {}).map((p) => p.message);
}

function fail(messages: string[], firstPath: readonly PathPart[]): never {
  throw new InvalidInputError(messages.join("; "), { field: formatPath(firstPath) });
}

type PolicyInput = { mode?: ResetMode; idleMinutes?: number; atHour?: number } | null | undefined;

function resolvePolicy(base: ResetPolicy, input: PolicyInput): ResetPolicy {
  return {
    mode: input?.mode ?? base.mode,
    idleMinutes: input?.idleMinutes ?? base.idleMinutes,
    atHour: input?.atHour ?? base.atHour,
  };
}

/**
 * Parses the `reset` section of a config file (YAML or JSON, already decoded).
 * `undefined` or `null` gives the defaults (mode `none`, idle 1440 min, daily at
 * 04:00, notify on, `api-server` and `webhook` excluded). Per-platform and
 * per-type overrides inherit the fields they do not set from the top-level
 * policy. Every policy (default, each platform, each type) is validated.
 *
 * @throws {InvalidInputError} naming each wrong path and the fix, e.g.
 *   `reset.platforms.telegram.atHour: must be a whole hour from 0 to 23 (got 25)`.
 * @example
 * ```ts
 * const config = parseResetConfig({
 *   mode: "idle",
 *   idleMinutes: 120,
 *   platforms: { telegram: { mode: "daily", atHour: 5 } },
 * });
 * config.platforms.telegram; // { mode: "daily", idleMinutes: 120, atHour: 5 }
 * ```
 */
export function parseResetConfig(raw: unknown): ResetConfig {
  const input = raw ?? {};
  const problems = resetIssues(input);
  if (problems.length > 0)
    fail(
      problems.map((p) => p.message),
      problems[0]!.path,
    );
  const top = configSchema.parse(input);
  const base = resolvePolicy(DEFAULT_RESET_POLICY, top);

  // Platforms are read entry by entry from the raw object so that every name (even one
  // like "__proto__") is kept as an own property.
  const platformEntries: Array<[string, ResetPolicy]> = [];
  const rawPlatforms = valueAt(input, ["platforms"]);
  if (rawPlatforms !== undefined) {
    for (const [name, value] of Object.entries(rawPlatforms as Record<string, unknown>)) {
      platformEntries.push([name, resolvePolicy(base, overrideSchema.parse(value))]);
    }
  }

  const types: Partial<Record<ChatType, ResetPolicy>> = {};
  for (const type of CHAT_TYPES) {
    const override = top.types?.[type];
    if (override !== undefined) types[type] = resolvePolicy(base, override);
  }

  return {
    default: base,
    platforms: Object.fromEntries(platformEntries),
    types,
    notify: top.notify ?? true,
    notifyExclude: top.notifyExclude ? [...top.notifyExclude] : [...DEFAULT_NOTIFY_EXCLUDE],
  };
}

/**
 * The policy for a chat: the platform's override, else the chat type's, else the default.
 *
 * @example
 * ```ts
 * const policy = resolveResetPolicy(config, "telegram", "group");
 * ```
 */
export function resolveResetPolicy(config: ResetConfig, platform: string, chatType: ChatType): ResetPolicy {
  if (Object.hasOwn(config.platforms, platform)) {
    const policy = config.platforms[platform];
    if (policy !== undefined) return policy;
  }
  if (Object.hasOwn(config.types, chatType)) {
    const policy = config.types[chatType];
    if (policy !== undefined) return policy;
  }
  return config.default;
}

function checkTime(value: number, field: string): void {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidInputError(`${field} must be a finite time in epoch seconds (got ${describeValue(value)}).`, {
      field,
    });
  }
}

/**
 * The most recent local `atHour:00` at or before `now` (epoch seconds). Computed
 * with `Date#setHours`, so days with a DST change are handled.
 *
 * @example
 * ```ts
 * const boundary = dailyBoundary(Date.now() / 1000, 4); // today's or yesterday's 04:00 local
 * ```
 */
export function dailyBoundary(now: number, atHour: number): number {
  const date = new Date(now * 1000);
  date.setHours(atHour, 0, 0, 0);
  if (date.getTime() / 1000 > now) {
    date.setDate(date.getDate() - 1);
    date.setHours(atHour, 0, 0, 0);
  }
  return date.getTime() / 1000;
}

/**
 * Decides whether a session last updated at `updatedAt` must be reset at `now`
 * (both epoch seconds). Idle fires when `now − updatedAt > idleMinutes × 60`
 * (strictly); daily fires when `updatedAt` is before the most recent local
 * `atHour:00` at or before `now`. With `both`, idle is checked first.
 *
 * @example
 * ```ts
 * const decision = evaluateReset({ mode: "idle", idleMinutes: 60, atHour: 4 }, updatedAt, Date.now() / 1000);
 * if (decision.reset) console.log(resetUserNotice(decision.reason, decision.inactiveSeconds));
 * ```
 */
export function evaluateReset(policy: ResetPolicy, updatedAt: number, now: number): ResetDecision {
  checkTime(updatedAt, "updatedAt");
  checkTime(now, "now");
  if (policy.mode === "none") return { reset: false };
  const inactiveSeconds = Math.max(0, now - updatedAt);
  if ((policy.mode === "idle" || policy.mode === "both") && now - updatedAt > policy.idleMinutes * 60) {
    return { reset: true, reason: "idle", inactiveSeconds };
  }
  if ((policy.mode === "daily" || policy.mode === "both") && updatedAt < dailyBoundary(now, policy.atHour)) {
    return { reset: true, reason: "daily", inactiveSeconds };
  }
  return { reset: false };
}

/**
 * A compact duration: the largest whole unit, rounded down, at least `1m`.
 *
 * @example
 * ```ts
 * formatInactivity(2700);   // "45m"
 * formatInactivity(7300);   // "2h"
 * formatInactivity(270000); // "3d"
 * ```
 */
export function formatInactivity(seconds: number): string {
  const s = Number.isFinite(seconds) && seconds > 0 ? seconds : 0;
  if (s >= 86_400) return `${Math.floor(s / 86_400)}d`;
  if (s >= 3_600) return `${Math.floor(s / 3_600)}h`;
  return `${Math.max(1, Math.floor(s / 60))}m`;
}

function formatHour(atHour: number): string {
  return `${String(atHour).padStart(2, "0")}:00`;
}

function resetCause(reason: "idle" | "daily", inactiveSeconds: number, atHour: number): string {
  return reason === "idle" ? `inactive for ${formatInactivity(inactiveSeconds)}` : `daily reset at ${formatHour(atHour)}`;
}

/**
 * The message shown to the user after an automatic reset.
 *
 * @param options.atHour the policy's reset hour, shown for daily resets (default 4).
 * @example
 * ```ts
 * resetUserNotice("idle", 7200);
 * // "Session automatically reset (inactive for 2h). Previous conversation is saved; use /resume to go back to it."
 * ```
 */
export function resetUserNotice(reason: "idle" | "daily", inactiveSeconds: number, { atHour = DEFAULT_RESET_POLICY.atHour }: { atHour?: number } = {}): string {
  return `Session automatically reset (${resetCause(reason, inactiveSeconds, atHour)}). Previous conversation is saved; use /resume to go back to it.`;
}

/**
 * A short system-style note for the model: this is a new session after an automatic reset.
 *
 * @param options.atHour the policy's reset hour, shown for daily resets (default 4).
 * @example
 * ```ts
 * resetModelNotice("daily", 50000);
 * // "[System note: this is a new session, started by an automatic reset (daily reset at 04:00). …]"
 * ```
 */
export function resetModelNotice(
  reason: "idle" | "daily",
  inactiveSeconds: number,
  { atHour = DEFAULT_RESET_POLICY.atHour }: { atHour?: number } = {},
): string {
  return (
    `[System note: this is a new session, started by an automatic reset (${resetCause(reason, inactiveSeconds, atHour)}). ` +
    "The earlier conversation is not in your context; the user can restore it with /resume.]"
  );
}

/**
 * Whether to tell the user about a reset: notifications are on, the old session
 * had activity, and the platform is not in `notifyExclude`.
 *
 * @example
 * ```ts
 * shouldNotifyUser(parseResetConfig({}), "telegram", true); // true
 * shouldNotifyUser(parseResetConfig({}), "webhook", true);  // false
 * ```
 */
export function shouldNotifyUser(config: ResetConfig, platform: string, hadActivity: boolean): boolean {
  return config.notify && hadActivity && !config.notifyExclude.includes(platform);
}
