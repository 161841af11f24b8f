/**
 * Cross-platform handoffs (`handoffs`) on PostgreSQL: the statements behind createHandoff,
 * getHandoff, claimHandoff and finishHandoff. Callers run the writing ones inside the write
 * transaction.
 *
 * Race safety: a claim picks the oldest pending row with `FOR UPDATE SKIP LOCKED` and
 * updates it in the same statement, so concurrent claimers in any process never get the
 * same handoff (a row another claimer is taking is skipped; one it has taken is no longer
 * pending). A finish locks the row first, so it decides on the committed state.
 *
 * @module
 */
import type { Handoff } from "../contract.js";
import { NotFoundError } from "../errors.js";
import {
  assertCanFinish,
  HANDOFF_COLUMNS,
  toHandoff,
  type CheckedClaimHandoff,
  type CheckedHandoffResult,
  type CheckedNewHandoff,
  type HandoffRow,
} from "../handoff-input.js";
import type { Sql } from "./postgres-connection.js";
import { decodeText, encodeText } from "./postgres-rows.js";

const decode = (text: string | null): string | null => decodeText(text);

/** The handoff, or `null`. */
export async function getHandoff(sql: Sql, id: string): Promise<Handoff | null> {
  const row = await sql.one<HandoffRow>(`SELECT ${HANDOFF_COLUMNS} FROM handoffs WHERE id = $1`, [id]);
  return row === undefined ? null : toHandoff(row, decode);
}

/** Inserts a pending handoff (inside a write transaction); the session must exist. */
export async function createHandoff(sql: Sql, input: CheckedNewHandoff): Promise<Handoff> {
  // The session's key-share lock (taken by the foreign key) keeps a concurrent delete out until commit.
  if ((await sql.one("SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE", [input.sessionId])) === undefined) {
    throw new NotFoundError(`No session with id "${input.sessionId}" to hand off. List sessions to find the right id.`);
  }
  const row = await sql.one<HandoffRow>(
    `INSERT INTO handoffs (id, session_id, platform, status, created_at, updated_at)
     VALUES ($1, $2, $3, 'pending', $4, $4) RETURNING ${HANDOFF_COLUMNS}`,
    [input.id, input.sessionId, input.platform, input.createdAt],
  );
  return toHandoff(row!, decode);
}

/** Moves the oldest pending handoff of the platforms to running (inside a write transaction); `null` when none. */
export async function claimHandoff(sql: Sql, claim: CheckedClaimHandoff): Promise<Handoff | null> {
  if (claim.platforms.length === 0) return null;
  const row = await sql.one<HandoffRow>(
    `UPDATE handoffs SET status = 'running', claimed_by = $2, updated_at = $3
      WHERE id = (SELECT id FROM handoffs
                   WHERE status = 'pending' AND platform = ANY($1::text[]) AND created_at <= $4
                   ORDER BY created_at, seq LIMIT 1
                   FOR UPDATE SKIP LOCKED)
      RETURNING ${HANDOFF_COLUMNS}`,
    [claim.platforms, claim.holder, claim.now, claim.createdBefore ?? Number.MAX_VALUE],
  );
  return row === undefined ? null : toHandoff(row, decode);
}

/** Ends a handoff (inside a write transaction), under its row lock. */
export async function finishHandoff(sql: Sql, id: string, result: CheckedHandoffResult): Promise<Handoff> {
  const current = await sql.one<{ status: string }>("SELECT status FROM handoffs WHERE id = $1 FOR UPDATE", [id]);
  if (current === undefined) throw new NotFoundError(`No handoff with id "${id}".`);
  assertCanFinish(id, current.status, result);
  const row = await sql.one<HandoffRow>(
    `UPDATE handoffs SET status = $2, reason = $3, updated_at = $4, chat_id = $5, thread_id = $6, session_key = $7
      WHERE id = $1 RETURNING ${HANDOFF_COLUMNS}`,
    [id, result.status, encodeText(result.reason), result.now, result.chatId, result.threadId, result.sessionKey],
  );
  return toHandoff(row!, decode);
}
