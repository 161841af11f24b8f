/**
 * Title rules inside a write: a title is unique, except that a compression continuation
 * takes its ancestor's title over.
 *
 * @module
 */
import { ConflictError } from "../errors.js";
import { COMPRESSION, sessionRow } from "./lineage-steps.js";
import { one, run, type Steps } from "./steps.js";

/**
 * Throws unless `title` is free for session `forId` (whose parent is `parentId`). A title
 * held by a compression ancestor (reached through parents that all ended with reason
 * `compression`) moves to the continuation instead.
 */
export function* claimTitle(title: string, forId: string, parentId: string | null): Steps<void> {
  const holder = yield* one<{ id: string }>("SELECT id FROM sessions WHERE title = ?", [title]);
  if (holder === undefined || holder.id === forId) return;
  let isCompressionAncestor = false;
  const seen = new Set<string>([forId]);
  for (let up = parentId === null ? undefined : yield* sessionRow(parentId); up !== undefined; ) {
    if (up.end_reason !== COMPRESSION || seen.has(up.id)) break;
    if (up.id === holder.id) {
      isCompressionAncestor = true;
      break;
    }
    seen.add(up.id);
    up = up.parent_session_id === null ? undefined : yield* sessionRow(up.parent_session_id);
  }
  if (isCompressionAncestor) {
    yield* run("UPDATE sessions SET title = NULL, title_base = NULL, title_n = NULL WHERE id = ?", [holder.id]);
    return;
  }
  throw new ConflictError(`The title "${title}" is already used by session ${holder.id}. Choose another title, or rename that session first.`, {
    sessionId: holder.id,
  });
}
