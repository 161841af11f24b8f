/**
 * The transcript inside a write, once for every backend: rewinding turns (or the last
 * messages) and restoring them (the dialect keeps its search index in step), the query of a message window, and
 * whether a session's newest message is still the one a caller read.
 *
 * @module
 */
import type { Message, RewindResult } from "../contract.js";
import type { CheckedMessageWindow } from "../input-validation.js";
import { contentText } from "../preview.js";
import { requireRow } from "./session-steps.js";
import { all, run, value, type Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";

/**
 * The query of a message window and its parameters (the session id, then the `afterId` when
 * given). The message id is a parameter, not part of the text, so the statement is prepared
 * once (a prepared-statement cache keyed by SQL text stays small).
 */
export function messageWindowSql(
  d: StoreDialect<unknown>,
  sessionId: string,
  window: CheckedMessageWindow,
  includeRewound: boolean,
): { sql: string; params: unknown[] } {
  const { last, afterId, limit, offset } = window;
  const visible = includeRewound ? "" : " AND rewound_at IS NULL";
  const from = `SELECT ${d.messageColumns} FROM messages WHERE session_id = ?${visible}`;
  if (last !== null) return { sql: `SELECT * FROM (${from} ORDER BY id DESC LIMIT ${last}) AS w ORDER BY id`, params: [sessionId] };
  const page = limit === null && offset === 0 ? "" : d.limitOffset(limit, offset);
  if (afterId === null) return { sql: `${from} ORDER BY id${page}`, params: [sessionId] };
  return { sql: `${from} AND id > ? ORDER BY id${page}`, params: [sessionId, afterId] };
}

/** Hides the last `turns` user turns (and everything after them) as one rewind batch. */
export function* rewindTurns(d: StoreDialect<unknown>, sessionId: string, turns: number, at: number): Steps<RewindResult> {
  const users = yield* all<unknown>(
    `SELECT ${d.messageColumns} FROM messages
      WHERE session_id = ? AND role = 'user' AND rewound_at IS NULL ORDER BY id DESC LIMIT ?`,
    [sessionId, turns],
  );
  const targetRow = users[users.length - 1];
  if (targetRow === undefined) return { rewound: 0, turnsUndone: 0, targetText: null };
  const target = d.toMessage(targetRow);
  const batch = ((yield* value<number | null>("SELECT max(rewind_batch) FROM messages WHERE session_id = ?", [sessionId])) ?? 0) + 1;
  yield* d.unindexFrom(sessionId, target.id);
  const rewound = yield* run("UPDATE messages SET rewound_at = ?, rewind_batch = ? WHERE session_id = ? AND id >= ? AND rewound_at IS NULL", [
    at,
    batch,
    sessionId,
    target.id,
  ]);
  yield* d.recomputeSummary(sessionId);
  const text = contentText(target.content);
  return { rewound, turnsUndone: users.length, targetText: text === "" ? null : text };
}

/** Hides the last `count` visible messages as one rewind batch; returns them (oldest first) as they are now. */
export function* rewindLastMessages(d: StoreDialect<unknown>, sessionId: string, count: number, at: number): Steps<Message[]> {
  const rows = yield* all<unknown>(`SELECT ${d.messageColumns} FROM messages WHERE session_id = ? AND rewound_at IS NULL ORDER BY id DESC LIMIT ?`, [
    sessionId,
    count,
  ]);
  if (rows.length === 0) return [];
  const messages = rows.map((row) => d.toMessage(row)).reverse();
  const fromId = messages[0]!.id;
  const batch = ((yield* value<number | null>("SELECT max(rewind_batch) FROM messages WHERE session_id = ?", [sessionId])) ?? 0) + 1;
  yield* d.unindexFrom(sessionId, fromId);
  yield* run("UPDATE messages SET rewound_at = ?, rewind_batch = ? WHERE session_id = ? AND id >= ? AND rewound_at IS NULL", [at, batch, sessionId, fromId]);
  yield* d.recomputeSummary(sessionId);
  return messages.map((m) => ({ ...m, rewoundAt: at }));
}

/** Makes rewound messages visible again: the last batch, or every one (`all`). Returns how many. */
export function* restoreRewound(d: StoreDialect<unknown>, sessionId: string, everyBatch: boolean): Steps<number> {
  const which = everyBatch
    ? "session_id = ? AND rewound_at IS NOT NULL"
    : `session_id = ? AND rewound_at IS NOT NULL AND rewind_batch =
         (SELECT max(rewind_batch) FROM messages WHERE session_id = ? AND rewound_at IS NOT NULL)`;
  const params = everyBatch ? [sessionId] : [sessionId, sessionId];
  const rows = yield* all<unknown>(`SELECT ${d.messageColumns} FROM messages WHERE ${which} ORDER BY id`, params);
  if (rows.length === 0) return 0;
  yield* run(`UPDATE messages SET rewound_at = NULL, rewind_batch = NULL WHERE ${which}`, params);
  yield* d.reindex(rows);
  yield* d.recomputeSummary(sessionId);
  return rows.length;
}

/** Whether the newest visible message of a session (under its row lock) has this id (`null`: it has none). */
export function* lastMessageIs(d: StoreDialect<unknown>, sessionId: string, expected: number | null): Steps<boolean> {
  yield* requireRow(d, sessionId, true);
  const last = yield* value<number | bigint | string | null>("SELECT MAX(id) FROM messages WHERE session_id = ? AND rewound_at IS NULL", [sessionId]);
  const id = last === null || last === undefined ? null : Number(last);
  return id === expected;
}
