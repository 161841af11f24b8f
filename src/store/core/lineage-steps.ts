/**
 * Lineage, once for every backend: walking parents and children (cycle-safe), and keeping
 * the denormalised chain columns the listing sorts on up to date: `chain_started_at` (the
 * start time of the compression chain's root) and `list_hidden` (1 for a session that ended
 * with reason `compression` and has a continuation: the chain is listed once, as its tip).
 *
 * @module
 */
import type { SessionRow } from "../session-rows.js";
import { column, one, all, run, type Steps } from "./steps.js";

/** The end reason that makes a child the continuation of its parent. */
export const COMPRESSION = "compression";

/**
 * Reads one session row. `lockSuffix` (a dialect's `forUpdate`, or `""`) holds the row until
 * the transaction ends where the database needs an explicit row lock.
 */
export function* sessionRow(id: string, lockSuffix = ""): Steps<SessionRow | undefined> {
  return yield* one<SessionRow>(`SELECT * FROM sessions WHERE id = ?${lockSuffix}`, [id]);
}

/** Ids of a session's children, newest first. */
export function* childIds(id: string): Steps<string[]> {
  return yield* column<string>("SELECT id FROM sessions WHERE parent_session_id = ? ORDER BY started_at DESC, id DESC", [id]);
}

/** Parent, grandparent, … up to the root; stops at a cycle. */
export function* ancestorRows(id: string): Steps<SessionRow[]> {
  const seen = new Set<string>([id]);
  const out: SessionRow[] = [];
  let parentId = (yield* sessionRow(id))?.parent_session_id ?? null;
  while (parentId !== null && !seen.has(parentId)) {
    seen.add(parentId);
    const row = yield* sessionRow(parentId);
    if (row === undefined) break;
    out.push(row);
    parentId = row.parent_session_id;
  }
  return out;
}

/** Every descendant, breadth first; each visited once. */
export function* descendantRows(id: string): Steps<SessionRow[]> {
  const seen = new Set<string>([id]);
  const out: SessionRow[] = [];
  const queue = [id];
  while (queue.length > 0) {
    const current = queue.shift()!;
    const children = yield* all<SessionRow>("SELECT * FROM sessions WHERE parent_session_id = ? ORDER BY started_at, id", [current]);
    for (const child of children) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      out.push(child);
      queue.push(child.id);
    }
  }
  return out;
}

/** Follows continuations of compression-ended sessions (newest child) to the live end of the chain. */
export function* compressionTip(id: string): Steps<string> {
  const seen = new Set<string>();
  let current = id;
  for (;;) {
    seen.add(current);
    const row = yield* sessionRow(current);
    if (row === undefined || row.end_reason !== COMPRESSION) return current;
    const next = (yield* childIds(current))[0];
    if (next === undefined || seen.has(next)) return current;
    current = next;
  }
}

/**
 * Recomputes the chain columns of `id` and everything below it. Called after any change of
 * parent links or end reasons; cost is the size of the subtree.
 */
export function* refreshChain(id: string): Steps<void> {
  const seen = new Set<string>();
  const queue = [id];
  while (queue.length > 0) {
    const current = queue.shift()!;
    if (seen.has(current)) continue;
    seen.add(current);
    const row = yield* sessionRow(current);
    if (row === undefined) continue;
    const parent = row.parent_session_id === null ? undefined : yield* sessionRow(row.parent_session_id);
    const chainStart = parent !== undefined && parent.end_reason === COMPRESSION ? parent.chain_started_at : row.started_at;
    const children = yield* childIds(current);
    const hidden = row.end_reason === COMPRESSION && children.length > 0 ? 1 : 0;
    if (chainStart !== row.chain_started_at || hidden !== row.list_hidden) {
      yield* run("UPDATE sessions SET chain_started_at = ?, list_hidden = ? WHERE id = ?", [chainStart, hidden, current]);
    }
    queue.push(...children);
  }
}
