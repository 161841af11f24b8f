/**
 * The reference index of media (`message_attachments`), once for every backend: one row per
 * attachment part of every message written (its `position` is the part's place among the
 * message's attachment parts), kept by every path that inserts messages (both dialects'
 * `insertMessages`/`appendMessages` call {@link indexAttachments}), gone with its message by
 * cascade; and the removal of blobs nothing refers to any more, in the transaction that
 * removed their last references.
 *
 * Locking (PostgreSQL; SQLite's write lock already excludes every other writer): a write that
 * indexes references holds the referred `media` rows `FOR SHARE` until it commits, and a
 * removal takes the candidate rows `FOR UPDATE` before it looks for references with a fresh
 * statement. So a removal either waits for the write and then sees its references, or removes
 * the blob before the write looks (the write then keeps a reference that does not resolve,
 * which `checkMedia` reports, exactly as a reference to a blob swept earlier).
 *
 * @module
 */
import type { AttachmentRef, SessionAttachment } from "../contract.js";
import { all, column, placeholders, run, type Steps } from "./steps.js";

/** Most rows of one multi-row insert (9 values each: far below every driver's parameter limit). */
const INSERT_CHUNK = 200;
/** Most ids in one `IN (…)` list. */
const IN_CHUNK = 500;

/** The row locks of the removal protocol (the dialect's `forShare` and `forUpdate`; `""` where the write lock covers them). */
export interface MediaLocks {
  readonly forShare: string;
  readonly forUpdate: string;
}

/**
 * Indexes the attachments of messages just inserted (`ids[i]` is the id of the message whose
 * attachments are `lists[i]`); `encode` is the dialect's free-text encoding. Returns how many
 * rows it wrote.
 */
export function* indexAttachments(
  sessionId: string,
  ids: readonly number[],
  lists: readonly (readonly AttachmentRef[])[],
  encode: (value: string | null) => string | null,
  locks: MediaLocks,
): Steps<number> {
  const rows: unknown[][] = [];
  for (let i = 0; i < ids.length; i++) {
    const refs = lists[i] ?? [];
    refs.forEach((ref, position) => {
      rows.push([ids[i], position, sessionId, ref.sha256, ref.kind, ref.mimeType, ref.size, encode(ref.fileName ?? null), JSON.stringify(ref)]);
    });
  }
  if (rows.length === 0) return 0;
  if (locks.forShare !== "") {
    const blobs = [...new Set(rows.map((r) => r[3] as string))].sort();
    for (let i = 0; i < blobs.length; i += IN_CHUNK) {
      const chunk = blobs.slice(i, i + IN_CHUNK);
      yield* column(`SELECT sha256 FROM media WHERE sha256 IN (${placeholders(chunk.length)}) ORDER BY sha256${locks.forShare}`, chunk);
    }
  }
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    yield* run(
      `INSERT INTO message_attachments (message_id, position, session_id, sha256, kind, mime_type, size, file_name, attachment)
       VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`,
      chunk.flat(),
    );
  }
  return rows.length;
}

/** The blobs the messages of these sessions refer to (before they are deleted). */
export function* blobsOfSessions(sessionIds: readonly string[]): Steps<string[]> {
  const found = new Set<string>();
  for (let i = 0; i < sessionIds.length; i += IN_CHUNK) {
    const chunk = sessionIds.slice(i, i + IN_CHUNK);
    for (const sha of yield* column<string>(`SELECT DISTINCT sha256 FROM message_attachments WHERE session_id IN (${placeholders(chunk.length)})`, chunk)) {
      found.add(sha);
    }
  }
  return [...found];
}

/**
 * Removes those of `candidates` that nothing refers to any more and were stored (or renewed)
 * before `before` (their chunks go by cascade); returns how many.
 */
export function* dropUnreferenced(candidates: readonly string[], before: number, locks: MediaLocks): Steps<number> {
  let removed = 0;
  const sorted = [...candidates].sort();
  for (let i = 0; i < sorted.length; i += IN_CHUNK) {
    const chunk = sorted.slice(i, i + IN_CHUNK);
    let old = chunk;
    if (locks.forUpdate !== "") {
      old = yield* column<string>(
        `SELECT sha256 FROM media WHERE sha256 IN (${placeholders(chunk.length)}) AND touched_at < ? ORDER BY sha256${locks.forUpdate}`,
        [...chunk, before],
      );
      if (old.length === 0) continue;
    }
    removed += yield* run(
      `DELETE FROM media WHERE sha256 IN (${placeholders(old.length)}) AND touched_at < ?
         AND NOT EXISTS (SELECT 1 FROM message_attachments a WHERE a.sha256 = media.sha256)`,
      [...old, before],
    );
  }
  return removed;
}

/** A `message_attachments` row joined with whether its blob is stored. */
interface AttachmentRow {
  session_id: string;
  message_id: number | string;
  attachment: string;
  stored: number | boolean | string;
}

const ATTACHMENT_SELECT = `SELECT a.session_id, a.message_id, a.attachment,
    CASE WHEN EXISTS (SELECT 1 FROM media b WHERE b.sha256 = a.sha256) THEN 1 ELSE 0 END AS stored
  FROM message_attachments a`;

function toSessionAttachment(row: AttachmentRow): SessionAttachment {
  const ref = JSON.parse(row.attachment) as AttachmentRef;
  return { ...ref, sessionId: row.session_id, messageId: Number(row.message_id), stored: Number(row.stored) === 1 };
}

/** The attachments of a session's visible messages, oldest first. */
export function* sessionAttachments(sessionId: string): Steps<SessionAttachment[]> {
  const rows = yield* all<AttachmentRow>(
    `${ATTACHMENT_SELECT} JOIN messages m ON m.id = a.message_id
      WHERE a.session_id = ? AND m.rewound_at IS NULL ORDER BY a.message_id, a.position`,
    [sessionId],
  );
  return rows.map(toSessionAttachment);
}

/** The newest reference of the session's messages (rewound ones included) to the blob, or `null`. */
export function* sessionAttachment(sessionId: string, sha256: string): Steps<SessionAttachment | null> {
  const rows = yield* all<AttachmentRow>(`${ATTACHMENT_SELECT} WHERE a.session_id = ? AND a.sha256 = ? ORDER BY a.message_id DESC, a.position DESC LIMIT 1`, [
    sessionId,
    sha256,
  ]);
  return rows.length === 0 ? null : toSessionAttachment(rows[0]!);
}
