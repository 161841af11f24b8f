/**
 * Execution session ids: `agent-<8 hex>` / `workflow-<8 hex>` when none is given, the
 * kind's prefix put in front of a given id that lacks it, step and graph-node ids
 * (`<workflow id>-<step or node>`), and the structural test of "is a step of".
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { InvalidInputError, type ExecutionKind } from "../store/index.js";

/** The id prefix of each kind. */
export const EXECUTION_ID_PREFIX: Readonly<Record<ExecutionKind, string>> = { agent: "agent-", workflow: "workflow-" };

/** Longest id (as for every Threadline id). */
const MAX_ID_LENGTH = 256;
const CONTROL = /[\u0000-\u001F\u007F]/u;

/** A new id of a kind: `agent-<8 hex>` or `workflow-<8 hex>`. */
export function newExecutionId(kind: ExecutionKind): string {
  return `${EXECUTION_ID_PREFIX[kind]}${randomBytes(4).toString("hex")}`;
}

/** Checks a caller-given id (1–256 characters, no control characters, well-formed). */
export function checkExecutionId(value: unknown, field = "sessionId"): string {
  if (typeof value !== "string" || value.length === 0) {
    throw new InvalidInputError(`${field} must be a non-empty string.`, { field });
  }
  if (value.length > MAX_ID_LENGTH) {
    throw new InvalidInputError(`${field} is ${value.length} characters long; the limit is ${MAX_ID_LENGTH}.`, { field });
  }
  if (CONTROL.test(value) || !value.isWellFormed()) {
    throw new InvalidInputError(`${field} must not contain control characters or lone surrogates.`, { field });
  }
  return value;
}

/** The id a record of `kind` is stored under, and its base id. */
export interface ExecutionIdentity {
  id: string;
  baseId: string;
}

/**
 * The stored id and base id for a given id (or none):
 * - none → a new `agent-<8 hex>` / `workflow-<8 hex>`, which is its own base;
 * - an id that already has the kind's prefix (for an agent run, also a `workflow-…` id: a
 *   workflow step's) → kept, and it is its own base;
 * - any other id → the prefix in front (`run42` → `agent-run42`), with the given id as base.
 */
export function executionIdentity(kind: ExecutionKind, given?: string | null): ExecutionIdentity {
  if (given === undefined || given === null) {
    const id = newExecutionId(kind);
    return { id, baseId: id };
  }
  checkExecutionId(given);
  const kept = given.startsWith(EXECUTION_ID_PREFIX[kind]) || (kind === "agent" && given.startsWith(EXECUTION_ID_PREFIX.workflow));
  if (kept) return { id: given, baseId: given };
  const id = `${EXECUTION_ID_PREFIX[kind]}${given}`;
  if (id.length > MAX_ID_LENGTH) {
    throw new InvalidInputError(`sessionId is too long once prefixed with "${EXECUTION_ID_PREFIX[kind]}" (limit ${MAX_ID_LENGTH}).`, {
      field: "sessionId",
    });
  }
  return { id, baseId: given };
}

/** The id of step `i` (0-based) or graph node `n` of a workflow: `<workflow id>-<i or n>`. */
export function stepSessionId(workflowId: string, stepOrNode: string | number): string {
  const id = `${workflowId}-${stepOrNode}`;
  if (id.length > MAX_ID_LENGTH) {
    throw new InvalidInputError(`The step id "${id.slice(0, 40)}…" is longer than ${MAX_ID_LENGTH} characters; use a shorter node name.`, {
      field: "nodes",
    });
  }
  return id;
}

/**
 * Structural step test: `candidate` is a step of `workflow` when the workflow is a workflow,
 * both have the same base, and the candidate's id is the workflow's id followed by
 * `-<step or node>`. (Never "ends in -<digit>": `-10`, node names with dashes and unrelated
 * runs sharing the base are told apart by this rule.)
 */
export function isStepOf(candidate: { id: string; baseId: string }, workflow: { id: string; baseId: string; kind: ExecutionKind }): boolean {
  return (
    workflow.kind === "workflow" &&
    candidate.baseId === workflow.baseId &&
    candidate.id.length > workflow.id.length + 1 &&
    candidate.id.startsWith(`${workflow.id}-`)
  );
}

/**
 * The ids of the workflows `id` could be a step of, longest first: every prefix of `id`
 * that starts with `workflow-` and is followed in `id` by `-`.
 */
export function possibleWorkflowIds(id: string): string[] {
  const prefix = EXECUTION_ID_PREFIX.workflow;
  if (!id.startsWith(prefix)) return [];
  const out: string[] = [];
  for (let i = id.length - 2; i > prefix.length; i--) {
    if (id[i] === "-") out.push(id.slice(0, i));
  }
  return out;
}

/**
 * The name of a run without one: `Untitled Agent (<first 8 characters of the id>)`, or
 * `Untitled Workflow (…)`, of the id as stored, prefix included (`agent-1234567890` →
 * `Untitled Agent (agent-12)`), as Aurite names such runs.
 */
export function defaultExecutionName(kind: ExecutionKind, id: string): string {
  return `${kind === "agent" ? "Untitled Agent" : "Untitled Workflow"} (${[...id].slice(0, 8).join("")})`;
}

/**
 * A name as stored: control characters become spaces, whitespace is folded and trimmed, at
 * most 256 characters; empty or missing → {@link defaultExecutionName}.
 */
export function executionName(kind: ExecutionKind, id: string, given: unknown): string {
  if (typeof given !== "string") return defaultExecutionName(kind, id);
  const clean = given
    .toWellFormed()
    .replace(/[\u0000-\u001F\u007F]/gu, " ")
    .replace(/\s+/gu, " ")
    .trim();
  if (clean === "") return defaultExecutionName(kind, id);
  return clean.length > MAX_ID_LENGTH ? clean.slice(0, MAX_ID_LENGTH).toWellFormed() : clean;
}
