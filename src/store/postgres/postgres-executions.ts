/**
 * Execution sessions (`executions`, `execution_counts`) on PostgreSQL: the statements
 * behind writeExecutions, getExecution, findExecutions, listExecutions and
 * listExecutionUnits. Every read walks an index range; listing totals come from
 * `execution_counts`, kept on write.
 *
 * Race safety: a write first takes a transaction-scoped advisory lock per id it puts or
 * deletes and per parent it names (in id order), so writers of the same records (from any
 * process) queue up, and each checks versions and recomputes a unit's age on committed
 * data. Counter rows are updated in key order.
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
import type { Sql } from "./postgres-connection.js";

async function summaryRow(sql: Sql, id: string): Promise<ExecutionRow | undefined> {
  return sql.one<ExecutionRow>(`SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE id = $1`, [id]);
}

/** The record with its result, or `null`. */
export async function getExecution(sql: Sql, id: string): Promise<ExecutionRecord | null> {
  const row = await sql.one<ExecutionRow>("SELECT * FROM executions WHERE id = $1", [id]);
  return row === undefined ? null : toExecutionRecord(row);
}

/** Applies a checked change (inside a write transaction); `null` (nothing written) when a version expectation fails. */
export async function writeExecutions(sql: Sql, change: CheckedExecutionChange): Promise<ExecutionChangeResult | null> {
  const lockIds = new Set<string>([...change.put.map((w) => w.id), ...change.delete]);
  for (const w of change.put) if (w.parentId !== null) lockIds.add(w.parentId);
  for (const id of [...lockIds].sort()) {
    await sql.run("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`threadline.execution:${id}`]);
  }
  for (const w of change.put) {
    if (w.expectedVersion === undefined) continue;
    const current = await summaryRow(sql, w.id);
    if (w.expectedVersion === null ? current !== undefined : current?.version !== w.expectedVersion) return null;
  }
  const deltas = new ExecutionCountDeltas();
  const units = new Set<string>();
  for (const w of change.put) {
    const current = await summaryRow(sql, w.id);
    if (w.parentId !== null) {
      const parent = await summaryRow(sql, w.parentId);
      if (parent === undefined) throw new NotFoundError(`The workflow "${w.parentId}" (parent of "${w.id}") does not exist.`);
      if (parent.kind !== "workflow" || parent.parent_id !== null) {
        throw new InvalidInputError(`"${w.parentId}" is not a top-level workflow, so "${w.id}" cannot be its step.`, {
          field: "parentId",
        });
      }
    }
    if (current !== undefined && (w.kind !== "workflow" || w.parentId !== null) && (await hasSteps(sql, w.id))) {
      throw new InvalidInputError(`"${w.id}" has steps, so it must stay a top-level workflow.`, { field: "kind" });
    }
    const isStep = w.parentId === null ? 0 : 1;
    await sql.run(
      `INSERT INTO executions (id, kind, name, base_id, parent_id, user_id, created_at, updated_at, unit_updated_at,
                               result, message_count, agents_involved, version, is_step)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13)
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
    const current = await summaryRow(sql, id);
    if (current === undefined) continue;
    const steps = await sql.all<ExecutionRow>(
      `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE parent_id = $1 ORDER BY id`,
      [id],
    );
    if (steps.length > 0) await sql.run("DELETE FROM executions WHERE parent_id = $1", [id]);
    await sql.run("DELETE FROM executions WHERE id = $1", [id]);
    for (const step of steps) deltas.remove(step);
    deltas.remove(current);
    deleted.push(id, ...steps.map((s) => s.id));
    if (current.parent_id !== null) units.add(current.parent_id);
  }

  for (const id of [...units].sort()) {
    await sql.run(
      `UPDATE executions SET unit_updated_at =
         greatest(updated_at, coalesce((SELECT max(s.updated_at) FROM executions s WHERE s.parent_id = executions.id), updated_at))
       WHERE id = $1 AND parent_id IS NULL`,
      [id],
    );
  }
  for (const [key, n] of deltas.entries()) {
    await sql.run(
      "INSERT INTO execution_counts (key, n) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET n = execution_counts.n + excluded.n",
      [key, n],
    );
    await sql.run("DELETE FROM execution_counts WHERE key = $1 AND n = 0", [key]);
  }

  const stored: ExecutionSummary[] = [];
  for (const w of change.put) {
    const row = await summaryRow(sql, w.id);
    if (row !== undefined) stored.push(toExecutionSummary(row));
  }
  return { stored, deleted };
}

async function hasSteps(sql: Sql, id: string): Promise<boolean> {
  return (await sql.one("SELECT 1 FROM executions WHERE parent_id = $1 LIMIT 1", [id])) !== undefined;
}

/** Records by id prefix, base id or parent, in id order. */
export async function findExecutions(sql: Sql, q: CheckedFindExecutions): Promise<ExecutionSummary[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  const parentWhere: string[] = [];
  if (q.by === "idPrefix") {
    const low = params.push(q.value);
    const high = params.push(prefixUpperBound(q.value));
    where.push(`e.id >= $${low} AND e.id < $${high}`);
    parentWhere.push(`p.id >= $${low} AND p.id < $${high}`);
  } else if (q.by === "baseId") {
    const base = params.push(q.value);
    where.push(`e.base_id = $${base}`);
    parentWhere.push(`p.base_id = $${base}`);
  } else {
    where.push(`e.parent_id = $${params.push(q.value)}`);
  }
  if (q.userId !== null) {
    const user = params.push(q.userId);
    where.push(`e.user_id = $${user}`);
    parentWhere.push(`p.user_id = $${user}`);
  }
  if (q.withoutStepsOfMatches && q.by !== "parentId") {
    where.push(`NOT EXISTS (SELECT 1 FROM executions p WHERE p.id = e.parent_id AND ${parentWhere.join(" AND ")})`);
  }
  const rows = await sql.all<ExecutionRow>(
    `SELECT ${EXECUTION_SUMMARY_COLUMNS.split(", ").map((c) => `e.${c}`).join(", ")} FROM executions e
      WHERE ${where.join(" AND ")} ORDER BY e.id LIMIT $${params.push(q.limit)}`,
    params,
  );
  return rows.map(toExecutionSummary);
}

/** One page of records, newest first, and the total kept for the filters. */
export async function listExecutions(sql: Sql, q: CheckedListExecutions): Promise<Page<ExecutionSummary> & { total: number }> {
  const ranges = q.directOnly ? [0] : [0, 1];
  const window = executionPageWindow(q, ranges.length);
  const rows: ExecutionRow[] = [];
  for (const isStep of ranges) {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.userId !== null) where.push(`user_id = $${params.push(q.userId)}`);
    if (q.kind !== null) where.push(`kind = $${params.push(q.kind)} AND name = $${params.push(q.name)}`);
    where.push(`is_step = $${params.push(isStep)}`);
    if (q.after !== null) where.push(`(updated_at, id) < ($${params.push(q.after.key)}, $${params.push(q.after.id)})`);
    rows.push(
      ...(await sql.all<ExecutionRow>(
        `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE ${where.join(" AND ")}
          ORDER BY updated_at DESC, id DESC LIMIT $${params.push(window.limit)} OFFSET $${params.push(window.offset)}`,
        params,
      )),
    );
  }
  const key = executionCountKey({ userId: q.userId, kind: q.kind, name: q.name, directOnly: q.directOnly });
  const total = (await sql.value<number>("SELECT n FROM execution_counts WHERE key = $1", [key])) ?? 0;
  return { ...mergeExecutionPage(rows, q, ranges.length), total: Number(total) };
}

/** Records without a parent, newest unit first. */
export async function listExecutionUnits(sql: Sql, q: CheckedListExecutionUnits): Promise<ExecutionSummary[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (q.userId !== null) where.push(`user_id = $${params.push(q.userId)}`);
  where.push("is_step = 0");
  if (q.updatedBefore !== null) where.push(`unit_updated_at < $${params.push(q.updatedBefore)}`);
  const rows = await sql.all<ExecutionRow>(
    `SELECT ${EXECUTION_SUMMARY_COLUMNS} FROM executions WHERE ${where.join(" AND ")}
      ORDER BY unit_updated_at DESC, id DESC LIMIT $${params.push(q.limit)} OFFSET $${params.push(q.offset)}`,
    params,
  );
  return rows.map(toExecutionSummary);
}
