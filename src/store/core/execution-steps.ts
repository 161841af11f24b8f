/**
 * Execution sessions (`executions`, `execution_counts`), once for every backend: the
 * statements behind writeExecutions, getExecution, findExecutions, listExecutions and
 * listExecutionUnits. Every read walks an index range; listing totals come from
 * `execution_counts`, kept on write.
 *
 * Race safety: a write first takes the dialect's writer lock on every id it puts or deletes
 * and every parent it names (`lockExecutions`, in id order), so writers of the same records
 * (from any process) queue up, and each checks versions and recomputes a unit's age on
 * committed data. Counter rows are updated in key order.
 *
 * @module
 */
import type { ExecutionChangeResult, ExecutionRecord, ExecutionSummary, Page } from "../contract.js";
import { InvalidInputError, NotFoundError } from "../errors.js";
import type { CheckedExecutionChange, CheckedFindExecutions, CheckedListExecutionUnits, CheckedListExecutions } from "../execution-input.js";
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
import { all, one, run, value, type Steps } from "./steps.js";

function* summaryRow(id: string): Steps<ExecutionRow | undefined> {
  return yield* one<ExecutionRow>(`SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE id = ?`, [id]);
}

function* hasSteps(id: string): Steps<boolean> {
  return (yield* one("SELECT 1 FROM executions WHERE parent_id = ? LIMIT 1", [id])) !== undefined;
}

/** Every id a change writes or names as a parent, in the order their locks are taken. */
export function executionLockIds(change: CheckedExecutionChange): string[] {
  const ids = new Set<string>([...change.put.map((w) => w.id), ...change.delete]);
  for (const w of change.put) if (w.parentId !== null) ids.add(w.parentId);
  return [...ids].sort();
}

/** The record with its result, or `null`. */
export function* getExecution(id: string): Steps<ExecutionRecord | null> {
  const row = yield* one<ExecutionRow>("SELECT * FROM executions WHERE id = ?", [id]);
  return row === undefined ? null : toExecutionRecord(row);
}

/**
 * Applies a checked change (inside a write, after the ids' locks); `null` (nothing written)
 * when a version expectation fails. `greatest` is the dialect's two-argument maximum function.
 */
export function* writeExecutions(change: CheckedExecutionChange, greatest: string): Steps<ExecutionChangeResult | null> {
  for (const w of change.put) {
    if (w.expectedVersion === undefined) continue;
    const current = yield* summaryRow(w.id);
    if (w.expectedVersion === null ? current !== undefined : current?.version !== w.expectedVersion) return null;
  }
  const deltas = new ExecutionCountDeltas();
  const units = new Set<string>();
  for (const w of change.put) {
    const current = yield* summaryRow(w.id);
    if (w.parentId !== null) {
      const parent = yield* summaryRow(w.parentId);
      if (parent === undefined) throw new NotFoundError(`The workflow "${w.parentId}" (parent of "${w.id}") does not exist.`);
      if (parent.kind !== "workflow" || parent.parent_id !== null) {
        throw new InvalidInputError(`"${w.parentId}" is not a top-level workflow, so "${w.id}" cannot be its step.`, {
          field: "parentId",
        });
      }
    }
    if (current !== undefined && (w.kind !== "workflow" || w.parentId !== null) && (yield* hasSteps(w.id))) {
      throw new InvalidInputError(`"${w.id}" has steps, so it must stay a top-level workflow.`, { field: "kind" });
    }
    const isStep = w.parentId === null ? 0 : 1;
    yield* run(
      `INSERT INTO executions (id, kind, name, base_id, parent_id, user_id, created_at, updated_at, unit_updated_at,
                               result, message_count, agents_involved, version, is_step)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, name = excluded.name, base_id = excluded.base_id,
         parent_id = excluded.parent_id, user_id = excluded.user_id, updated_at = excluded.updated_at,
         unit_updated_at = excluded.unit_updated_at, result = excluded.result, message_count = excluded.message_count,
         agents_involved = excluded.agents_involved, version = excluded.version, is_step = excluded.is_step`,
      [
        w.id,
        w.kind,
        w.name,
        w.baseId,
        w.parentId,
        w.userId,
        current?.created_at ?? w.createdAt ?? w.updatedAt,
        w.updatedAt,
        w.updatedAt,
        w.resultJson,
        w.messageCount,
        w.agentsJson,
        Number(current?.version ?? 0) + 1,
        isStep,
      ],
    );
    if (current !== undefined) {
      deltas.remove(current);
      if (current.parent_id !== null && current.parent_id !== w.parentId) units.add(current.parent_id);
    }
    deltas.add({ kind: w.kind, name: w.name, user_id: w.userId, is_step: isStep });
    units.add(w.parentId ?? w.id);
  }

  const deleted: string[] = [];
  for (const id of change.delete) {
    const current = yield* summaryRow(id);
    if (current === undefined) continue;
    const steps = yield* all<ExecutionRow>(`SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE parent_id = ? ORDER BY id`, [id]);
    if (steps.length > 0) yield* run("DELETE FROM executions WHERE parent_id = ?", [id]);
    yield* run("DELETE FROM executions WHERE id = ?", [id]);
    for (const step of steps) deltas.remove(step);
    deltas.remove(current);
    deleted.push(id, ...steps.map((s) => s.id));
    if (current.parent_id !== null) units.add(current.parent_id);
  }

  for (const id of [...units].sort()) {
    yield* run(
      `UPDATE executions SET unit_updated_at =
         ${greatest}(updated_at, coalesce((SELECT max(s.updated_at) FROM executions s WHERE s.parent_id = executions.id), updated_at))
       WHERE id = ? AND parent_id IS NULL`,
      [id],
    );
  }
  for (const [key, n] of deltas.entries()) {
    yield* run("INSERT INTO execution_counts (key, n) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET n = execution_counts.n + excluded.n", [key, n]);
    yield* run("DELETE FROM execution_counts WHERE key = ? AND n = 0", [key]);
  }

  const stored: ExecutionSummary[] = [];
  for (const w of change.put) {
    const row = yield* summaryRow(w.id);
    if (row !== undefined) stored.push(toExecutionSummary(row));
  }
  return { stored, deleted };
}

/** Records by id prefix, base id or parent, in id order. */
export function* findExecutions(q: CheckedFindExecutions): Steps<ExecutionSummary[]> {
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
  const rows = yield* all<ExecutionRow>(
    `SELECT ${EXECUTION_SUMMARY_COLUMNS.split(", ")
      .map((c) => `e.${c}`)
      .join(", ")} FROM executions e
      WHERE ${where.join(" AND ")} ORDER BY e.id LIMIT ?`,
    [...params, q.limit],
  );
  return rows.map(toExecutionSummary);
}

/** One page of records, newest first, and the total kept for the filters. */
export function* listExecutions(q: CheckedListExecutions): Steps<Page<ExecutionSummary> & { total: number }> {
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
      ...(yield* all<ExecutionRow>(
        `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE ${where.join(" AND ")}
          ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?`,
        [...params, window.limit, window.offset],
      )),
    );
  }
  const key = executionCountKey({ userId: q.userId, kind: q.kind, name: q.name, directOnly: q.directOnly });
  const total = (yield* value<number>("SELECT n FROM execution_counts WHERE key = ?", [key])) ?? 0;
  return { ...mergeExecutionPage(rows, q, ranges.length), total: Number(total) };
}

/** Records without a parent, newest unit first. */
export function* listExecutionUnits(q: CheckedListExecutionUnits): Steps<ExecutionSummary[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.userId !== null) {
    where.push("user_id = ?");
    params.push(q.userId);
  }
  where.push("is_step = 0");
  if (q.updatedBefore !== null) {
    where.push("unit_updated_at < ?");
    params.push(q.updatedBefore);
  }
  const rows = yield* all<ExecutionRow>(
    `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE ${where.join(" AND ")}
      ORDER BY unit_updated_at DESC, id DESC LIMIT ? OFFSET ?`,
    [...params, q.limit, q.offset],
  );
  return rows.map(toExecutionSummary);
}
