/**
 * The session context handed to the agent: where the conversation lives, who is
 * in it and where replies can go, rendered as a prompt section. Untrusted names
 * are sanitised, and platform ids can be redacted (hashed) for privacy.
 *
 * @module
 */
import { hash as digest } from "node:crypto";
import { InvalidInputError } from "../store/index.js";
import { isSharedMultiUserSession, type KeySettings } from "./session-key.js";
import { describeSessionSource, type SessionSource } from "./session-source.js";

/** Platforms whose ids are never redacted: their mention syntax needs the raw ids. */
export const PII_EXEMPT_PLATFORMS: readonly string[] = Object.freeze(["discord", "slack"]);

/** The exact line that marks a shared session in the prompt. */
export const MULTI_USER_NOTICE = "Multi-user session — messages are prefixed with [sender name]";

/**
 * The first 12 hex digits of the SHA-256 of the UTF-8 value.
 *
 * @example
 * ```ts
 * hashIdentifier("12345"); // "5994471abb01"
 * ```
 */
export function hashIdentifier(value: string): string {
  const known = hashed.get(value);
  if (known !== undefined) return known;
  const hash = digest("sha256", value, "hex").slice(0, 12);
  // The same few ids are hashed on every request and turn (log lines, prompts): remember the newest.
  if (value.length <= MAX_REMEMBERED_ID) {
    if (hashed.size >= REMEMBERED_HASHES) hashed.delete(hashed.keys().next().value!);
    hashed.set(value, hash);
  }
  return hash;
}

/** How many {@link hashIdentifier} results are remembered (oldest out first). */
const REMEMBERED_HASHES = 4096;
/** Longer values are hashed every time (not remembered). */
const MAX_REMEMBERED_ID = 256;
const hashed = new Map<string, string>();

function isExempt(platform: string): boolean {
  return PII_EXEMPT_PLATFORMS.includes(platform);
}

/**
 * A user id safe to show: `user_<hash>`, or the raw id on Discord and Slack.
 *
 * @example
 * ```ts
 * redactUserId("telegram", "12345"); // "user_5994471abb01"
 * redactUserId("discord", "12345");  // "12345"
 * ```
 */
export function redactUserId(platform: string, id: string): string {
  return isExempt(platform) ? id : `user_${hashIdentifier(id)}`;
}

/**
 * A chat id safe to show. An id that begins with its own platform's name and a
 * colon keeps that prefix (`telegram:99999` → `telegram:<hash of "99999">`); any
 * other value is hashed whole. Discord and Slack ids are returned raw.
 *
 * @example
 * ```ts
 * redactChatId("telegram", "telegram:99999"); // "telegram:" + hashIdentifier("99999")
 * redactChatId("telegram", "-100123");        // hashIdentifier("-100123")
 * ```
 */
export function redactChatId(platform: string, id: string): string {
  if (isExempt(platform)) return id;
  const prefix = `${platform}:`;
  if (platform.length > 0 && id.startsWith(prefix)) return `${prefix}${hashIdentifier(id.slice(prefix.length))}`;
  return hashIdentifier(id);
}

// C0 and C1 controls, DEL, and the invisible bidi controls that can disguise text.
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
const CONTROLS = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/**
 * Makes untrusted text (names, topics) safe to embed in a prompt line: removes
 * control characters (tabs and line breaks become spaces), collapses whitespace,
 * trims, and caps the result at `maxLength` code points, ending in `…` when cut.
 *
 * @example
 * ```ts
 * sanitizeUntrustedText("Dev\nChat\u0007  "); // "Dev Chat"
 * sanitizeUntrustedText("x".repeat(500)).length; // 240
 * ```
 */
export function sanitizeUntrustedText(text: string, maxLength = 240): string {
  if (!Number.isInteger(maxLength) || maxLength < 1) {
    throw new InvalidInputError(`maxLength must be a whole number of at least 1 (got ${maxLength}).`, {
      field: "maxLength",
    });
  }
  const cleaned = String(text).toWellFormed().replace(LINE_BREAKS, " ").replace(CONTROLS, "").replace(/\s+/g, " ").trim();
  const codePoints = [...cleaned];
  if (codePoints.length <= maxLength) return cleaned;
  return `${codePoints
    .slice(0, maxLength - 1)
    .join("")
    .trimEnd()}…`;
}

/** Gateway-wide settings that shape a session's context. */
export interface SessionContextConfig {
  /** Platforms the gateway is connected to. */
  connectedPlatforms?: string[];
  /** Per-platform home channel, where proactive messages go. */
  homeChannels?: Record<string, { chatId: string; name?: string }>;
  /** How group and thread lanes are split (see `buildSessionKey`). */
  keySettings?: KeySettings;
}

/** Everything the agent is told about its current session. */
export interface SessionContext {
  /** Where the current message came from. */
  source: SessionSource;
  /** The source's platform. */
  platform: string;
  /** Connected platforms, the current one included, without duplicates. */
  connectedPlatforms: string[];
  /** Home channels per platform. */
  homeChannels: Record<string, { chatId: string; name?: string }>;
  /** Whether several people share this session. */
  sharedMultiUser: boolean;
  /** The session key. */
  sessionKey: string;
  /** The session id. */
  sessionId: string;
  /** When the session was created (epoch seconds). */
  createdAt: number;
  /** When the session was last updated (epoch seconds). */
  updatedAt: number;
}

/**
 * Assembles the {@link SessionContext} of a session entry.
 *
 * @example
 * ```ts
 * const ctx = buildSessionContext(source, { connectedPlatforms: ["telegram", "discord"] }, entry);
 * const prompt = buildSessionContextPrompt(ctx, { redactPii: true });
 * ```
 */
export function buildSessionContext(
  source: SessionSource,
  config: SessionContextConfig,
  entry: { sessionKey: string; sessionId: string; createdAt: number; updatedAt: number },
): SessionContext {
  const homeChannels: Record<string, { chatId: string; name?: string }> = {};
  for (const [platform, home] of Object.entries(config.homeChannels ?? {})) {
    Object.defineProperty(homeChannels, platform, {
      value: { ...home },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return {
    source,
    platform: source.platform,
    connectedPlatforms: [...new Set([...(config.connectedPlatforms ?? []), source.platform])],
    homeChannels,
    sharedMultiUser: isSharedMultiUserSession(source, config.keySettings),
    sessionKey: entry.sessionKey,
    sessionId: entry.sessionId,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
  };
}

function text(value: string | null | undefined): string | null {
  if (typeof value !== "string") return null;
  const clean = sanitizeUntrustedText(value);
  return clean.length > 0 ? clean : null;
}

function displayId(value: string | null | undefined, redact: ((id: string) => string) | null): string | null {
  if (typeof value !== "string" || value.length === 0) return null;
  return text(redact === null ? value : redact(value));
}

/**
 * Renders the context as a markdown section starting with `## Current Session
 * Context`: the source, the topic, the user (or, for shared sessions, the
 * multi-user notice), the connected platforms and the delivery options. Names and
 * topics are sanitised; with `redactPii`, user and chat ids of every platform but
 * Discord and Slack are replaced by hashes.
 *
 * @example
 * ```ts
 * buildSessionContextPrompt(ctx, { redactPii: true });
 * // ## Current Session Context
 * // Source: telegram (DM with Alice)
 * // User: Alice (id: user_5994471abb01)
 * // …
 * ```
 */
export function buildSessionContextPrompt(ctx: SessionContext, { redactPii = false }: { redactPii?: boolean } = {}): string {
  const source = ctx.source;
  const platform = source.platform;
  const userRedact = redactPii ? (id: string) => redactUserId(platform, id) : null;
  const chatRedact = redactPii ? (id: string) => redactChatId(platform, id) : null;

  const userId = displayId(source.userId || source.userIdAlt, userRedact);
  const display: SessionSource = {
    platform,
    chatType: source.chatType,
    chatName: text(source.chatName),
    chatId: displayId(source.chatId, chatRedact),
    parentChatId: displayId(source.parentChatId, chatRedact),
    threadId: text(source.threadId),
    userName: text(source.userName),
    userId: displayId(source.userId, userRedact),
  };

  const lines = ["## Current Session Context", ""];
  lines.push(`Source: ${text(platform) ?? "unknown"} (${describeSessionSource(display)})`);
  const topic = text(source.chatTopic);
  if (topic !== null) lines.push(`Topic: ${topic}`);
  if (ctx.sharedMultiUser) {
    lines.push(MULTI_USER_NOTICE);
  } else if (display.userName || userId) {
    const name = display.userName ?? "unknown user";
    lines.push(userId === null ? `User: ${name}` : `User: ${name} (id: ${userId})`);
  }
  const connected = ctx.connectedPlatforms.map((p) => text(p)).filter((p): p is string => p !== null);
  lines.push(`Connected platforms: ${connected.length > 0 ? connected.join(", ") : "none"}`);

  lines.push("", "Delivery options:", "- Reply here: your answer goes back to this conversation.");
  for (const [homePlatform, home] of Object.entries(ctx.homeChannels)) {
    const chatId = displayId(home.chatId, redactPii ? (id) => redactChatId(homePlatform, id) : null);
    const name = text(home.name);
    const label = name === null ? "" : ` ${name}`;
    lines.push(`- Home channel on ${text(homePlatform) ?? "unknown"}:${label} (chat id: ${chatId ?? "unknown"})`);
  }
  return lines.join("\n");
}
