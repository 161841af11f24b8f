/**
 * Small reads shared by the executions library: one record's summary without its result,
 * and the workflow an id is structurally a step of.
 *
 * @module
 */
import type { ExecutionSummary, ExecutionStore } from "../store/index.js";
import { possibleWorkflowIds } from "./execution-id.js";

/** The summary of one record (without reading its result), or `null`. */
export async function summaryOf(db: ExecutionStore, id: string): Promise<ExecutionSummary | null> {
  const [first] = await db.findExecutions({ idPrefix: id, limit: 1 });
  return first !== undefined && first.id === id ? first : null;
}

/**
 * The existing top-level workflow whose id followed by `-<step or node>` is `id` (the
 * longest such id), or `null`. With `baseId`, only a workflow with that base qualifies.
 */
export async function workflowFor(db: ExecutionStore, id: string, baseId?: string): Promise<ExecutionSummary | null> {
  for (const candidate of possibleWorkflowIds(id)) {
    const found = await summaryOf(db, candidate);
    if (found === null || found.kind !== "workflow" || found.parentId !== null) continue;
    if (baseId !== undefined && found.baseId !== baseId) continue;
    return found;
  }
  return null;
}
