/**
 * Validation of what callers hand a {@link SessionDB}: every backend runs the same
 * checks before touching storage, so bad input is rejected with the same
 * {@link InvalidInputError} everywhere and never half-written.
 *
 * @module
 */
import {
  MESSAGE_ROLES,
  type ContentPart,
  type Message,
  type MessageContent,
  type MessageRole,
  type NewMessage,
  type NewSession,
  type PruneOptions,
  type SearchOptions,
  type SessionUpdate,
  type SourceIdentity,
  type ToolCall,
  type UsageUpdate,
} from "./contract.js";
import { checkAttachmentPart } from "./attachment-input.js";
import { InvalidInputError } from "./errors.js";
import { newSessionId } from "./session-id.js";
import { assertWellFormed, sanitizeTitle } from "./titles.js";

/** Largest message accepted: content, tool calls and reasoning together, in UTF-8 bytes (16 MiB). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Longest session id or source name. */
export const MAX_ID_LENGTH = 256;
/** Largest page or result limit. */
export const MAX_PAGE_LIMIT = 1000;

const CONTROL = /[\u0000-\u001F\u007F]/u;

/** A message ready to store: every optional field resolved. */
export type NormalizedMessage = Omit<Message, "id" | "sessionId" | "rewoundAt">;

/** Checks an id-like string (session id, source): non-empty, at most 256 characters, no control characters. */
export function checkId(value: unknown, field: string): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidInputError(`${field} must be a non-empty string.`, { field });
  }
  if (value.length > MAX_ID_LENGTH) {
    throw new InvalidInputError(`${field} is ${value.length} characters long; the limit is ${MAX_ID_LENGTH}.`, { field });
  }
  if (CONTROL.test(value)) throw new InvalidInputError(`${field} must not contain control characters.`, { field });
  assertWellFormed(value, field);
  return value;
}

/** Checks an optional owner filter (`userId` of a listing, search or export): `undefined`/`null` → `null`, else an id-like string. */
export function checkUserIdFilter(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return checkId(value, "userId");
}

/**
 * Checks an optional "any of these ids" filter: `undefined`/`null` → `null` (no filter), else
 * the distinct ids. Unlike a name list, an empty array is kept: it matches nothing.
 */
export function checkIdSetFilter(value: unknown, field: string): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new InvalidInputError(`${field} must be an array of strings.`, { field });
  for (const [i, v] of (value as unknown[]).entries()) checkId(v, `${field}[${i}]`);
  return [...new Set(value as string[])];
}

/**
 * Checks an optional list of (source, user id) pairs (`identities`): `undefined`/`null` →
 * `null`; an empty list stays empty (it matches nothing). Duplicates are dropped.
 */
export function checkIdentityFilter(value: unknown, field: string): SourceIdentity[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new InvalidInputError(`${field} must be an array of { source, userId } objects.`, { field });
  const seen = new Map<string, SourceIdentity>();
  value.forEach((v: unknown, i) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) {
      throw new InvalidInputError(`${field}[${i}] must be an object { source, userId }.`, { field: `${field}[${i}]` });
    }
    const source = checkId((v as Record<string, unknown>)["source"], `${field}[${i}].source`);
    const userId = checkId((v as Record<string, unknown>)["userId"], `${field}[${i}].userId`);
    seen.set(`${source}\u0000${userId}`, { source, userId });
  });
  return [...seen.values()];
}

/** Checks an optional single-id filter (`chatId`): `undefined`/`null` → `null`. */
export function checkIdFilter(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  return checkId(value, field);
}

/** Checks an optional text field: `null`/`undefined` → `null`, else a well-formed string. */
export function optionalText(value: unknown, field: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") throw new InvalidInputError(`${field} must be a string or null.`, { field });
  assertWellFormed(value, field);
  return value;
}

/** Checks a time in epoch seconds; `undefined` → `fallback`. */
export function checkTime(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new InvalidInputError(`${field} must be a finite, non-negative number of seconds since the epoch.`, { field });
  }
  return value;
}

/** Serialises a JSON value, turning what cannot be serialised into an {@link InvalidInputError}. */
export function toJson(value: unknown, field: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new InvalidInputError(`${field} cannot be stored as JSON (${(cause as Error).message}).`, { field, cause });
  }
  if (text === undefined) throw new InvalidInputError(`${field} cannot be stored as JSON.`, { field });
  // JSON.stringify escapes a lone surrogate (\udXXX), so check the strings themselves.
  assertJsonStringsWellFormed(value, field, 0);
  return text;
}

function assertJsonStringsWellFormed(value: unknown, field: string, depth: number): void {
  if (typeof value === "string") {
    assertWellFormed(value, field);
  } else if (value !== null && typeof value === "object" && depth < 100) {
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      assertWellFormed(key, field);
      assertJsonStringsWellFormed(item, field, depth + 1);
    }
  }
}

function checkJsonObject(value: unknown, field: string): Record<string, unknown> | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidInputError(`${field} must be a JSON object or null.`, { field });
  }
  toJson(value, field);
  return value as Record<string, unknown>;
}

/** Validates the fields of a new session (the id is checked when present). */
export function checkNewSession(input: NewSession): NewSession {
  if (input === null || typeof input !== "object") throw new InvalidInputError("createSession needs an object.");
  if (input.id !== undefined) checkId(input.id, "id");
  checkId(input.source, "source");
  for (const field of ["userId", "model", "systemPrompt", "title", "sessionKey", "chatId", "chatType", "threadId"] as const) {
    optionalText(input[field], field);
  }
  if (input.parentSessionId !== undefined && input.parentSessionId !== null) checkId(input.parentSessionId, "parentSessionId");
  checkJsonObject(input.modelConfig, "modelConfig");
  checkTime(input.startedAt, "startedAt", 0);
  return input;
}

/** What a backend needs to insert a checked new session. */
export interface PreparedSession {
  id: string;
  startedAt: number;
  title: string | null;
  modelConfig: string | null;
}

/** Resolves the defaults of a checked new session: id, start time, clean title, model config JSON. */
export function prepareNewSession(input: NewSession, now: number = Date.now() / 1000): PreparedSession {
  const startedAt = checkTime(input.startedAt, "startedAt", now);
  return {
    id: input.id ?? newSessionId(startedAt),
    startedAt,
    title: sanitizeTitle(input.title ?? null),
    modelConfig: input.modelConfig == null ? null : toJson(input.modelConfig, "modelConfig"),
  };
}

/** Validates a session update. */
export function checkSessionUpdate(update: SessionUpdate): SessionUpdate {
  if (update === null || typeof update !== "object") throw new InvalidInputError("updateSession needs an object.");
  for (const key of Object.keys(update)) {
    if (!["model", "modelConfig", "systemPrompt"].includes(key)) {
      throw new InvalidInputError(`"${key}" cannot be changed with updateSession (it takes model, modelConfig, systemPrompt; titles use setTitle).`, {
        field: key,
      });
    }
  }
  optionalText(update.model, "model");
  optionalText(update.systemPrompt, "systemPrompt");
  checkJsonObject(update.modelConfig, "modelConfig");
  return update;
}

function checkContent(content: unknown, field: string): MessageContent {
  if (content === null || content === undefined) return null;
  if (typeof content === "string") {
    assertWellFormed(content, field);
    return content;
  }
  if (!Array.isArray(content)) {
    throw new InvalidInputError(`${field} must be a string, an array of content parts, or null.`, { field });
  }
  content.forEach((part: unknown, i) => {
    if (part === null || typeof part !== "object" || typeof (part as ContentPart).type !== "string") {
      throw new InvalidInputError(`${field}[${i}] must be an object with a string "type".`, { field: `${field}[${i}]` });
    }
    const text = (part as ContentPart).text;
    if (text !== undefined && typeof text !== "string") {
      throw new InvalidInputError(`${field}[${i}].text must be a string.`, { field: `${field}[${i}].text` });
    }
    if ((part as ContentPart).type === "attachment") checkAttachmentPart(part as ContentPart, `${field}[${i}]`);
  });
  toJson(content, field);
  return content as ContentPart[];
}

function checkToolCalls(value: unknown, field: string): ToolCall[] | null {
  if (value === null || value === undefined) return null;
  if (!Array.isArray(value)) throw new InvalidInputError(`${field} must be an array of tool calls or null.`, { field });
  value.forEach((call: unknown, i) => {
    const fn = (call as ToolCall | null)?.function;
    if (call === null || typeof call !== "object" || fn === null || typeof fn !== "object" || typeof fn.name !== "string") {
      throw new InvalidInputError(`${field}[${i}] must be an OpenAI-style tool call: { id, type: "function", function: { name, arguments } }.`, {
        field: `${field}[${i}]`,
      });
    }
  });
  toJson(value, field);
  return value.length === 0 ? null : (value as ToolCall[]);
}

/** Validates a message and resolves its defaults; `field` names it in errors (e.g. `messages[2]`). */
export function normalizeMessage(message: NewMessage, field = "message", now = Date.now() / 1000): NormalizedMessage {
  if (message === null || typeof message !== "object") {
    throw new InvalidInputError(`${field} must be an object.`, { field });
  }
  const role = message.role as unknown;
  if (typeof role !== "string" || role === "") {
    throw new InvalidInputError(`${field}.role is empty; use one of ${MESSAGE_ROLES.join(", ")}.`, { field: `${field}.role` });
  }
  if (!(MESSAGE_ROLES as readonly string[]).includes(role)) {
    throw new InvalidInputError(`${field}.role "${role}" is not a known role; use one of ${MESSAGE_ROLES.join(", ")}.`, {
      field: `${field}.role`,
    });
  }
  const tokenCount = message.tokenCount ?? null;
  if (tokenCount !== null && (!Number.isInteger(tokenCount) || tokenCount < 0)) {
    throw new InvalidInputError(`${field}.tokenCount must be a non-negative integer or null.`, { field: `${field}.tokenCount` });
  }
  const normalized: NormalizedMessage = {
    role: role as MessageRole,
    content: checkContent(message.content, `${field}.content`),
    toolCalls: checkToolCalls(message.toolCalls, `${field}.toolCalls`),
    toolCallId: optionalText(message.toolCallId, `${field}.toolCallId`),
    toolName: optionalText(message.toolName, `${field}.toolName`),
    tokenCount,
    finishReason: optionalText(message.finishReason, `${field}.finishReason`),
    reasoning: optionalText(message.reasoning, `${field}.reasoning`),
    reasoningDetails: message.reasoningDetails ?? null,
    platformMessageId: optionalText(message.platformMessageId, `${field}.platformMessageId`),
    timestamp: checkTime(message.timestamp, `${field}.timestamp`, now),
  };
  if (normalized.reasoningDetails !== null) toJson(normalized.reasoningDetails, `${field}.reasoningDetails`);
  const bytes = byteLength(normalized.content) + byteLength(normalized.toolCalls) + byteLength(normalized.reasoning) + byteLength(normalized.reasoningDetails);
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new InvalidInputError(`${field} is ${bytes} bytes; the limit is ${MAX_MESSAGE_BYTES} (16 MiB). Store large outputs elsewhere and keep a reference.`, {
      field: `${field}.content`,
    });
  }
  return normalized;
}

function byteLength(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === "string") return Buffer.byteLength(value);
  return Buffer.byteLength(JSON.stringify(value));
}

/** Validates a page/result limit: default when undefined, else an integer in 1..max. */
export function checkLimit(value: unknown, fallback: number, max = MAX_PAGE_LIMIT, field = "limit"): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidInputError(`${field} must be a whole number from 1 to ${max}.`, { field });
  }
  return value;
}

/** Validates an offset: default 0, else a non-negative integer. */
export function checkOffset(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidInputError("offset must be a whole number of 0 or more.", { field: "offset" });
  }
  return value;
}

/** Validates a list of names (sources, roles); `undefined`/empty → `null` (no filter). */
export function checkNameList(value: unknown, field: string): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new InvalidInputError(`${field} must be an array of strings.`, { field });
  for (const [i, v] of (value as unknown[]).entries()) checkId(v, `${field}[${i}]`);
  return value.length === 0 ? null : [...new Set(value as string[])];
}

const USAGE_NUMBERS = [
  "inputTokens",
  "outputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "reasoningTokens",
  "apiCalls",
  "estimatedCostUsd",
  "actualCostUsd",
] as const;
const USAGE_TEXTS = ["billingProvider", "billingMode", "costStatus"] as const;

/** Names of the numeric usage fields. */
export type UsageNumberField = (typeof USAGE_NUMBERS)[number];
/** Names of the text usage fields. */
export type UsageTextField = (typeof USAGE_TEXTS)[number];

/** Validates a usage update; returns the numeric and text fields present. */
export function checkUsage(
  usage: UsageUpdate,
  mode: "delta" | "absolute",
): {
  numbers: Partial<Record<UsageNumberField, number | null>>;
  texts: Partial<Record<UsageTextField, string | null>>;
} {
  if (usage === null || typeof usage !== "object") throw new InvalidInputError("recordUsage needs a usage object.");
  const known = new Set<string>([...USAGE_NUMBERS, ...USAGE_TEXTS]);
  for (const key of Object.keys(usage)) {
    if (!known.has(key)) {
      throw new InvalidInputError(`Unknown usage field "${key}"; known: ${[...known].join(", ")}.`, { field: key });
    }
  }
  const numbers: Partial<Record<UsageNumberField, number | null>> = {};
  for (const key of USAGE_NUMBERS) {
    const value = usage[key];
    if (value === undefined) continue;
    if (value === null && key === "actualCostUsd") {
      if (mode === "delta") continue;
      numbers[key] = null;
      continue;
    }
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new InvalidInputError(`${key} must be a finite number.`, { field: key });
    }
    if (mode === "absolute" && value < 0) throw new InvalidInputError(`${key} must not be negative.`, { field: key });
    if (!key.endsWith("Usd") && !Number.isInteger(value)) {
      throw new InvalidInputError(`${key} must be a whole number.`, { field: key });
    }
    numbers[key] = value;
  }
  const texts: Partial<Record<UsageTextField, string | null>> = {};
  for (const key of USAGE_TEXTS) {
    if (usage[key] !== undefined) texts[key] = optionalText(usage[key], key);
  }
  return { numbers, texts };
}

/** Default number of search hits. */
export const DEFAULT_SEARCH_LIMIT = 20;

/** Validated search options. */
export interface CheckedSearchOptions {
  limit: number;
  offset: number;
  sort: "relevance" | "newest" | "oldest";
  sources: string[] | null;
  excluded: string[] | null;
  roles: string[] | null;
  userId: string | null;
  /** Any of these user ids (empty: nothing matches), or null. */
  userIds: string[] | null;
  /** Any of these (source, user id) pairs (empty: nothing matches), or null. */
  identities: SourceIdentity[] | null;
  chatId: string | null;
}

/** Validates a search call's arguments (the query text itself is never invalid, only its type). */
export function checkSearchOptions(query: unknown, options: SearchOptions = {}): CheckedSearchOptions {
  if (typeof query !== "string") throw new InvalidInputError("The search query must be a string.", { field: "query" });
  if (options === null || typeof options !== "object") throw new InvalidInputError("Search options must be an object.");
  const sort = options.sort ?? "relevance";
  if (sort !== "relevance" && sort !== "newest" && sort !== "oldest") {
    throw new InvalidInputError(`sort must be "relevance", "newest" or "oldest", not "${String(sort)}".`, { field: "sort" });
  }
  return {
    limit: checkLimit(options.limit, DEFAULT_SEARCH_LIMIT),
    offset: checkOffset(options.offset),
    sort,
    sources: checkNameList(options.sources, "sources"),
    excluded: checkNameList(options.excludeSources, "excludeSources"),
    roles: checkNameList(options.roles, "roles"),
    userId: checkUserIdFilter(options.userId),
    userIds: checkIdSetFilter(options.userIds, "userIds"),
    identities: checkIdentityFilter(options.identities, "identities"),
    chatId: checkIdFilter(options.chatId, "chatId"),
  };
}

/** Validates prune options; returns the age in days and the source filter. */
export function checkPruneOptions(options: PruneOptions): { cutoffDays: number; sources: string[] | null; vacuum: boolean | "full" } {
  if (options === null || typeof options !== "object") {
    throw new InvalidInputError("pruneSessions needs { olderThanDays }.", { field: "olderThanDays" });
  }
  const { olderThanDays } = options;
  if (typeof olderThanDays !== "number" || !Number.isFinite(olderThanDays) || olderThanDays < 0) {
    throw new InvalidInputError("olderThanDays must be a number of days, 0 or more.", { field: "olderThanDays" });
  }
  checkTime(options.now, "now", 0);
  if (options.vacuum !== undefined && typeof options.vacuum !== "boolean" && options.vacuum !== "full") {
    throw new InvalidInputError('vacuum must be true, false or "full".', { field: "vacuum" });
  }
  return { cutoffDays: olderThanDays, sources: checkNameList(options.sources, "sources"), vacuum: options.vacuum ?? true };
}

/** A validated message window of `getMessages`: the last N, or a page (`afterId`, `offset`, `limit`). */
export interface CheckedMessageWindow {
  last: number | null;
  afterId: number | null;
  limit: number | null;
  offset: number;
}

/** Checks the window options of `getMessages` (`lastMessages`, or `afterId`/`limit`/`offset`). */
export function checkMessageWindow(options: { lastMessages?: unknown; afterId?: unknown; limit?: unknown; offset?: unknown }): CheckedMessageWindow {
  const last = checkLastMessages(options.lastMessages);
  const { afterId, limit, offset } = options;
  if (last !== null && (afterId !== undefined || limit !== undefined || offset !== undefined)) {
    throw new InvalidInputError("lastMessages cannot be combined with afterId, limit or offset; page with afterId/limit/offset instead.", {
      field: "lastMessages",
    });
  }
  if (afterId !== undefined && afterId !== null && (typeof afterId !== "number" || !Number.isSafeInteger(afterId) || afterId < 0)) {
    throw new InvalidInputError("afterId must be a message id (a whole number of 0 or more).", { field: "afterId" });
  }
  return {
    last,
    afterId: afterId === undefined || afterId === null ? null : (afterId as number),
    limit: limit === undefined || limit === null ? null : checkLimit(limit, 1),
    offset: checkOffset(offset),
  };
}

/** Checks the `lastMessages` window option: `undefined` or a whole number from 1 to 100,000. */
export function checkLastMessages(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > 100_000) {
    throw new InvalidInputError("lastMessages must be a whole number from 1 to 100,000.", { field: "lastMessages" });
  }
  return value;
}
