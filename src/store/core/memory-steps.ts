/**
 * Per-person memory (`memories`), once for every backend: the statements behind the
 * `MemoryStore` methods. A write is one guarded statement (an insert that does nothing when
 * the record exists, or an update that holds only at the expected version), so of concurrent
 * writers at one version exactly one wins, in any process, without a lock.
 *
 * @module
 */
import type { MemoryKind, MemoryOwner, MemoryRecord, Page } from "../contract.js";
import { encodeCursor } from "../cursor.js";
import {
  MEMORY_COLUMNS,
  MEMORY_LIST_ORDER,
  memoryCursorId,
  parseMemoryCursorId,
  toMemoryRecord,
  type CheckedListMemories,
  type CheckedMemoryWrite,
  type MemoryRow,
} from "../memory-input.js";
import { all, one, run, type Steps } from "./steps.js";

/** `getMemory`. */
export function* getMemory(owner: MemoryOwner, kind: MemoryKind): Steps<MemoryRecord | null> {
  const row = yield* one<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories WHERE platform = ? AND user_id = ? AND kind = ?`, [
    owner.platform,
    owner.userId,
    kind,
  ]);
  return row === undefined ? null : toMemoryRecord(row);
}

/** `writeMemory`: one guarded statement; `null` when the expected version did not hold. */
export function* writeMemory(w: CheckedMemoryWrite): Steps<MemoryRecord | null> {
  const entries = JSON.stringify(w.entries);
  const version = w.expectedVersion === null ? 1 : w.expectedVersion + 1;
  const changed =
    w.expectedVersion === null
      ? yield* run(`INSERT INTO memories (${MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (platform, user_id, kind) DO NOTHING`, [
          w.owner.platform,
          w.owner.userId,
          w.kind,
          entries,
          w.chars,
          w.now,
          version,
        ])
      : yield* run(
          `UPDATE memories SET entries = ?, chars = ?, updated_at = ?, version = ?
            WHERE platform = ? AND user_id = ? AND kind = ? AND version = ?`,
          [entries, w.chars, w.now, version, w.owner.platform, w.owner.userId, w.kind, w.expectedVersion],
        );
  if (changed === 0) return null;
  return { owner: { ...w.owner }, kind: w.kind, entries: [...w.entries], chars: w.chars, updatedAt: w.now, version };
}

/** `clearMemory`: one kind or both; how many records went. */
export function* clearMemory(owner: MemoryOwner, kind: MemoryKind | null): Steps<number> {
  return kind === null
    ? yield* run("DELETE FROM memories WHERE platform = ? AND user_id = ?", [owner.platform, owner.userId])
    : yield* run("DELETE FROM memories WHERE platform = ? AND user_id = ? AND kind = ?", [owner.platform, owner.userId, kind]);
}

/** `listMemories`: newest first (then by key, descending), keyset-paged. */
export function* listMemories(q: CheckedListMemories): Steps<Page<MemoryRecord>> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.userId !== null) {
    where.push("user_id = ?");
    params.push(q.userId);
  }
  if (q.platform !== null) {
    where.push("platform = ?");
    params.push(q.platform);
  }
  if (q.after !== null) {
    const [platform, userId, kind] = parseMemoryCursorId(q.after.id);
    where.push("(updated_at, platform, user_id, kind) < (?, ?, ?, ?)");
    params.push(q.after.key, platform, userId, kind);
  }
  const rows = yield* all<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""}
      ORDER BY updated_at DESC, platform DESC, user_id DESC, kind DESC LIMIT ?`,
    [...params, q.limit + 1],
  );
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > q.limit && last !== undefined ? encodeCursor({ order: MEMORY_LIST_ORDER, key: Number(last.updated_at), id: memoryCursorId(last) }) : null;
  return { items: page.map(toMemoryRecord), nextCursor };
}
