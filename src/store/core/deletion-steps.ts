/**
 * Deleting sessions, once for every backend: removing a set of session rows (their
 * messages, tallies and handoffs go with them by cascade; children are detached) and the
 * chain columns of every surviving relative refreshed, and one batch of a prune.
 *
 * A prune runs as a series of {@link pruneBatch} writes, each its own transaction through
 * the backend's normal write path, so no single transaction holds the write lock for long
 * and other writers run between batches. Each batch selects its sessions again under the
 * lock (same rule: ended, last activity strictly older than the cutoff, the sources
 * filter), so a session reopened meanwhile is never deleted; batches walk the ids in
 * order, so each session is looked at once.
 *
 * @module
 */
import { MEDIA_GRACE_SECONDS } from "../contract.js";
import type { SessionRow } from "../session-rows.js";
import { blobsOfSessions, dropUnreferenced } from "./attachment-steps.js";
import { now } from "./clock.js";
import { childIds, refreshChain } from "./lineage-steps.js";
import { MEDIA_CHUNK_BYTES } from "./media-steps.js";
import { all, placeholders, run, type Steps } from "./steps.js";
import type { StoreDialect } from "./store-dialect.js";

/** Most ids in one `IN (…)` list (well under every driver's parameter limit). */
const DELETE_CHUNK = 500;

/**
 * The work one prune batch may do. Deleting a session costs about one row per message
 * (the message, its search-index entry), so the budget counts messages (and each attachment
 * reference as one plus the chunks of its blob, which may go with it); the session cap
 * bounds batches of empty sessions. Measured on the medium benchmark data set (SQLite, 2
 * shared cores), a batch at this budget holds the write lock for well under 100 ms.
 */
export const PRUNE_BATCH = { sessions: 200, messages: 2_000 } as const;

/** What a session row must carry to be deleted. */
export type DeletableRow = Pick<SessionRow, "id" | "parent_session_id">;

/**
 * Deletes sessions (messages, their attachment references, tool tallies and handoffs go by
 * cascade; children are detached by the foreign key) and refreshes the chain columns of every
 * surviving parent and child; then removes the blobs their messages referred to that nothing
 * refers to any more, unless stored in the last {@link MEDIA_GRACE_SECONDS} before `at`. Relatives that a later batch deletes are refreshed here too (harmless), so
 * whatever survives the last batch is refreshed after its relative went.
 */
export function* deleteRows(d: StoreDialect<unknown>, rows: readonly DeletableRow[], at: number = now()): Steps<void> {
  const gone = new Set(rows.map((r) => r.id));
  const blobs = yield* blobsOfSessions([...gone]);
  const touched = new Set<string>();
  for (const row of rows) {
    for (const child of yield* childIds(row.id)) if (!gone.has(child)) touched.add(child);
    if (row.parent_session_id !== null && !gone.has(row.parent_session_id)) touched.add(row.parent_session_id);
  }
  const ids = [...gone];
  for (let i = 0; i < ids.length; i += DELETE_CHUNK) {
    const chunk = ids.slice(i, i + DELETE_CHUNK);
    yield* run(`DELETE FROM sessions WHERE id IN (${placeholders(chunk.length)})`, chunk);
  }
  for (const id of touched) yield* refreshChain(id);
  if (blobs.length > 0) yield* dropUnreferenced(blobs, at - MEDIA_GRACE_SECONDS, d);
}

/** The outcome of one {@link pruneBatch}. */
export interface PruneBatchResult {
  /** Sessions this batch deleted. */
  deleted: number;
  /** The id to continue after (the last one this batch looked at), or `null` when no session is left to look at. */
  next: string | null;
}

/** Which sessions a prune deletes, and where its batches have got to. */
export interface PruneScope {
  /** Epoch seconds: last activity strictly before this goes. */
  cutoff: number;
  /** Only these sources (`null`: all). */
  sources: readonly string[] | null;
  /** Only ids after this one (`""` for the first batch). */
  after: string;
}

/**
 * One batch of a prune: the next prunable sessions in id order after `scope.after`, as many
 * as fit {@link PRUNE_BATCH} (at least one), deleted as {@link deleteRows} does.
 */
export function* pruneBatch(d: StoreDialect<unknown>, scope: PruneScope, budget = PRUNE_BATCH): Steps<PruneBatchResult> {
  const { cutoff, sources, after } = scope;
  const filter = sources === null ? "" : ` AND source IN (${placeholders(sources.length)})`;
  // Attachments are work too: a reference row, and the chunks of a blob that may go with it.
  const rows = yield* all<DeletableRow & { message_count: number; media_work: number | string | null }>(
    `SELECT id, parent_session_id, message_count,
            (SELECT sum(1 + a.size / ${MEDIA_CHUNK_BYTES}) FROM message_attachments a WHERE a.session_id = sessions.id) AS media_work
       FROM sessions
      WHERE ended_at IS NOT NULL AND last_active_at < ?${filter} AND id > ?
      ORDER BY id LIMIT ${budget.sessions}${d.forUpdate}`,
    [cutoff, ...(sources ?? []), after],
  );
  let take = 0;
  let messages = 0;
  const work = (row: (typeof rows)[number]): number => row.message_count + Number(row.media_work ?? 0);
  while (take < rows.length && (take === 0 || messages + work(rows[take]!) <= budget.messages)) {
    messages += work(rows[take]!);
    take++;
  }
  const batch = rows.slice(0, take);
  yield* d.holdIndexMerges();
  yield* deleteRows(d, batch);
  yield* d.releaseIndexMerges();
  const more = take < rows.length || rows.length === budget.sessions;
  return { deleted: batch.length, next: more ? batch[batch.length - 1]!.id : null };
}
