/**
 * Sessions and messages of the store core ({@link StoreCore}): creating, reading, updating, ending
 * and reopening sessions, usage, appending and rewinding messages, listing and search, as functions
 * of the dialect.
 *
 * @module
 */
import type {
  FencedWriteOptions,
  ListSessionsOptions,
  Message,
  MessageWindowOptions,
  NewMessage,
  NewSession,
  Page,
  RewindResult,
  SearchHit,
  SearchOptions,
  Session,
  SessionSummary,
  SessionUpdate,
  SessionUsage,
  UsageUpdate,
} from "../contract.js";
import { MEDIA_GRACE_SECONDS } from "../contract.js";
import { InvalidInputError } from "../errors.js";
import {
  checkId,
  checkMessageWindow,
  checkNewSession,
  checkSearchOptions,
  checkSessionUpdate,
  checkTime,
  normalizeMessage,
  prepareNewSession,
  toJson,
} from "../input-validation.js";
import { fenceOf } from "../routing-input.js";
import { toSession } from "../session-rows.js";
import { checkUsageMode, planUsageUpdate } from "../usage-update.js";
import { assertOpen } from "./assert-open.js";
import { blobsOfSessions, dropUnreferenced } from "./attachment-steps.js";
import { now } from "./clock.js";
import { checkFence } from "./lease-steps.js";
import { sessionRow } from "./lineage-steps.js";
import { listSessionsPage } from "./listing-steps.js";
import { applyUsage, endSessionRow, insertNewSession, reopenSessionRow, requireRow, requireSession } from "./session-steps.js";
import { all, column, run } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { messageWindowSql, restoreRewound as restoreRewoundRows, rewindLastMessages, rewindTurns } from "./transcript-steps.js";

export async function createSession(d: StoreDialect<unknown>, input: NewSession): Promise<Session> {
  checkNewSession(input);
  const prepared = prepareNewSession(input, now());
  return d.write(`creating session ${prepared.id}`, () => insertNewSession(d, input, prepared));
}

export async function getSession(d: StoreDialect<unknown>, id: string): Promise<Session | null> {
  checkId(id, "id");
  return d.read("reading a session", function* () {
    const row = yield* sessionRow(id);
    return row === undefined ? null : toSession(row, d.decodeText);
  });
}

export async function endSession(d: StoreDialect<unknown>, id: string, reason: string, options: { endedAt?: number } = {}): Promise<boolean> {
  checkId(id, "id");
  checkId(reason, "reason");
  const endedAt = checkTime(options.endedAt, "endedAt", now());
  return d.write(`ending session ${id}`, () => endSessionRow(d, id, reason, endedAt));
}

export async function reopenSession(d: StoreDialect<unknown>, id: string): Promise<boolean> {
  checkId(id, "id");
  return d.write(`reopening session ${id}`, () => reopenSessionRow(d, id));
}

export async function resolveSessionId(d: StoreDialect<unknown>, idOrPrefix: string): Promise<string | null> {
  assertOpen(d);
  if (typeof idOrPrefix !== "string" || idOrPrefix === "" || idOrPrefix.includes("\u0000")) return null;
  return d.read("resolving a session id", function* () {
    if ((yield* sessionRow(idOrPrefix)) !== undefined) return idOrPrefix;
    // Range scan on the primary key: ids in [prefix, prefix + U+FFFF).
    const matches = yield* column<string>("SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 2", [idOrPrefix, `${idOrPrefix}\uffff`]);
    return matches.length === 1 ? matches[0]! : null;
  });
}

export async function updateSession(d: StoreDialect<unknown>, id: string, update: SessionUpdate): Promise<Session> {
  checkId(id, "id");
  checkSessionUpdate(update);
  const sets: string[] = [];
  const params: unknown[] = [];
  const encode = d.encodeText;
  if (update.model !== undefined) {
    sets.push("model = ?");
    params.push(encode(update.model));
  }
  if (update.systemPrompt !== undefined) {
    sets.push("system_prompt = ?");
    params.push(encode(update.systemPrompt));
  }
  if (update.modelConfig !== undefined) {
    sets.push("model_config = ?");
    params.push(update.modelConfig === null ? null : toJson(update.modelConfig, "modelConfig"));
  }
  return d.write(`updating session ${id}`, function* () {
    yield* requireSession(d, id, true);
    if (sets.length > 0) yield* run(`UPDATE sessions SET ${sets.join(", ")} WHERE id = ?`, [...params, id]);
    return toSession(yield* requireRow(d, id), d.decodeText);
  });
}

export async function recordUsage(
  d: StoreDialect<unknown>,
  id: string,
  usage: UsageUpdate,
  options: { mode?: "delta" | "absolute" } & FencedWriteOptions = {},
): Promise<SessionUsage> {
  checkId(id, "id");
  const fence = fenceOf(options);
  const plan = planUsageUpdate(usage, checkUsageMode(options.mode));
  return d.write(`recording usage of session ${id}`, function* () {
    yield* checkFence(fence, d);
    return yield* applyUsage(d, id, plan);
  });
}

export async function appendMessage(d: StoreDialect<unknown>, sessionId: string, message: NewMessage, options?: FencedWriteOptions): Promise<number> {
  const ids = await append(d, sessionId, [message], "message", options);
  return ids[0]!;
}

export async function appendTurn(d: StoreDialect<unknown>, sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
  if (!Array.isArray(messages)) throw new InvalidInputError("appendTurn needs an array of messages.", { field: "messages" });
  return append(d, sessionId, messages, "messages", options);
}

async function append(d: StoreDialect<unknown>, sessionId: string, messages: NewMessage[], field: string, options?: FencedWriteOptions): Promise<number[]> {
  checkId(sessionId, "sessionId");
  const fence = fenceOf(options);
  const at = now();
  const stored = messages.map((m, i) => d.storeMessage(normalizeMessage(m, messages.length === 1 && field === "message" ? field : `${field}[${i}]`, at)));
  return d.append(`appending to session ${sessionId}`, sessionId, stored, fence);
}

export async function getMessages(d: StoreDialect<unknown>, sessionId: string, options: MessageWindowOptions = {}): Promise<Message[]> {
  checkId(sessionId, "sessionId");
  const { sql, params } = messageWindowSql(d, sessionId, checkMessageWindow(options), options.includeRewound === true);
  return d.read("reading messages", function* () {
    // The messages first: a transcript with rows proves its session exists (one round trip on
    // PostgreSQL); only an empty window asks whether the session is there at all.
    const rows = yield* all<unknown>(sql, params);
    if (rows.length === 0) yield* requireSession(d, sessionId);
    return rows.map((row) => d.toMessage(row));
  });
}

export async function replaceMessages(d: StoreDialect<unknown>, sessionId: string, messages: NewMessage[], options?: FencedWriteOptions): Promise<number[]> {
  checkId(sessionId, "sessionId");
  if (!Array.isArray(messages)) throw new InvalidInputError("replaceMessages needs an array of messages.", { field: "messages" });
  const fence = fenceOf(options);
  const at = now();
  const stored = messages.map((m, i) => d.storeMessage(normalizeMessage(m, `messages[${i}]`, at)));
  return d.write(`replacing the transcript of ${sessionId}`, function* () {
    yield* checkFence(fence, d);
    yield* requireSession(d, sessionId, true);
    const blobs = yield* blobsOfSessions([sessionId]);
    yield* run("DELETE FROM messages WHERE session_id = ?", [sessionId]);
    const ids = yield* d.insertMessages(sessionId, stored);
    yield* d.recomputeSummary(sessionId);
    if (blobs.length > 0) yield* dropUnreferenced(blobs, at - MEDIA_GRACE_SECONDS, d);
    return ids;
  });
}

export async function rewind(d: StoreDialect<unknown>, sessionId: string, turns = 1, options?: FencedWriteOptions): Promise<RewindResult> {
  checkId(sessionId, "sessionId");
  if (typeof turns !== "number" || Number.isNaN(turns)) {
    throw new InvalidInputError("turns must be a number.", { field: "turns" });
  }
  const fence = fenceOf(options);
  const n = Math.max(1, Math.min(Math.floor(turns), 1_000_000));
  const at = now();
  return d.write(`rewinding session ${sessionId}`, function* () {
    yield* checkFence(fence, d);
    yield* requireSession(d, sessionId, true);
    return yield* rewindTurns(d, sessionId, n, at);
  });
}

export async function rewindMessages(d: StoreDialect<unknown>, sessionId: string, count = 1, options?: FencedWriteOptions): Promise<Message[]> {
  checkId(sessionId, "sessionId");
  if (typeof count !== "number" || Number.isNaN(count)) {
    throw new InvalidInputError("count must be a number.", { field: "count" });
  }
  const fence = fenceOf(options);
  const n = Math.max(1, Math.min(Math.floor(count), 1_000_000));
  const at = now();
  return d.write(`rewinding the last messages of ${sessionId}`, function* () {
    yield* checkFence(fence, d);
    yield* requireSession(d, sessionId, true);
    return yield* rewindLastMessages(d, sessionId, n, at);
  });
}

export async function restoreRewound(d: StoreDialect<unknown>, sessionId: string, options: { all?: boolean } = {}): Promise<number> {
  checkId(sessionId, "sessionId");
  return d.write(`restoring rewound messages of ${sessionId}`, function* () {
    yield* requireSession(d, sessionId, true);
    return yield* restoreRewoundRows(d, sessionId, options.all === true);
  });
}

export async function clearMessages(d: StoreDialect<unknown>, sessionId: string): Promise<number> {
  checkId(sessionId, "sessionId");
  return d.write(`clearing session ${sessionId}`, function* () {
    yield* requireSession(d, sessionId, true);
    const blobs = yield* blobsOfSessions([sessionId]);
    const deleted = yield* run("DELETE FROM messages WHERE session_id = ?", [sessionId]);
    yield* d.recomputeSummary(sessionId);
    if (blobs.length > 0) yield* dropUnreferenced(blobs, now() - MEDIA_GRACE_SECONDS, d);
    return deleted;
  });
}

export async function listSessions(d: StoreDialect<unknown>, options: ListSessionsOptions = {}): Promise<Page<SessionSummary>> {
  return d.read("listing sessions", () => listSessionsPage(options, d.encodeText, d.decodeText));
}

export async function searchMessages(d: StoreDialect<unknown>, query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
  checkSearchOptions(query, options); // before any index catch-up writes anything
  return d.searchMessages(query, options);
}
