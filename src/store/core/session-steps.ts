/**
 * Session rows inside a write, once for every backend: requiring a session, inserting a new
 * one (with its title and lineage rules), ending and reopening it, applying usage.
 *
 * @module
 */
import type { NewSession, Session, SessionUsage } from "../contract.js";
import { ConflictError, NotFoundError } from "../errors.js";
import type { PreparedSession } from "../input-validation.js";
import { toSession, toUsage, type SessionRow } from "../session-rows.js";
import { assertUsageNotNegative, usageSetClauses, type UsagePlan } from "../usage-update.js";
import { COMPRESSION, refreshChain, sessionRow } from "./lineage-steps.js";
import { insertSession } from "./session-insert.js";
import { one, run, type Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { claimTitle } from "./title-steps.js";

/** The session row, or NotFoundError. `lock`: held until the write commits. */
export function* requireRow(d: StoreDialect<unknown>, id: string, lock = false): Steps<SessionRow> {
  const row = yield* sessionRow(id, lock ? d.forUpdate : "");
  if (row === undefined) throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
  return row;
}

/**
 * Checks that a session exists (under its row lock with `lock`) without reading its row: the
 * primary-key index answers, so it costs a fraction of {@link requireRow}'s full-row read.
 */
export function* requireSession(d: StoreDialect<unknown>, id: string, lock = false): Steps<void> {
  const found = yield* one<{ one: number }>(`SELECT 1 AS one FROM sessions WHERE id = ?${lock ? d.forUpdate : ""}`, [id]);
  if (found === undefined) throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
}

/** Inserts a checked new session: the id must be free, the parent must exist, the title is claimed. */
export function* insertNewSession(d: StoreDialect<unknown>, input: NewSession, prepared: PreparedSession): Steps<Session> {
  const { id, startedAt, title, modelConfig } = prepared;
  if ((yield* sessionRow(id)) !== undefined) {
    throw new ConflictError(`A session with id "${id}" already exists; choose another id.`, { sessionId: id });
  }
  const parentId = input.parentSessionId ?? null;
  if (parentId !== null && (yield* sessionRow(parentId, d.forUpdate)) === undefined) {
    throw new NotFoundError(`The parent session "${parentId}" does not exist.`);
  }
  if (title !== null) yield* claimTitle(title, id, parentId);
  yield* insertSession(
    {
      id,
      source: input.source,
      userId: input.userId ?? null,
      model: input.model ?? null,
      modelConfig,
      systemPrompt: input.systemPrompt ?? null,
      parentId,
      startedAt,
      endedAt: null,
      endReason: null,
      title,
      sessionKey: input.sessionKey ?? null,
      chatId: input.chatId ?? null,
      chatType: input.chatType ?? null,
      threadId: input.threadId ?? null,
      usage: {},
    },
    d.encodeText,
  );
  yield* refreshChain(parentId ?? id);
  return toSession(yield* requireRow(d, id), d.decodeText);
}

/** Ends a session; false when it had already ended. */
export function* endSessionRow(d: StoreDialect<unknown>, id: string, reason: string, endedAt: number): Steps<boolean> {
  const row = yield* requireRow(d, id, true);
  if (row.ended_at !== null) return false;
  yield* run("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?", [endedAt, reason, id]);
  yield* d.refreshLastActive(id);
  if (reason === COMPRESSION) yield* refreshChain(id);
  return true;
}

/** Reopens a session; false when it was not ended. */
export function* reopenSessionRow(d: StoreDialect<unknown>, id: string): Steps<boolean> {
  const row = yield* requireRow(d, id, true);
  if (row.ended_at === null) return false;
  yield* run("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ?", [id]);
  yield* d.refreshLastActive(id);
  if (row.end_reason === COMPRESSION) yield* refreshChain(id);
  return true;
}

/**
 * Applies a planned usage update to a session (under its row lock) and returns the new
 * totals. Throws (so the write rolls back) when the session is missing or a total would go
 * below zero.
 */
export function* applyUsage(d: StoreDialect<unknown>, id: string, plan: UsagePlan): Steps<SessionUsage> {
  const params: unknown[] = [];
  const sets = usageSetClauses(plan, (a) => {
    if (a.kind === "text") {
      params.push(d.encodeText(a.value as string | null));
      return "?";
    }
    params.push(a.value);
    return d.usageParam(a.kind);
  });
  // One statement: the UPDATE locks the row and hands it back as updated.
  const row =
    sets.length > 0
      ? yield* one<SessionRow>(`UPDATE sessions SET ${sets.join(", ")} WHERE id = ? RETURNING *`, [...params, id])
      : yield* sessionRow(id, d.forUpdate);
  if (row === undefined) throw new NotFoundError(`No session with id "${id}". List sessions to find the right id.`);
  return assertUsageNotNegative(toUsage(row, d.decodeText));
}
