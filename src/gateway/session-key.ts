/**
 * Session keys: the deterministic name of the conversation lane a message belongs
 * to (`agent:<profile>:<platform>:<chatType>[:chatId][:threadId][:participant]`),
 * plus the identity normalisation and safety checks around them.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";
import type { SessionSource } from "./session-source.js";

/** How group and thread lanes are split between participants. */
export interface KeySettings {
  /** Give each participant of a group or channel their own session (default `true`). */
  groupSessionsPerUser?: boolean;
  /** Give each participant of a thread their own session (default `false`). */
  threadSessionsPerUser?: boolean;
}

/** The format of session ids Threadline generates: `YYYYMMDD_HHMMSS_<8 hex>` (`<6 hex>` for terminal chat sessions). */
export const SESSION_ID_PATTERN = /^\d{8}_\d{6}_(?:[0-9a-f]{8}|[0-9a-f]{6})$/;

/**
 * Canonicalises a platform identity. For `whatsapp` it strips a leading `+`, a
 * device suffix (`:47`, with any `.agent` part before it) and the domain
 * (`@s.whatsapp.net`, `@lid`, `@c.us`, …), and drops the spaces, dashes, dots and
 * parentheses of a phone number written for people (`+49 151 2345-6789`), except for
 * group ids (`…@g.us`), which are kept as given. Other platforms' ids are returned
 * unchanged.
 *
 * @example
 * ```ts
 * normalizeIdentity("whatsapp", "15551234567:47@s.whatsapp.net"); // "15551234567"
 * normalizeIdentity("whatsapp", "+15551234567");                  // "15551234567"
 * normalizeIdentity("whatsapp", "+1 (555) 123-4567");             // "15551234567"
 * normalizeIdentity("whatsapp", "1203630@g.us");                  // "1203630@g.us"
 * normalizeIdentity("telegram", "+42");                           // "+42"
 * ```
 */
export function normalizeIdentity(platform: string, id: string): string {
  if (platform !== "whatsapp") return id;
  const trimmed = id.trim();
  if (trimmed.toLowerCase().endsWith("@g.us")) return id;
  let user = trimmed;
  const at = user.indexOf("@");
  if (at >= 0) user = user.slice(0, at);
  user = user.replace(/(?:\.\d+)?:\d+$/, "");
  const dialled = user.replace(/[\s\-().]/gu, "");
  if (/^\+?\d+$/u.test(dialled)) user = dialled;
  if (user.startsWith("+")) user = user.slice(1);
  return user.length > 0 ? user : id;
}

/**
 * Percent-encodes one key component so it can never forge another segment or a
 * path: `%` → `%25`, `/` → `%2F`, `\` → `%5C`, `:` → `%3A`, and each dot of a run of
 * two or more dots → `%2E`. Everything else is kept; the encoding is injective, so
 * `a/b` and a literal `a%2Fb` give different components.
 *
 * @example
 * ```ts
 * escapeKeyComponent("../etc");  // "%2E%2E%2Fetc"
 * escapeKeyComponent("a%2Fb");   // "a%252Fb"
 * escapeKeyComponent("v1.2");    // "v1.2"
 * ```
 */
export function escapeKeyComponent(value: string): string {
  return value
    .replace(/[%/\\:]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`)
    .replace(/\.{2,}/g, (dots) => "%2E".repeat(dots.length));
}

function present(value: string | null | undefined): value is string {
  return typeof value === "string" && value.length > 0;
}

function profileOf(source: SessionSource): string {
  const profile = source.profile;
  return present(profile) && profile !== "default" ? escapeKeyComponent(profile) : "main";
}

function participantOf(source: SessionSource): string | null {
  if (present(source.userIdAlt)) return source.userIdAlt;
  if (present(source.userId)) return source.userId;
  return null;
}

function isThreaded(source: SessionSource): boolean {
  return present(source.threadId) || source.chatType === "thread";
}

function isolatesParticipants(source: SessionSource, settings: KeySettings): boolean {
  return isThreaded(source) ? (settings.threadSessionsPerUser ?? false) : (settings.groupSessionsPerUser ?? true);
}

/**
 * The session key of a (canonicalised) source. Empty strings count as absent;
 * every variable component is escaped with {@link escapeKeyComponent}, so the
 * result always passes {@link assertSafeKey}. Ids are not normalised here: resolve
 * aliases (e.g. with {@link normalizeIdentity}) before calling.
 *
 * - DM: `…:dm:<chatId>[:<threadId>]`, else `…:dm:<participant>`, else `…:dm:<threadId>`,
 *   else the shared lane `…:dm`.
 * - group / channel / thread: `…:<chatType>[:<chatId>][:<threadId>][:<participant>]`,
 *   the participant (`userIdAlt` before `userId`) only when isolating: threads (a
 *   `threadId`, or chatType `thread`) iff `threadSessionsPerUser`, other
 *   groups/channels iff `groupSessionsPerUser`.
 *
 * @example
 * ```ts
 * buildSessionKey({ platform: "telegram", chatType: "dm", chatId: "42" });
 * // "agent:main:telegram:dm:42"
 * buildSessionKey({ platform: "discord", chatType: "group", chatId: "9", userId: "7", profile: "work" });
 * // "agent:work:discord:group:9:7"
 * buildSessionKey({ platform: "discord", chatType: "group", chatId: "9", userId: "7" }, { groupSessionsPerUser: false });
 * // "agent:main:discord:group:9"
 * ```
 */
export function buildSessionKey(source: SessionSource, settings: KeySettings = {}): string {
  const parts = ["agent", profileOf(source), escapeKeyComponent(source.platform), escapeKeyComponent(source.chatType)];
  const participant = participantOf(source);
  if (source.chatType === "dm") {
    if (present(source.chatId)) {
      parts.push(escapeKeyComponent(source.chatId));
      if (present(source.threadId)) parts.push(escapeKeyComponent(source.threadId));
    } else if (participant !== null) {
      parts.push(escapeKeyComponent(participant));
    } else if (present(source.threadId)) {
      parts.push(escapeKeyComponent(source.threadId));
    }
    return parts.join(":");
  }
  if (present(source.chatId)) parts.push(escapeKeyComponent(source.chatId));
  if (present(source.threadId)) parts.push(escapeKeyComponent(source.threadId));
  if (participant !== null && isolatesParticipants(source, settings)) parts.push(escapeKeyComponent(participant));
  return parts.join(":");
}

/**
 * Whether several people share the session of this source: never for DMs; for
 * threads (a `threadId`, or chatType `thread`) unless `threadSessionsPerUser`; for
 * groups and channels when `groupSessionsPerUser` is off.
 *
 * @example
 * ```ts
 * isSharedMultiUserSession({ platform: "slack", chatType: "channel", threadId: "1700.1" }); // true
 * isSharedMultiUserSession({ platform: "slack", chatType: "channel" });                      // false
 * ```
 */
export function isSharedMultiUserSession(source: SessionSource, settings: KeySettings = {}): boolean {
  if (source.chatType === "dm") return false;
  return !isolatesParticipants(source, settings);
}

/**
 * Checks a session key handed to the store directly (a tampered entry, an API
 * caller): it must be a non-empty string without `/`, `\`, `..` or a Windows
 * drive prefix (`C:` at the start). Keys from {@link buildSessionKey} always pass.
 *
 * @throws {InvalidInputError} saying what was wrong.
 * @example
 * ```ts
 * assertSafeKey("agent:main:telegram:dm:42"); // ok
 * assertSafeKey("../../etc/passwd");          // throws InvalidInputError
 * ```
 */
export function assertSafeKey(key: unknown): asserts key is string {
  const fix = "build keys with buildSessionKey(), which escapes platform ids";
  if (typeof key !== "string" || key.length === 0) {
    throw new InvalidInputError(`session key must be a non-empty string; ${fix}.`, { field: "sessionKey" });
  }
  let problem: string | null = null;
  if (key.includes("/") || key.includes("\\")) problem = "contains a path separator (/ or \\)";
  else if (key.includes("..")) problem = 'contains ".."';
  else if (/^[A-Za-z]:/.test(key)) problem = "starts with a Windows drive prefix";
  else if (key.includes("\u0000")) problem = "contains a NUL character";
  if (problem !== null) {
    const shown = key.length > 80 ? `${key.slice(0, 77)}…` : key;
    throw new InvalidInputError(`session key ${JSON.stringify(shown)} ${problem}; ${fix}.`, { field: "sessionKey" });
  }
}

/**
 * Checks a session id handed to the store directly: it must match
 * {@link SESSION_ID_PATTERN} (`YYYYMMDD_HHMMSS_<8 lowercase hex>`, or 6 for terminal chat sessions).
 *
 * @throws {InvalidInputError} saying what was wrong.
 * @example
 * ```ts
 * assertSafeSessionId("20250101_120000_0a1b2c3d"); // ok
 * assertSafeSessionId("../x");                     // throws InvalidInputError
 * ```
 */
export function assertSafeSessionId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !SESSION_ID_PATTERN.test(id)) {
    const shown = typeof id === "string" ? JSON.stringify(id.length > 80 ? `${id.slice(0, 77)}…` : id) : String(id);
    throw new InvalidInputError(
      `session id ${shown} is not a Threadline session id; expected YYYYMMDD_HHMMSS_ followed by 8 lowercase hex digits (6 for terminal chat sessions; e.g. 20250101_120000_0a1b2c3d).`,
      { field: "sessionId" },
    );
  }
}
