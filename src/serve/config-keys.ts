/**
 * The key paths of the config file, and "did you mean" suggestions for keys written in
 * another style: users coming from other gateways bring snake_case keys
 * (`group_sessions_per_user`, `session_reset: { idle_minutes }`) or put a key in the wrong
 * section. A key is camelCased, then looked up among the known paths: in place first, then
 * anywhere with the same name (the closest path wins). hermes-agent's keys whose name does
 * not lead to ours (`sessions.retention_days` → `autoPrune.retentionDays`) or that have no
 * equivalent are listed in {@link HERMES_CONFIG_KEYS}; hermes's `compression.protect_last_n` …
 * camelCase to ours (`compression.protectLastN`).
 *
 * They are not accepted as aliases: each setting has one spelling, the one `config show`
 * prints and `config set` writes, so a file never holds the same setting twice under two
 * names (and hermes's `sessions:` section would collide with ours, which holds other
 * settings); the error names the key to write instead.
 *
 * @module
 */
import { CHAT_TYPES } from "../gateway/index.js";

/** A path segment that stands for any name (a platform) or any list index. */
const ANY_NAME = "*";
const ANY_INDEX = "[]";

const POLICY = ["mode", "idleMinutes", "atHour"] as const;

/**
 * Every key path of the config file; `*` stands for a name the user picks (a platform),
 * `[]` for a list item.
 */
export const CONFIG_KEY_PATHS: readonly string[] = Object.freeze([
  "database",
  "storage.synchronous",
  ...["host", "port", "drainTimeoutSeconds", "historyLimit", "replicaId", "leases", "leaseTtlSeconds", "logLevel", "publicHosts", "trustProxy"].map(
    (k) => `gateway.${k}`,
  ),
  "gateway.owner.*",
  "gateway.admins.*",
  ...["baseUrl", "apiKey", "model", "timeoutMs", "tools", "contextWindow", "vision", "transcriptionModel"].map((k) => `provider.${k}`),
  "provider.models.*",
  ...["model", "contextWindow"].map((k) => `provider.models.*.${k}`),
  "titles.enabled",
  ...["chatId", "name", "threadsSupported", "chatType", "userId"].map((k) => `homeChannels.*.${k}`),
  "display.resumeDisplay",
  ...["enabled", "summarise", "charBudget", "scope"].map((k) => `tools.sessionSearch.${k}`),
  "tools.memory.enabled",
  ...["enabled", "retentionDays", "vacuum", "minIntervalHours"].map((k) => `autoPrune.${k}`),
  ...["enabled", "tokens", "replyTimeoutSeconds"].map((k) => `adapters.apiServer.${k}`),
  ...["token", "userId", "name"].map((k) => `adapters.apiServer.tokens.[].${k}`),
  ...["enabled", "secret", "callbackUrl", "path"].map((k) => `adapters.webhook.${k}`),
  ...["enabled", "host", "port", "prefix", "allowUnauthenticatedLoopback"].map((k) => `api.${k}`),
  ...["key", "userId", "name"].map((k) => `api.keys.[].${k}`),
  "ui.enabled",
  ...["enabled", "threshold", "protectFirstN", "protectLastN", "targetRatio", "abortOnSummaryFailure", "hardMessageLimit", "model", "notify"].map(
    (k) => `compression.${k}`,
  ),
  ...["maxBytes", "maxImagesInContext", "downloadTimeoutSeconds"].map((k) => `media.${k}`),
  ...[
    "groupSessionsPerUser",
    "threadSessionsPerUser",
    "resumeFreshnessSeconds",
    "sessionStoreMaxAgeDays",
    "expiryIntervalSeconds",
    "maxQueueDepth",
    "redactPii",
  ].map((k) => `sessions.${k}`),
  ...[...POLICY, "notify", "notifyExclude"].map((k) => `reset.${k}`),
  ...POLICY.map((k) => `reset.platforms.*.${k}`),
  ...CHAT_TYPES.flatMap((type) => POLICY.map((k) => `reset.types.${type}.${k}`)),
]);

const PATTERNS: readonly string[][] = CONFIG_KEY_PATHS.map((p) => p.split("."));

/** An unknown key and the known path it most likely means. */
export interface ConfigKeySuggestion {
  /** Where the key is, as written (`session_reset.idle_minutes`). */
  path: string;
  /** The known paths it may mean, best first (`["reset.idleMinutes"]`); empty when there is no equivalent (see `noEquivalent`). */
  suggestions: string[];
  /** Set for a hermes-agent key or section: `hermes` (its name is hermes-agent's). */
  origin?: "hermes";
  /** Why the key has no equivalent here and what to do instead (then `suggestions` is empty). */
  noEquivalent?: string;
}

/**
 * hermes-agent's config keys (`~/.hermes/config.yaml`) whose name alone does not lead to
 * ours: the path each one is here, or why it has none. A key ending in `.*` stands for a
 * whole section. Keys whose camelCased name finds the path by itself (`session_reset.
 * idle_minutes` → `reset.idleMinutes`, `group_sessions_per_user`, `display.resume_display`)
 * are left to {@link suggestConfigKeys}; they are named hermes-agent's too.
 */
export const HERMES_CONFIG_KEYS: Readonly<Record<string, { path: string } | { none: string }>> = Object.freeze({
  // hermes's `sessions:` holds its pruning settings; ours holds routing and lifecycle.
  "sessions.auto_prune": { path: "autoPrune.enabled" },
  "sessions.retention_days": { path: "autoPrune.retentionDays" },
  "sessions.vacuum_after_prune": { path: "autoPrune.vacuum" },
  "sessions.min_interval_hours": { path: "autoPrune.minIntervalHours" },
  "session_reset.notify_exclude_platforms": { path: "reset.notifyExclude" },
  // hermes's model section: its context length is our provider's context window.
  "model.context_length": { path: "provider.contextWindow" },
  "compression.summary_model": { path: "compression.model" },
  "session_reset.bg_process_max_age_hours": {
    none: "hermes-agent's background processes have no equivalent in Threadline (nothing holds a session back from its reset); remove this key",
  },
});

/** The entry of {@link HERMES_CONFIG_KEYS} for `path`: itself, or a section it is in. */
function hermesEntry(path: readonly string[]): { key: string; entry: { path: string } | { none: string } } | null {
  const exact = path.join(".");
  const found = HERMES_CONFIG_KEYS[exact];
  if (found !== undefined) return { key: exact, entry: found };
  for (let i = path.length - 1; i >= 1; i--) {
    const section = `${path.slice(0, i).join(".")}.*`;
    const entry = HERMES_CONFIG_KEYS[section];
    if (entry !== undefined) return { key: path.slice(0, i).join("."), entry };
  }
  const whole = HERMES_CONFIG_KEYS[`${exact}.*`];
  return whole === undefined ? null : { key: exact, entry: whole };
}

/**
 * Whether a written path is one of hermes-agent's keys that camelCasing alone leads to ours
 * (`group_sessions_per_user`, `display.resume_display`, `session_reset.*`): the message says
 * the name is hermes-agent's.
 */
function isHermesName(path: readonly string[]): boolean {
  const written = path.join(".");
  return (
    written === "group_sessions_per_user" ||
    written === "display.resume_display" ||
    path[0] === "session_reset" ||
    (path[0] === "compression" && path.length === 2 && path[1]!.includes("_"))
  );
}

function segmentMatches(pattern: string, actual: string): boolean {
  if (pattern === ANY_NAME) return true;
  if (pattern === ANY_INDEX) return /^\d+$/u.test(actual);
  return pattern === actual;
}

/** Whether `path` is a known path or leads to one. */
function isKnownPrefix(path: readonly string[]): boolean {
  return PATTERNS.some((p) => p.length >= path.length && path.every((part, i) => segmentMatches(p[i]!, part)));
}

/** Whether a known path continues below `path` (so its value is a section to look into). */
function hasKnownChildren(path: readonly string[]): boolean {
  return PATTERNS.some((p) => p.length > path.length && path.every((part, i) => segmentMatches(p[i]!, part)));
}

/** `group_sessions_per_user`, `group-sessions-per-user` → `groupSessionsPerUser`. */
function camelCase(segment: string): string {
  return segment.replace(/[_-]+([A-Za-z0-9])/gu, (_m, c: string) => c.toUpperCase()).replace(/[_-]+$/u, "");
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_v, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** A pattern written out for `path`: its wildcards take the names the user wrote where the shapes line up. */
function render(pattern: readonly string[], path: readonly string[]): string {
  return pattern
    .map((part, i) => {
      if (part !== ANY_NAME && part !== ANY_INDEX) return part;
      const actual = path.length === pattern.length ? path[i] : undefined;
      return actual !== undefined && segmentMatches(part, actual)
        ? actual
        : part === ANY_INDEX
          ? "0"
          : `<${pattern[i - 1] === "platforms" || pattern[i - 1] === "homeChannels" ? "platform" : "name"}>`;
    })
    .join(".");
}

/** Whether the sections written (`session_reset`) plausibly mean a known path's sections (`reset`). */
function sameContext(written: readonly string[], known: readonly string[]): boolean {
  if (written.length === 0) return true; // a top-level key: any section may be meant
  const w = written.join(".").toLowerCase();
  const k = known
    .filter((p) => p !== ANY_NAME && p !== ANY_INDEX)
    .join(".")
    .toLowerCase();
  const contains = (text: string, parts: readonly string[]): boolean =>
    parts.filter((p) => p !== ANY_NAME && p !== ANY_INDEX && !/^\d+$/u.test(p)).every((p) => text.includes(p.toLowerCase()));
  return contains(w, known) || contains(k, written) || editDistance(w, k) <= 2;
}

/** Most suggestions listed for one key. */
const MAX_SUGGESTIONS = 3;

/**
 * The known paths an unknown key path most likely means, best first (empty when none is
 * close). Only keys written in another style (snake_case, kebab-case) or placed in the wrong
 * section get one; a typo of a camelCase key is left to the list of allowed keys.
 *
 * @example
 * suggestConfigKeys(["group_sessions_per_user"]); // ["sessions.groupSessionsPerUser"]
 * suggestConfigKeys(["session_reset", "idle_minutes"]); // ["reset.idleMinutes"]
 * suggestConfigKeys(["platforms", "telegram", "enabled"]); // [] (no section of that kind)
 */
export function suggestConfigKeys(path: readonly string[]): string[] {
  const camel = path.map(camelCase);
  // In place: the same path once camelCased.
  const inPlace = PATTERNS.find((p) => p.length === camel.length && camel.every((part, i) => segmentMatches(p[i]!, part)));
  if (inPlace !== undefined) return [render(inPlace, camel)];
  // Elsewhere: a known path with the same last name, in a section the written one plausibly
  // means; the closest full paths first.
  const leaf = camel[camel.length - 1]!.toLowerCase();
  const written = camel.join(".").toLowerCase();
  const ranked = PATTERNS.filter((p) => p[p.length - 1]!.toLowerCase() === leaf && sameContext(camel.slice(0, -1), p.slice(0, -1)))
    .map((p) => ({ path: render(p, camel), distance: editDistance(written, p.join(".").toLowerCase()) }))
    .sort((a, b) => a.distance - b.distance);
  return [...new Set(ranked.map((r) => r.path))].slice(0, MAX_SUGGESTIONS);
}

/**
 * Every unknown key of a config document that has a suggestion, in document order, and every
 * hermes-agent key or section (with the path it is here, or why it has none). Keys with no
 * close match are left out (the schema's "unknown key; allowed: …" covers them).
 */
export function misplacedConfigKeys(doc: Record<string, unknown>): ConfigKeySuggestion[] {
  const found: ConfigKeySuggestion[] = [];
  const visit = (value: unknown, path: string[], known: boolean): void => {
    if (value === null || typeof value !== "object") return;
    const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
    for (const [key, child] of entries) {
      const childPath = [...path, key];
      if (known && isKnownPrefix(childPath)) {
        if (hasKnownChildren(childPath)) visit(child, childPath, true);
        continue;
      }
      // hermes-agent's keys first: their name alone may not lead to ours, or nothing here is theirs.
      const hermes = hermesEntry(childPath);
      if (hermes !== null) {
        if ("path" in hermes.entry) found.push({ path: childPath.join("."), suggestions: [hermes.entry.path], origin: "hermes" });
        else found.push({ path: hermes.key, suggestions: [], origin: "hermes", noEquivalent: hermes.entry.none });
        continue;
      }
      // Unknown: report the leaves below it (session_reset.mode), else the key itself.
      const before = found.length;
      visit(child, childPath, false);
      if (found.length > before) continue;
      if (child !== null && typeof child === "object" && !Array.isArray(child) && Object.keys(child).length > 0) continue;
      const suggestions = suggestConfigKeys(childPath).filter((s) => s !== childPath.join("."));
      if (suggestions.length > 0) found.push({ path: childPath.join("."), suggestions, ...(isHermesName(childPath) ? { origin: "hermes" as const } : {}) });
    }
  };
  visit(doc, [], true);
  return found;
}

/**
 * The names of `names` closest to `word`, best first: those within two edits of it (one for
 * words of up to five characters), compared without case; empty when none is that close.
 * The "did you mean" of a name the user picks from a fixed set (a platform).
 *
 * @example
 * closestNames("telegarm", ["telegram", "slack"]); // ["telegram"]
 * closestNames("nosuch", ["telegram", "slack"]);   // []
 */
export function closestNames(word: string, names: readonly string[]): string[] {
  const typed = word.toLowerCase();
  const reach = typed.length <= 5 ? 1 : 2;
  return names
    .map((name) => ({ name, distance: editDistance(typed, name.toLowerCase()) }))
    .filter((c) => c.distance <= reach)
    .sort((a, b) => a.distance - b.distance)
    .map((c) => c.name)
    .slice(0, MAX_SUGGESTIONS);
}
