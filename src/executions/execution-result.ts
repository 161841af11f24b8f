/**
 * The results of runs as callers hand them in, as they are stored, and what is derived
 * from them on every save: message count, `agentsInvolved`, history. Stored results are
 * plain JSON (see safe-json.ts).
 *
 * Results in Aurite's own shape (the design we learn from) are understood both when saved
 * and when read (imported records keep it): `conversation_history` / `conversationHistory`
 * for `messages`, `agent_name` / `agentName` and `workflow_name` / `workflowName` for the
 * name, `final_response` / `final_output` for `finalResponse`, `error_message` for `error`,
 * `step_results` / `stepResults` for `steps`, `node_results` / `nodeResults` for `nodes`,
 * and a step or node that holds its agent's run in `result` (`{ step_name, step_type,
 * result: { agent_name, conversation_history, session_id, … } }`). A save turns them into
 * the canonical fields; a result naming its conversation (or its steps) twice, differently,
 * or in something that is not a list, is refused — never stored with its conversation lost.
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

/** Where a result may keep its conversation, canonical field first. */
const CONVERSATION_FIELDS = ["messages", "conversation_history", "conversationHistory"] as const;
/** …and, when reading, also `history` (older imported records). */
const READ_CONVERSATION_FIELDS = [...CONVERSATION_FIELDS, "history"] as const;
const STEP_FIELDS = ["steps", "step_results", "stepResults"] as const;
const NODE_FIELDS = ["nodes", "node_results", "nodeResults"] as const;
const AGENT_NAME_FIELDS = ["agentName", "agent_name"] as const;
const WORKFLOW_NAME_FIELDS = ["workflowName", "workflow_name"] as const;

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

/**
 * The one field among `fields` that `obj` sets (not `null`), or `null`. Two fields with
 * different values are refused: the caller must say which one holds the data.
 */
function oneOf(obj: JsonObject, fields: readonly string[], path: string, what: string): string | null {
  const set = fields.filter((f) => obj[f] !== undefined && obj[f] !== null);
  const first = set[0];
  if (first === undefined) return null;
  const other = set.find((f) => JSON.stringify(obj[f]) !== JSON.stringify(obj[first]));
  if (other !== undefined) {
    throw new InvalidInputError(`${path}has both ${first} and ${other}; give ${what} in one of them (${fields.join(", ")}).`, { field: `${path}${other}` });
  }
  return first;
}

/** Moves the value of the first set alias to `to` (when `to` is not set itself) and drops the aliases. */
function lift(obj: JsonObject, to: string, aliases: readonly string[]): void {
  for (const alias of aliases) {
    const value = obj[alias];
    delete obj[alias];
    if ((obj[to] === undefined || obj[to] === null) && value !== undefined && value !== null) obj[to] = value;
  }
}

/** The first string among `fields` of `obj`, or `undefined`. */
function stringField(obj: JsonObject, fields: readonly string[]): string | undefined {
  for (const f of fields) {
    const v = obj[f];
    if (typeof v === "string" && v.trim() !== "") return v;
  }
  return undefined;
}

/**
 * An agent run (or a step's) in canonical form: the conversation in `messages` (from
 * `conversation_history` / `conversationHistory` too), `finalResponse`, `error`; the
 * aliases it came in are dropped, every other field is kept. `path` prefixes error fields.
 */
function canonicalRun(input: JsonObject, path: string): JsonObject {
  const out: JsonObject = { ...input };
  const field = oneOf(out, CONVERSATION_FIELDS, path, "the conversation");
  const messages = field === null ? [] : messagesField(out[field], `${path}${field}`);
  for (const f of CONVERSATION_FIELDS) delete out[f];
  lift(out, "finalResponse", ["final_response", "final_output"]);
  lift(out, "error", ["error_message"]);
  const error = out["error"] ?? null;
  return { ...out, status: statusOf(out["status"], error), finalResponse: out["finalResponse"] ?? null, messages, error };
}

/** The agent name an agent result (as handed in) names, or `undefined`. */
export function agentNameOfResult(result: unknown): string | undefined {
  return isObjectInput(result) ? stringField(result as JsonObject, AGENT_NAME_FIELDS) : undefined;
}

/** The workflow name a workflow result (as handed in) names, or `undefined`. */
export function workflowNameOfResult(result: unknown): string | undefined {
  return isObjectInput(result) ? stringField(result as JsonObject, WORKFLOW_NAME_FIELDS) : undefined;
}

/** Validates and serialises an agent result (Aurite's field names understood; see the module doc). */
export function normalizeAgentResult(result: AgentRunResult): StoredAgentResult {
  if (!isObjectInput(result))
    throw new InvalidInputError("An agent result must be an object ({ status, finalResponse, messages, error }).", { field: "result" });
  return canonicalRun(toJsonSafe(result) as JsonObject, "") as StoredAgentResult;
}

function isObjectInput(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A step or node as handed in, with the agent's run it holds in `result` (Aurite's
 * `{ step_name, step_type, result: {…} }`) lifted into the entry itself.
 */
function flattenEntry(value: JsonObject): JsonObject {
  const run = value["result"];
  const own = CONVERSATION_FIELDS.some((f) => value[f] !== undefined && value[f] !== null);
  if (!isObject(run) || own) return value;
  const { result: _result, ...rest } = value;
  const lifted: JsonObject = { ...run };
  // The step's id is assigned by the workflow; a stale one from elsewhere is not kept.
  delete lifted["session_id"];
  delete lifted["sessionId"];
  const merged: JsonObject = { ...lifted, ...rest };
  const name = stringField(rest, AGENT_NAME_FIELDS) ?? stringField(run, AGENT_NAME_FIELDS) ?? stringField(rest, ["step_name", "stepName"]);
  for (const f of AGENT_NAME_FIELDS) delete merged[f];
  if (name !== undefined) merged["agentName"] = name;
  if (!CONVERSATION_FIELDS.some((f) => run[f] !== undefined && run[f] !== null) && entriesOf(run).length > 0) {
    // A nested workflow step: its conversation is that of its own steps.
    merged["messages"] = historyOf("workflow", run);
  }
  return merged;
}

function toEntry(value: JsonValue | undefined, sessionId: string, field: string, position: JsonObject): StoredStepEntry {
  if (!isObject(value)) throw new InvalidInputError(`${field} must be an object.`, { field });
  const flat = { ...flattenEntry(value) };
  const agentName = stringField(flat, AGENT_NAME_FIELDS);
  for (const f of AGENT_NAME_FIELDS) delete flat[f];
  const run = canonicalRun(flat, `${field}.`);
  return {
    ...run,
    ...position,
    sessionId,
    agentName: executionName("agent", sessionId, agentName),
    status: run["status"] as string | null,
    finalResponse: run["finalResponse"] as JsonValue,
    messages: run["messages"] as JsonValue[],
    error: run["error"] as JsonValue,
  };
}

/** Validates and serialises a workflow result; assigns each step and node its session id. */
export function normalizeWorkflowResult(result: WorkflowRunResult, workflowId: string): StoredWorkflowResult {
  if (!isObjectInput(result)) {
    throw new InvalidInputError("A workflow result must be an object ({ status, finalResponse, steps, nodes, error }).", { field: "result" });
  }
  const safe = toJsonSafe(result) as JsonObject;
  const stepsField = oneOf(safe, STEP_FIELDS, "", "the steps");
  const nodesField = oneOf(safe, NODE_FIELDS, "", "the graph nodes");
  const rawSteps = stepsField === null ? null : safe[stepsField]!;
  const rawNodes = nodesField === null ? null : safe[nodesField]!;
  for (const f of [...STEP_FIELDS, ...NODE_FIELDS]) delete safe[f];
  lift(safe, "finalResponse", ["final_output", "final_response"]);
  lift(safe, "error", ["error_message"]);
  if (rawSteps !== null && !Array.isArray(rawSteps)) {
    throw new InvalidInputError(`${stepsField} must be an array.`, { field: stepsField ?? "steps" });
  }
  const steps = (rawSteps ?? []).map((step, i) => toEntry(step, stepSessionId(workflowId, i), `steps[${i}]`, { index: i }));

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

/** The field of `obj` that holds a conversation (a list), or `undefined`. */
function conversationField(obj: JsonObject): string | undefined {
  return READ_CONVERSATION_FIELDS.find((f) => Array.isArray(obj[f]));
}

/**
 * Where an entry keeps its agent's run: the entry itself, or (Aurite's steps) the object
 * in its `result` when the entry has no conversation of its own.
 */
export function runOf(entry: JsonObject): JsonObject {
  const run = entry["result"];
  return conversationField(entry) === undefined && isObject(run) ? run : entry;
}

/** The conversation of an agent result (or of a step entry, also one that holds its run in `result`). */
export function messagesOf(result: JsonValue | unknown): JsonValue[] {
  if (!isObject(result as JsonValue)) return [];
  const r = runOf(result as JsonObject);
  const field = conversationField(r);
  if (field !== undefined) return r[field] as JsonValue[];
  // A nested workflow (a step that ran a workflow): its steps' conversations.
  return r !== result && entriesOf(r).length > 0 ? historyOf("workflow", r) : [];
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
  const pick = (fields: readonly string[]): JsonValue | undefined => fields.map((f) => r[f]).find((v) => v !== undefined && v !== null);
  return [...entryList(pick(STEP_FIELDS)), ...entryList(pick(NODE_FIELDS))];
}

/** The session id an entry names (`sessionId` or `session_id`, else that of the run in its `result`), or `null`. */
export function entrySessionId(entry: JsonObject): string | null {
  for (const obj of [entry, entry["result"]]) {
    if (!isObject(obj as JsonValue)) continue;
    const id = (obj as JsonObject)["sessionId"] ?? (obj as JsonObject)["session_id"];
    if (typeof id === "string") return id;
  }
  return null;
}

/** The agent name an entry names (`agentName` or `agent_name`, else that of the run in its `result`), or `null`. */
export function entryAgentName(entry: JsonObject): string | null {
  for (const obj of [entry, entry["result"]]) {
    if (!isObject(obj as JsonValue)) continue;
    const name = stringField(obj as JsonObject, AGENT_NAME_FIELDS);
    if (name !== undefined) return name;
  }
  return null;
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
export function updateStepEntry(result: unknown, stepId: string, change: (entry: JsonObject) => JsonObject | null): { result: JsonValue; found: boolean } {
  if (!isObject(result as JsonValue)) return { result: (result ?? null) as JsonValue, found: false };
  const out: JsonObject = { ...(result as JsonObject) };
  let found = false;
  for (const field of [...STEP_FIELDS, ...NODE_FIELDS]) {
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
  const field = conversationField(out) ?? "messages";
  out[field] = [...((out[field] as JsonValue[] | undefined) ?? []), message];
  return out;
}

/** The parts of a step's own result its entry in the workflow result mirrors. */
export function mirrorIntoEntry(entry: JsonObject, stepResult: JsonValue): JsonObject {
  const out: JsonObject = { ...entry };
  const messages = messagesOf(stepResult);
  const run = runOf(out);
  if (run !== out) {
    // Aurite's step: the conversation lives in the run it holds.
    out["result"] = { ...run, [conversationField(run) ?? "conversation_history"]: messages };
  } else {
    out[conversationField(out) ?? "messages"] = messages;
  }
  if (isObject(stepResult)) {
    for (const key of ["status", "finalResponse", "error"]) {
      if (key in stepResult) out[key] = stepResult[key]!;
    }
  }
  return out;
}
