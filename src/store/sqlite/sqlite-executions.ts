/**
 * Execution sessions (`executions`, `execution_counts`) on SQLite: the statements behind
 * writeExecutions, getExecution, findExecutions, listExecutions and listExecutionUnits.
 * Writes run inside the write queue's transaction (`BEGIN IMMEDIATE`, serialised across
 * processes), so checking versions and then writing is atomic. Every read walks an index
 * range; listing totals come from `execution_counts`, kept on write.
 *
 * @module
 */
import type { ExecutionChangeResult, ExecutionRecord, ExecutionSummary, Page } from "../contract.js";
import { InvalidInputError, NotFoundError } from "../errors.js";
import type {
  CheckedExecutionChange,
  CheckedFindExecutions,
  CheckedListExecutionUnits,
  CheckedListExecutions,
} from "../execution-input.js";
import {
  EXECUTION_SUMMARY_COLUMNS,
  ExecutionCountDeltas,
  executionCountKey,
  executionPageWindow,
  mergeExecutionPage,
  prefixUpperBound,
  toExecutionRecord,
  toExecutionSummary,
  type ExecutionRow,
} from "../execution-rows.js";
import type { SqliteConnection } from "./sqlite-connection.js";

function summaryRow(conn: SqliteConnection, id: string): ExecutionRow | undefined {
  return conn.stmt(`SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE id = ?`).get(id) as ExecutionRow | undefined;
}

/** The record with its result, or `null`. */
export function getExecution(conn: SqliteConnection, id: string): ExecutionRecord | null {
  const row = conn.stmt("SELECT * FROM executions WHERE id = ?").get(id) as ExecutionRow | undefined;
  return row === undefined ? null : toExecutionRecord(row);
}

/** Applies a checked change (inside a write); `null` (nothing written) when a version expectation fails. */
export function writeExecutions(conn: SqliteConnection, change: CheckedExecutionChange): ExecutionChangeResult | null {
  for (const w of change.put) {
    if (w.expectedVersion === undefined) continue;
    const current = summaryRow(conn, w.id);
    if (w.expectedVersion === null ? current !== undefined : current?.version !== w.expectedVersion) return null;
  }
  const deltas = new ExecutionCountDeltas();
  const units = new Set<string>();
  const upsert = conn.stmt(
    `INSERT INTO executions (id, kind, name, base_id, parent_id, user_id, created_at, updated_at, unit_updated_at,
                             result, message_count, agents_involved, version, is_step)
     VALUES (@id, @kind, @name, @baseId, @parentId, @userId, @createdAt, @updatedAt, @updatedAt,
             @result, @messageCount, @agents, @version, @isStep)
     ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, name = excluded.name, base_id = excluded.base_id,
       parent_id = excluded.parent_id, user_id = excluded.user_id, updated_at = excluded.updated_at,
       unit_updated_at = excluded.unit_updated_at, result = excluded.result, message_count = excluded.message_count,
       agents_involved = excluded.agents_involved, version = excluded.version, is_step = excluded.is_step`,
  );
  for (const w of change.put) {
    const current = summaryRow(conn, w.id);
    if (w.parentId !== null) {
      const parent = summaryRow(conn, w.parentId);
      if (parent === undefined) throw new NotFoundError(`The workflow "${w.parentId}" (parent of "${w.id}") does not exist.`);
      if (parent.kind !== "workflow" || parent.parent_id !== null) {
        throw new InvalidInputError(`"${w.parentId}" is not a top-level workflow, so "${w.id}" cannot be its step.`, {
          field: "parentId",
        });
      }
    }
    if (current !== undefined && (w.kind !== "workflow" || w.parentId !== null) && hasSteps(conn, w.id)) {
      throw new InvalidInputError(`"${w.id}" has steps, so it must stay a top-level workflow.`, { field: "kind" });
    }
    const row = {
      id: w.id,
      kind: w.kind,
      name: w.name,
      base_id: w.baseId,
      parent_id: w.parentId,
      user_id: w.userId,
      is_step: w.parentId === null ? 0 : 1,
    };
    upsert.run({
      id: w.id,
      kind: w.kind,
      name: w.name,
      baseId: w.baseId,
      parentId: w.parentId,
      userId: w.userId,
      createdAt: current?.created_at ?? w.createdAt ?? w.updatedAt,
      updatedAt: w.updatedAt,
      result: w.resultJson,
      messageCount: w.messageCount,
      agents: w.agentsJson,
      version: (current?.version ?? 0) + 1,
      isStep: row.is_step,
    });
    if (current !== undefined) {
      deltas.remove(current);
      if (current.parent_id !== null && current.parent_id !== w.parentId) units.add(current.parent_id);
    }
    deltas.add(row);
    units.add(w.parentId ?? w.id);
  }

  const deleted: string[] = [];
  const del = conn.stmt("DELETE FROM executions WHERE id = ?");
  for (const id of change.delete) {
    const current = summaryRow(conn, id);
    if (current === undefined) continue;
    const steps = conn
      .stmt(`SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE parent_id = ? ORDER BY id`)
      .all(id) as ExecutionRow[];
    for (const step of steps) {
      del.run(step.id);
      deltas.remove(step);
    }
    del.run(id);
    deltas.remove(current);
    deleted.push(id, ...steps.map((s) => s.id));
    if (current.parent_id !== null) units.add(current.parent_id);
  }

  const refreshUnit = conn.stmt(
    `UPDATE executions SET unit_updated_at =
       max(updated_at, coalesce((SELECT max(s.updated_at) FROM executions s WHERE s.parent_id = executions.id), updated_at))
     WHERE id = ? AND parent_id IS NULL`,
  );
  for (const id of units) refreshUnit.run(id);
  const count = conn.stmt(
    "INSERT INTO execution_counts (key, n) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET n = n + excluded.n",
  );
  const dropZero = conn.stmt("DELETE FROM execution_counts WHERE key = ? AND n = 0");
  for (const [key, n] of deltas.entries()) {
    count.run(key, n);
    dropZero.run(key);
  }

  const stored: ExecutionSummary[] = [];
  for (const w of change.put) {
    const row = summaryRow(conn, w.id);
    if (row !== undefined) stored.push(toExecutionSummary(row));
  }
  return { stored, deleted };
}

function hasSteps(conn: SqliteConnection, id: string): boolean {
  return conn.stmt("SELECT 1 FROM executions WHERE parent_id = ? LIMIT 1").get(id) !== undefined;
}

/** Records by id prefix, base id or parent, in id order. */
export function findExecutions(conn: SqliteConnection, q: CheckedFindExecutions): ExecutionSummary[] {
  const where: string[] = [];
  const params: unknown[] = [];
  const parentWhere: string[] = [];
  const parentParams: unknown[] = [];
  if (q.by === "idPrefix") {
    where.push("e.id >= ? AND e.id < ?");
    params.push(q.value, prefixUpperBound(q.value));
    parentWhere.push("p.id >= ? AND p.id < ?");
    parentParams.push(q.value, prefixUpperBound(q.value));
  } else if (q.by === "baseId") {
    where.push("e.base_id = ?");
    params.push(q.value);
    parentWhere.push("p.base_id = ?");
    parentParams.push(q.value);
  } else {
    where.push("e.parent_id = ?");
    params.push(q.value);
  }
  if (q.userId !== null) {
    where.push("e.user_id = ?");
    params.push(q.userId);
    parentWhere.push("p.user_id = ?");
    parentParams.push(q.userId);
  }
  if (q.withoutStepsOfMatches && q.by !== "parentId") {
    where.push(`NOT EXISTS (SELECT 1 FROM executions p WHERE p.id = e.parent_id AND ${parentWhere.join(" AND ")})`);
    params.push(...parentParams);
  }
  const rows = conn
    .stmt(
      `SELECT ${EXECUTION_SUMMARY_COLUMNS.split(", ").map((c) => `e.${c}`).join(", ")} FROM executions e
        WHERE ${where.join(" AND ")} ORDER BY e.id LIMIT ?`,
    )
    .all(...params, q.limit) as ExecutionRow[];
  return rows.map(toExecutionSummary);
}

/** One page of records, newest first, and the total kept for the filters. */
export function listExecutions(conn: SqliteConnection, q: CheckedListExecutions): Page<ExecutionSummary> & { total: number } {
  const ranges = q.directOnly ? [0] : [0, 1];
  const window = executionPageWindow(q, ranges.length);
  const rows: ExecutionRow[] = [];
  for (const isStep of ranges) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.userId !== null) {
      where.push("user_id = ?");
      params.push(q.userId);
    }
    if (q.kind !== null) {
      where.push("kind = ? AND name = ?");
      params.push(q.kind, q.name);
    }
    where.push("is_step = ?");
    params.push(isStep);
    if (q.after !== null) {
      where.push("(updated_at, id) < (?, ?)");
      params.push(q.after.key, q.after.id);
    }
    rows.push(
      ...(conn
        .stmt(
          `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE ${where.join(" AND ")}
            ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`,
        )
        .all(...params, window.limit, window.offset) as ExecutionRow[]),
    );
  }
  const key = executionCountKey({ userId: q.userId, kind: q.kind, name: q.name, directOnly: q.directOnly });
  const total = (conn.stmt("SELECT n FROM execution_counts WHERE key = ?").pluck().get(key) as number | undefined) ?? 0;
  return { ...mergeExecutionPage(rows, q, ranges.length), total };
}

/** Records without a parent, newest unit first. */
export function listExecutionUnits(conn: SqliteConnection, q: CheckedListExecutionUnits): ExecutionSummary[] {
  const where = ["is_step = 0"];
  const params: unknown[] = [];
  if (q.userId !== null) {
    where.unshift("user_id = ?");
    params.push(q.userId);
  }
  if (q.updatedBefore !== null) {
    where.push("unit_updated_at < ?");
    params.push(q.updatedBefore);
  }
  const rows = conn
    .stmt(
      `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE ${where.join(" AND ")}
        ORDER BY unit_updated_at DESC, id DESC LIMIT ? OFFSET ?`,
    )
    .all(...params, q.limit, q.offset) as ExecutionRow[];
  return rows.map(toExecutionSummary);
}
