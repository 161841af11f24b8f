/**
 * Cross-platform handoffs (`handoffs`) on SQLite: the statements behind createHandoff,
 * getHandoff, claimHandoff and finishHandoff. Callers run the writing ones inside the write
 * queue's transaction (`BEGIN IMMEDIATE`), which every process serialises, so a claim's
 * read-then-update is atomic across processes: two claimers never get the same handoff.
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
import type { SqliteConnection } from "./sqlite-connection.js";

/** The row of a handoff, or `undefined`. */
function handoffRow(conn: SqliteConnection, id: string): HandoffRow | undefined {
  return conn.stmt(`SELECT ${HANDOFF_COLUMNS} FROM handoffs WHERE id = ?`).get(id) as HandoffRow | undefined;
}

/** The handoff, or `null`. */
export function getHandoff(conn: SqliteConnection, id: string): Handoff | null {
  const row = handoffRow(conn, id);
  return row === undefined ? null : toHandoff(row);
}

/** Inserts a pending handoff (inside a write); the session must exist. */
export function createHandoff(conn: SqliteConnection, input: CheckedNewHandoff): Handoff {
  if (conn.stmt("SELECT 1 FROM sessions WHERE id = ?").get(input.sessionId) === undefined) {
    throw new NotFoundError(`No session with id "${input.sessionId}" to hand off. List sessions to find the right id.`);
  }
  conn
    .stmt(
      `INSERT INTO handoffs (id, session_id, platform, status, created_at, updated_at)
       VALUES (?, ?, ?, 'pending', ?, ?)`,
    )
    .run(input.id, input.sessionId, input.platform, input.createdAt, input.createdAt);
  return toHandoff(handoffRow(conn, input.id)!);
}

/** Moves the oldest pending handoff of the platforms to running (inside a write); `null` when none. */
export function claimHandoff(conn: SqliteConnection, claim: CheckedClaimHandoff): Handoff | null {
  if (claim.platforms.length === 0) return null;
  const row = conn
    .stmt(
      `SELECT ${HANDOFF_COLUMNS} FROM handoffs
        WHERE status = 'pending' AND platform IN (SELECT value FROM json_each(?)) AND created_at <= ?
        ORDER BY created_at, rowid LIMIT 1`,
    )
    .get(JSON.stringify(claim.platforms), claim.createdBefore ?? Number.MAX_VALUE) as HandoffRow | undefined;
  if (row === undefined) return null;
  conn.stmt("UPDATE handoffs SET status = 'running', claimed_by = ?, updated_at = ? WHERE id = ?").run(claim.holder, claim.now, row.id);
  return toHandoff(handoffRow(conn, row.id)!);
}

/** Ends a handoff (inside a write). */
export function finishHandoff(conn: SqliteConnection, id: string, result: CheckedHandoffResult): Handoff {
  const row = handoffRow(conn, id);
  if (row === undefined) throw new NotFoundError(`No handoff with id "${id}".`);
  assertCanFinish(id, row.status, result);
  conn
    .stmt(
      `UPDATE handoffs SET status = ?, reason = ?, updated_at = ?, chat_id = ?, thread_id = ?, session_key = ?
        WHERE id = ?`,
    )
    .run(result.status, result.reason, result.now, result.chatId, result.threadId, result.sessionKey, id);
  return toHandoff(handoffRow(conn, id)!);
}
