/**
 * The results of runs as callers hand them in, as they are stored, and what is derived
 * from them on every save: message count, `agentsInvolved`, history. Stored results are
 * plain JSON (see safe-json.ts). Results imported from elsewhere may use the snake_case
 * names of the design we learn from (`conversation_history`, `step_results`,
 * `node_results`, `session_id`, `agent_name`); reading understands those too.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";
import { checkExecutionId, executionName, stepSessionId } from "./execution-id.js";
import { toJsonSafe, type JsonObject, type JsonValue } from "./safe-json.js";

/** One message of a run's conversation: any JSON object, usually OpenAI chat shape (`{ role, content, … }`). */
export type ExecutionMessage = { [key: string]: unknown };

/** The result of an agent run, as handed to `saveAgentResult`. Other fields are kept as given (serialised safely). */
export interface AgentRunResult {
  /** Default: `"failed"` when `error` is set, else `"completed"`. */
  status?: string | null;
  /** The agent's final answer (any value). */
  finalResponse?: unknown;
  /** The conversation, in order. */
  messages?: ExecutionMessage[] | null;
  /** What went wrong: an `Error` or anything else; never breaks the save. */
  error?: unknown;
  [key: string]: unknown;
}

/** One step (or graph node) of a workflow run. */
export interface WorkflowStepResult {
  /** The agent that ran the step (default: `Untitled Agent (…)`). */
  agentName?: string | null;
  status?: string | null;
  finalResponse?: unknown;
  messages?: ExecutionMessage[] | null;
  error?: unknown;
  [key: string]: unknown;
}

/** One node of a graph workflow, with its name. */
export interface WorkflowNodeResult extends WorkflowStepResult {
  /** The node name; the node runs as `<workflow id>-<node>`. */
  node: string;
}

/** The result of a workflow run, as handed to `saveWorkflowResult`. */
export interface WorkflowRunResult {
  status?: string | null;
  finalResponse?: unknown;
  /** Sequential steps: step `i` (0-based) runs as `<workflow id>-<i>`. */
  steps?: WorkflowStepResult[] | null;
  /**
   * Graph nodes in node order: an array of `{ node, … }`, or an object keyed by node name
   * (JavaScript puts integer-like keys first there; use the array form when order matters).
   */
  nodes?: WorkflowNodeResult[] | Record<string, WorkflowStepResult> | null;
  error?: unknown;
  [key: string]: unknown;
}

/** A stored agent result. */
export interface StoredAgentResult {
  [key: string]: JsonValue;
  status: string | null;
  finalResponse: JsonValue;
  messages: JsonValue[];
  /** The serialised error, or `null`. */
  error: JsonValue;
}

/** A stored step or node of a workflow result. */
export interface StoredStepEntry {
  [key: string]: JsonValue;
  /** The step's own session id. */
  sessionId: string;
  agentName: string;
  status: string | null;
  finalResponse: JsonValue;
  messages: JsonValue[];
  error: JsonValue;
}

/** A stored workflow result. */
export interface StoredWorkflowResult {
  [key: string]: JsonValue;
  status: string | null;
  finalResponse: JsonValue;
  /** Sequential steps in order (each with `index`). */
  steps: StoredStepEntry[];
  /** Graph nodes in node order (each with `node`). */
  nodes: StoredStepEntry[];
  error: JsonValue;
}

const ENTRY_FIELDS = ["sessionId", "agentName", "index", "node"];

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function statusOf(value: JsonValue | undefined, error: JsonValue): string | null {
  if (typeof value === "string") return value;
  return error === null ? "completed" : "failed";
}

function messagesField(value: JsonValue | undefined, field: string): JsonValue[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidInputError(`${field} must be an array of messages.`, { field });
  return value;
}

/** Validates and serialises an agent result. */
export function normalizeAgentResult(result: AgentRunResult): StoredAgentResult {
  if (!isObjectInput(result)) throw new InvalidInputError("An agent result must be an object ({ status, finalResponse, messages, error }).", { field: "result" });
  const safe = toJsonSafe(result) as JsonObject;
  const error = safe["error"] ?? null;
  return {
    ...safe,
    status: statusOf(safe["status"], error),
    finalResponse: safe["finalResponse"] ?? null,
    messages: messagesField(safe["messages"], "messages"),
    error,
  };
}

function isObjectInput(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function toEntry(value: JsonValue | undefined, sessionId: string, field: string, position: JsonObject): StoredStepEntry {
  if (!isObject(value)) throw new InvalidInputError(`${field} must be an object.`, { field });
  const error = value["error"] ?? null;
  return {
    ...value,
    ...position,
    sessionId,
    agentName: executionName("agent", sessionId, value["agentName"]),
    status: statusOf(value["status"], error),
    finalResponse: value["finalResponse"] ?? null,
    messages: messagesField(value["messages"], `${field}.messages`),
    error,
  };
}

/** Validates and serialises a workflow result; assigns each step and node its session id. */
export function normalizeWorkflowResult(result: WorkflowRunResult, workflowId: string): StoredWorkflowResult {
  if (!isObjectInput(result)) {
    throw new InvalidInputError("A workflow result must be an object ({ status, finalResponse, steps, nodes, error }).", { field: "result" });
  }
  const safe = toJsonSafe(result) as JsonObject;
  const rawSteps = safe["steps"] ?? null;
  if (rawSteps !== null && !Array.isArray(rawSteps)) throw new InvalidInputError("steps must be an array.", { field: "steps" });
  const steps = (rawSteps ?? []).map((step, i) => toEntry(step, stepSessionId(workflowId, i), `steps[${i}]`, { index: i }));

  const rawNodes = safe["nodes"] ?? null;
  let nodeList: Array<[string, JsonValue]>;
  if (rawNodes === null) nodeList = [];
  else if (Array.isArray(rawNodes)) {
    nodeList = rawNodes.map((node, i) => {
      if (!isObject(node)) throw new InvalidInputError(`nodes[${i}] must be an object with a node name.`, { field: `nodes[${i}]` });
      return [node["node"] as string, node];
    });
  } else if (isObject(rawNodes)) nodeList = Object.entries(rawNodes);
  else throw new InvalidInputError("nodes must be an array of { node, … } or an object keyed by node name.", { field: "nodes" });

  const ids = new Set(steps.map((s) => s.sessionId));
  const nodes = nodeList.map(([node, value], i) => {
    if (typeof node !== "string") throw new InvalidInputError(`nodes[${i}].node must be a node name.`, { field: `nodes[${i}].node` });
    checkExecutionId(node, `nodes[${i}].node`);
    const sessionId = stepSessionId(workflowId, node);
    if (ids.has(sessionId)) {
      throw new InvalidInputError(`The node "${node}" would run as ${sessionId}, which another step or node already uses.`, {
        field: `nodes[${i}].node`,
      });
    }
    ids.add(sessionId);
    return toEntry(value, sessionId, `nodes[${i}]`, { node });
  });
  const error = safe["error"] ?? null;
  return {
    ...safe,
    status: statusOf(safe["status"], error),
    finalResponse: safe["finalResponse"] ?? null,
    steps,
    nodes,
    error,
  };
}

/** The agent result a step's own session stores, from its entry in the workflow result. */
export function stepAgentResult(entry: StoredStepEntry): StoredAgentResult {
  const rest: JsonObject = { ...entry };
  for (const field of ENTRY_FIELDS) delete rest[field];
  return { ...rest, status: entry.status, finalResponse: entry.finalResponse, messages: entry.messages, error: entry.error };
}

// --- reading stored (or imported) results -----------------------------------

/** The conversation of an agent result (or of a step entry). */
export function messagesOf(result: JsonValue | unknown): JsonValue[] {
  if (!isObject(result as JsonValue)) return [];
  const r = result as JsonObject;
  for (const field of ["messages", "conversation_history", "history"]) {
    const value = r[field];
    if (Array.isArray(value)) return value;
  }
  return [];
}

function entryList(value: JsonValue | undefined): JsonObject[] {
  if (Array.isArray(value)) return value.filter(isObject);
  if (isObject(value)) return Object.values(value).filter(isObject);
  return [];
}

/** The step entries of a workflow result, then its node entries, in order. */
export function entriesOf(result: JsonValue | unknown): JsonObject[] {
  if (!isObject(result as JsonValue)) return [];
  const r = result as JsonObject;
  return [...entryList(r["steps"] ?? r["step_results"]), ...entryList(r["nodes"] ?? r["node_results"])];
}

/** The session id an entry names (`sessionId` or `session_id`), or `null`. */
export function entrySessionId(entry: JsonObject): string | null {
  const id = entry["sessionId"] ?? entry["session_id"];
  return typeof id === "string" ? id : null;
}

/** The agent name an entry names (`agentName` or `agent_name`), or `null`. */
function entryAgentName(entry: JsonObject): string | null {
  const name = entry["agentName"] ?? entry["agent_name"];
  return typeof name === "string" ? name : null;
}

/** The history of a run: an agent's messages; for a workflow, its steps' conversations in order, then its nodes' in node order. */
export function historyOf(kind: "agent" | "workflow", result: unknown): JsonValue[] {
  if (kind === "agent") return messagesOf(result);
  return entriesOf(result).flatMap((entry) => messagesOf(entry));
}

/** The message count of a result, as derived on every save. */
export function messageCountOf(kind: "agent" | "workflow", result: unknown): number {
  return historyOf(kind, result).length;
}

/** Step session id → agent name for every step and node of a workflow result; `null` when there are none. */
export function agentsInvolvedOf(kind: "agent" | "workflow", result: unknown): Record<string, string> | null {
  if (kind !== "workflow") return null;
  const out: Record<string, string> = {};
  for (const entry of entriesOf(result)) {
    const id = entrySessionId(entry);
    const name = entryAgentName(entry);
    if (id !== null && name !== null) out[id] = name;
  }
  return Object.keys(out).length === 0 ? null : out;
}

/** Applies `change` to the entry of `stepId` in a workflow result (copying what it touches); `found` says whether there was one. */
export function updateStepEntry(
  result: unknown,
  stepId: string,
  change: (entry: JsonObject) => JsonObject | null,
): { result: JsonValue; found: boolean } {
  if (!isObject(result as JsonValue)) return { result: (result ?? null) as JsonValue, found: false };
  const out: JsonObject = { ...(result as JsonObject) };
  let found = false;
  for (const field of ["steps", "step_results", "nodes", "node_results"]) {
    const value = out[field];
    if (Array.isArray(value)) {
      const next: JsonValue[] = [];
      for (const item of value) {
        if (isObject(item) && entrySessionId(item) === stepId) {
          found = true;
          const changed = change(item);
          if (changed !== null) next.push(changed);
        } else next.push(item);
      }
      out[field] = next;
    } else if (isObject(value)) {
      const next: JsonObject = {};
      for (const [key, item] of Object.entries(value)) {
        if (isObject(item) && entrySessionId(item) === stepId) {
          found = true;
          const changed = change(item);
          if (changed !== null) next[key] = changed;
        } else next[key] = item;
      }
      out[field] = next;
    }
  }
  return { result: out, found };
}

/** Appends a message to an agent result (to `messages`, or the list an imported result keeps its conversation in). */
export function appendMessage(result: unknown, message: JsonObject): JsonValue {
  if (!isObject(result as JsonValue)) {
    return { status: null, finalResponse: null, messages: [message], error: null, previous: (result ?? null) as JsonValue };
  }
  const out: JsonObject = { ...(result as JsonObject) };
  const field = ["messages", "conversation_history", "history"].find((f) => Array.isArray(out[f])) ?? "messages";
  out[field] = [...((out[field] as JsonValue[] | undefined) ?? []), message];
  return out;
}

/** The parts of a step's own result its entry in the workflow result mirrors. */
export function mirrorIntoEntry(entry: JsonObject, stepResult: JsonValue): JsonObject {
  const out: JsonObject = { ...entry };
  const messages = messagesOf(stepResult);
  const field = ["messages", "conversation_history", "history"].find((f) => Array.isArray(out[f])) ?? "messages";
  out[field] = messages;
  if (isObject(stepResult)) {
    for (const key of ["status", "finalResponse", "error"]) {
      if (key in stepResult) out[key] = stepResult[key]!;
    }
  }
  return out;
}
