/**
 * Export and import of sessions, once for every backend: a session row as a record with
 * its messages, and one imported record applied (ids kept, parents linked when they arrive,
 * titles and lineage rules enforced, cycles refused).
 *
 * @module
 */
import type { SessionRecord } from "../contract.js";
import { InvalidInputError } from "../errors.js";
import type { ImportOutcome } from "../session-import.js";
import { toSessionRecord, type ExportedMessage } from "../record-format.js";
import type { ValidRecord } from "../session-record.js";
import { toSession, type SessionRow } from "../session-rows.js";
import { refreshChain, sessionRow } from "./lineage-steps.js";
import { insertSession } from "./session-insert.js";
import { run, tuples, type Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";
import { claimTitle } from "./title-steps.js";

/** The query of an exported session's messages, as tuples (one `?`: the session id). */
export function exportMessagesSql(d: StoreDialect<unknown>, includeRewound: boolean): string {
  return `SELECT ${d.exportedMessageColumns} FROM messages WHERE session_id = ?${includeRewound ? "" : " AND rewound_at IS NULL"} ORDER BY id`;
}

/**
 * A session row as an export record, with its messages read by `messagesSql`: as tuples, each
 * mapped straight to its exported shape (no row object, no message object to copy).
 */
export function* exportRecord(d: StoreDialect<unknown>, row: SessionRow, messagesSql: string): Steps<SessionRecord> {
  const rows = yield* tuples(messagesSql, [row.id]);
  const messages = new Array<ExportedMessage>(rows.length);
  for (let i = 0; i < rows.length; i++) messages[i] = d.toExportedMessage(rows[i]!);
  return toSessionRecord(toSession(row, d.decodeText), messages);
}

/**
 * A session row's export line, `JSON.stringify(record) + "\n"` as UTF-8: written by the database
 * when the dialect can ({@link StoreDialect.exportLine}; no message text crosses into
 * JavaScript), else serialised from {@link exportRecord}.
 */
export function* exportLine(d: StoreDialect<unknown>, row: SessionRow, messagesSql: string, includeRewound: boolean): Steps<Uint8Array> {
  if (d.exportLine !== undefined) {
    const line = yield* d.exportLine(recordHead(toSessionRecord(toSession(row, d.decodeText), [])), row.id, includeRewound);
    if (line !== null) return line;
  }
  return Buffer.from(`${JSON.stringify(yield* exportRecord(d, row, messagesSql))}\n`);
}

/** A record without messages as JSON, cut after `"messages":` (where the messages array goes). */
function recordHead(record: SessionRecord): string {
  const json = JSON.stringify(record);
  // `messages` is the record's last key: the JSON ends in `[]}`.
  return json.slice(0, -"[]}".length);
}

/** Applies one validated record; `waitingChildren` named it as their parent before it arrived. */
export function* importRecord(d: StoreDialect<unknown>, record: ValidRecord, waitingChildren: string[]): Steps<ImportOutcome> {
  const s = record.session;
  if ((yield* sessionRow(s.id)) !== undefined) return { status: "skipped", missingParent: null };
  const parentId = s.parentSessionId ?? null;
  if (parentId === s.id) {
    throw new InvalidInputError(`session ${s.id} names itself as its parent, which would close a lineage cycle; record skipped.`);
  }
  const parentExists = parentId !== null && (yield* sessionRow(parentId, d.forUpdate)) !== undefined;
  if (s.title !== null) yield* claimTitle(s.title, s.id, parentExists ? parentId : null);
  yield* insertSession(
    {
      id: s.id,
      source: s.source,
      userId: s.userId ?? null,
      model: s.model ?? null,
      modelConfig: s.modelConfig == null ? null : JSON.stringify(s.modelConfig),
      systemPrompt: s.systemPrompt ?? null,
      parentId: parentExists ? parentId : null,
      startedAt: s.startedAt,
      endedAt: s.endedAt ?? null,
      endReason: s.endedAt == null ? null : (s.endReason ?? null),
      title: s.title,
      sessionKey: s.sessionKey ?? null,
      chatId: s.chatId ?? null,
      chatType: s.chatType ?? null,
      threadId: s.threadId ?? null,
      usage: s.usage ?? {},
    },
    d.encodeText,
  );
  const stored = record.messages.map(({ message, rewoundAt }) => d.storeMessage(message, rewoundAt));
  yield* d.insertMessages(s.id, stored);
  yield* d.recomputeSummary(s.id);
  for (const child of waitingChildren) {
    yield* run("UPDATE sessions SET parent_session_id = ? WHERE id = ? AND parent_session_id IS NULL", [s.id, child]);
  }
  // Linking the waiting children must not close a cycle through this session.
  const seen = new Set<string>();
  let up = parentExists ? parentId : null;
  while (up !== null && !seen.has(up)) {
    if (up === s.id) {
      throw new InvalidInputError(`session ${s.id} would close a lineage cycle (it is its own ancestor through ${parentId}); record skipped.`);
    }
    seen.add(up);
    up = (yield* sessionRow(up))?.parent_session_id ?? null;
  }
  yield* refreshChain(parentExists ? parentId! : s.id);
  return { status: "imported", missingParent: parentId !== null && !parentExists ? parentId : null };
}
