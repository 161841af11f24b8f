/**
 * Lineage on PostgreSQL: walking parents and children (cycle-safe), and keeping the
 * denormalised chain columns the listing sorts on up to date (`chain_started_at`,
 * `list_hidden`), exactly as the SQLite backend does.
 *
 * @module
 */
import type { Sql } from "./postgres-connection.js";
import type { SessionRow } from "./postgres-rows.js";

/** The end reason that makes a child the continuation of its parent. */
export const COMPRESSION = "compression";

/** Reads one session row (`lock`: FOR UPDATE). */
export async function sessionRow(sql: Sql, id: string, lock = false): Promise<SessionRow | undefined> {
  return sql.one<SessionRow>(`SELECT * FROM sessions WHERE id = $1${lock ? " FOR UPDATE" : ""}`, [id]);
}

/** Ids of a session's children, newest first. */
export async function childIds(sql: Sql, id: string): Promise<string[]> {
  return sql.column<string>("SELECT id FROM sessions WHERE parent_session_id = $1 ORDER BY started_at DESC, id DESC", [id]);
}

/** Parent, grandparent, … up to the root; stops at a cycle. */
export async function ancestorRows(sql: Sql, id: string): Promise<SessionRow[]> {
  const seen = new Set<string>([id]);
  const out: SessionRow[] = [];
  let parentId = (await sessionRow(sql, id))?.parent_session_id ?? null;
  while (parentId !== null && !seen.has(parentId)) {
    seen.add(parentId);
    const row = await sessionRow(sql, parentId);
    if (row === undefined) break;
    out.push(row);
    parentId = row.parent_session_id;
  }
  return out;
}

/** Every descendant, breadth first; each visited once. */
export async function descendantRows(sql: Sql, id: string): Promise<SessionRow[]> {
  const seen = new Set<string>([id]);
  const out: SessionRow[] = [];
  const queue = [id];
  while (queue.length > 0) {
    const current = queue.shift()!;
    const children = await sql.all<SessionRow>(
      "SELECT * FROM sessions WHERE parent_session_id = $1 ORDER BY started_at, id",
      [current],
    );
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
export async function compressionTip(sql: Sql, id: string): Promise<string> {
  const seen = new Set<string>();
  let current = id;
  for (;;) {
    seen.add(current);
    const row = await sessionRow(sql, current);
    if (row === undefined || row.end_reason !== COMPRESSION) return current;
    const next = (await childIds(sql, current))[0];
    if (next === undefined || seen.has(next)) return current;
    current = next;
  }
}

/** Recomputes the chain columns of `id` and everything below it (after parent links or end reasons changed). */
export async function refreshChain(sql: Sql, id: string): Promise<void> {
  const seen = new Set<string>();
  const queue = [id];
  while (queue.length > 0) {
    const current = queue.shift()!;
    if (seen.has(current)) continue;
    seen.add(current);
    const row = await sessionRow(sql, current);
    if (row === undefined) continue;
    const parent = row.parent_session_id === null ? undefined : await sessionRow(sql, row.parent_session_id);
    const chainStart =
      parent !== undefined && parent.end_reason === COMPRESSION ? parent.chain_started_at : row.started_at;
    const children = await childIds(sql, current);
    const hidden = row.end_reason === COMPRESSION && children.length > 0 ? 1 : 0;
    if (chainStart !== row.chain_started_at || hidden !== row.list_hidden) {
      await sql.run("UPDATE sessions SET chain_started_at = $1, list_hidden = $2 WHERE id = $3", [chainStart, hidden, current]);
    }
    queue.push(...children);
  }
}
