/**
 * The history of agent and workflow runs ("execution sessions") on any {@link ExecutionStore}:
 * saving results, appending messages, reading history, result and metadata by a full or
 * partial id, listing, deleting with exact cascades, retention and import. Backend
 * independent: every read and write goes through the contract's execution methods, and
 * every change is one atomic, version-checked write (retried when another writer got there
 * first), so a record is never half-written.
 *
 * @module
 */
import {
  AmbiguousIdError,
  ConflictError,
  InvalidInputError,
  NotFoundError,
  type ExecutionKind,
  type ExecutionRecord,
  type ExecutionSummary,
  type ExecutionStore,
  type ExecutionWrite,
  type Page,
} from "../store/index.js";
import { checkExecutionId, executionIdentity, executionName } from "./execution-id.js";
import { importExecutionDirectory, type ExecutionImportOptions, type ExecutionImportReport } from "./execution-import.js";
import { summaryOf, workflowFor } from "./execution-lookup.js";
import {
  agentNameOfResult,
  agentsInvolvedOf,
  appendMessage,
  historyOf,
  messageCountOf,
  mirrorIntoEntry,
  normalizeAgentResult,
  normalizeWorkflowResult,
  stepAgentResult,
  updateStepEntry,
  workflowNameOfResult,
  type AgentRunResult,
  type ExecutionMessage,
  type WorkflowRunResult,
} from "./execution-result.js";
import { cleanupExecutions, type CleanupOptions, type CleanupReport } from "./retention.js";
import { toJsonSafe, type JsonObject, type JsonValue } from "./safe-json.js";

/** Options of `new Executions()`. */
export interface ExecutionsOptions {
  /** "Now" in epoch seconds (default: the system clock). */
  clock?: () => number;
}

/** Whose records a call may see and change. */
export interface ExecutionScope {
  /** Only records of this owner (a user or tenant id; e.g. that of a scoped API key). Others are "not found". Default: all. */
  userId?: string;
}

/** Options of `saveAgentResult` and `saveWorkflowResult`. */
export interface SaveResultOptions extends ExecutionScope {
  /** The session id (default: a new `agent-<8 hex>` / `workflow-<8 hex>`); see {@link executionIdentity}. */
  sessionId?: string;
  /** The agent or workflow name (default: the stored one, else `Untitled Agent (…)` / `Untitled Workflow (…)`). */
  name?: string;
}

/** Options of `addMessageToHistory`. */
export interface AddMessageOptions extends ExecutionScope {
  /** The agent name, for a session this call creates. */
  name?: string;
}

/** What is known about an execution session besides its result. Times are epoch seconds. */
export interface ExecutionMetadata {
  id: string;
  kind: ExecutionKind;
  name: string;
  baseId: string;
  /** The workflow this is a step of, or `null`. */
  parentId: string | null;
  userId: string | null;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  /** Step session id → agent name; `null` when there are none. */
  agentsInvolved: Record<string, string> | null;
}

/** An execution session with its full result. */
export interface ExecutionSession extends ExecutionMetadata {
  result: JsonValue;
}

/** Options of `listSessions`. */
export interface ListExecutionSessionsOptions extends ExecutionScope {
  /** Only direct runs of this agent (never workflow steps, unless `includeSteps`). */
  agentName?: string;
  /** Only runs of this workflow. */
  workflowName?: string;
  /** List workflow steps as rows of their own too (default false). */
  includeSteps?: boolean;
  /** 1 to 100 (default 50). */
  limit?: number;
  /** `nextCursor` of the previous page, with the same filters. */
  cursor?: string | null;
  /** Rows to skip first (default 0), after `cursor` when both are given. */
  offset?: number;
}

/** What `deleteSession` removed. */
export interface DeleteExecutionReport {
  /** The session, followed by its steps (for a workflow). */
  deletedIds: string[];
  /** For a step: the workflow whose result, `agentsInvolved` and message count were updated; else `null`. */
  updatedParentId: string | null;
}

/** Attempts of a read-check-write cycle before giving up on a record that keeps changing. */
const MAX_ATTEMPTS = 50;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const metadataOf = (s: ExecutionSummary): ExecutionMetadata => ({
  id: s.id,
  kind: s.kind,
  name: s.name,
  baseId: s.baseId,
  parentId: s.parentId,
  userId: s.userId,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
  messageCount: s.messageCount,
  agentsInvolved: s.agentsInvolved,
});

function checkScope(scope: ExecutionScope | undefined): string | undefined {
  if (scope === undefined || scope === null) return undefined;
  if (typeof scope !== "object") throw new InvalidInputError("options must be an object.");
  return scope.userId === undefined ? undefined : checkExecutionId(scope.userId, "userId");
}

const visible = (record: { userId: string | null }, userId: string | undefined): boolean => userId === undefined || record.userId === userId;

function notFound(id: string): NotFoundError {
  return new NotFoundError(`Session '${id}' not found`);
}

function unavailable(id: string): ConflictError {
  return new ConflictError(`The session id '${id}' is not available; choose another id.`, { sessionId: id });
}

/**
 * Execution sessions on an {@link ExecutionStore} (any `SessionDB`).
 *
 * @example
 * import { openSessionDB } from "threadline";
 * import { Executions } from "threadline/executions";
 * const executions = new Executions(await openSessionDB("/tmp/threadline-example.db"));
 * const run = await executions.saveAgentResult(
 *   { finalResponse: "4", messages: [{ role: "user", content: "2+2?" }, { role: "assistant", content: "4" }] },
 *   { name: "calculator" },
 * );
 * console.log(run.id, run.messageCount); // agent-1f2e3d4c 2
 * console.log(await executions.getSessionHistory(run.id.slice(0, 10))); // a unique prefix is enough
 */
export class Executions {
  readonly #db: ExecutionStore;
  readonly #clock: () => number;

  constructor(db: ExecutionStore, options: ExecutionsOptions = {}) {
    this.#db = db;
    this.#clock = options.clock ?? (() => Date.now() / 1000);
  }

  /** The store the sessions live in. */
  get db(): ExecutionStore {
    return this.#db;
  }

  // --- writing ------------------------------------------------------------------

  /** Runs a read-check-write cycle until its write is not overtaken (`null`) by another writer. */
  async #retry<T>(doing: string, attempt: () => Promise<T | null>): Promise<T> {
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const result = await attempt();
      if (result !== null) return result;
      await sleep(Math.random() * Math.min(2 + i, 20)); // jitter, so that racing writers spread out
    }
    throw new ConflictError(`Other writers kept changing the session while ${doing}; try again.`);
  }

  /** The stored id for a given id (the given id itself when it exists as given), its base, and the stored record. */
  async #open(kind: ExecutionKind, given: string | undefined): Promise<{ id: string; baseId: string; record: ExecutionRecord | null }> {
    if (given !== undefined) {
      const exact = await this.#db.getExecution(checkExecutionId(given));
      if (exact !== null) return { id: exact.id, baseId: exact.baseId, record: exact };
    }
    const { id, baseId } = executionIdentity(kind, given);
    return { id, baseId, record: given === undefined ? null : await this.#db.getExecution(id) };
  }

  /**
   * The write that mirrors a step's new result into its workflow's entry for it (messages,
   * status, final response, error), or `null` when the workflow has no entry for the step.
   */
  async #mirrorParent(parentId: string, stepId: string, stepResult: JsonValue, at: number): Promise<ExecutionWrite | null> {
    const parent = await this.#db.getExecution(parentId);
    if (parent === null) return null;
    const { result, found } = updateStepEntry(parent.result, stepId, (entry) => mirrorIntoEntry(entry, stepResult));
    if (!found) return null;
    return {
      ...writeOf(parent),
      result,
      messageCount: messageCountOf("workflow", result),
      agentsInvolved: agentsInvolvedOf("workflow", result),
      updatedAt: at,
      expectedVersion: parent.version,
    };
  }

  /**
   * Saves the result of an agent run (creating or replacing its session) and returns its
   * metadata. The history is saved to the same id it is loaded from: a given id that exists
   * as given is used as is; otherwise it gets the `agent-` prefix. An id of the form
   * `<workflow id>-<step or node>` of an existing workflow becomes that workflow's step.
   * Throws `ConflictError` when the id holds a workflow run (or another owner's session).
   */
  async saveAgentResult(result: AgentRunResult, options: SaveResultOptions = {}): Promise<ExecutionMetadata> {
    const userId = checkScope(options);
    const stored = normalizeAgentResult(result);
    return this.#retry("saving an agent result", async () => {
      const { id, baseId, record } = await this.#open("agent", options.sessionId);
      if (record !== null && !visible(record, userId)) throw unavailable(id);
      if (record !== null && record.kind !== "agent") {
        throw new ConflictError(`'${id}' is a workflow session; save an agent result under another id.`, { sessionId: id });
      }
      const parent = record !== null ? (record.parentId === null ? null : await summaryOf(this.#db, record.parentId)) : await workflowFor(this.#db, id);
      if (parent !== null && !visible(parent, userId)) throw unavailable(id);
      const at = this.#clock();
      const put: ExecutionWrite[] = [
        {
          id,
          kind: "agent",
          name: nameFor("agent", id, options, agentNameOfResult(result), record?.name ?? parent?.agentsInvolved?.[id]),
          baseId: record?.baseId ?? parent?.baseId ?? baseId,
          parentId: parent?.id ?? null,
          userId: record?.userId ?? parent?.userId ?? userId ?? null,
          updatedAt: at,
          result: stored,
          messageCount: stored.messages.length,
          agentsInvolved: null,
          expectedVersion: record?.version ?? null,
        },
      ];
      if (parent !== null) {
        const mirrored = await this.#mirrorParent(parent.id, id, stored, at);
        if (mirrored !== null) put.push(mirrored);
      }
      const written = await this.#db.writeExecutions({ put });
      return written === null ? null : metadataOf(written.stored[0]!);
    });
  }

  /**
   * Saves the result of a workflow run and each of its steps (step `i` as
   * `<workflow id>-<i>`) and graph nodes (node `n` as `<workflow id>-<n>`) as agent sessions
   * with the workflow's base, in one atomic write. Returns the workflow's metadata
   * (`agentsInvolved`: step id → agent name; `messageCount`: all steps' messages).
   */
  async saveWorkflowResult(result: WorkflowRunResult, options: SaveResultOptions = {}): Promise<ExecutionMetadata> {
    const userId = checkScope(options);
    normalizeWorkflowResult(result, "workflow-x"); // validate before reading anything
    return this.#retry("saving a workflow result", async () => {
      const { id, baseId, record } = await this.#open("workflow", options.sessionId);
      if (record !== null && !visible(record, userId)) throw unavailable(id);
      if (record !== null && record.kind !== "workflow") {
        throw new ConflictError(`'${id}' is an agent session; save a workflow result under another id.`, { sessionId: id });
      }
      const stored = normalizeWorkflowResult(result, id);
      const entries = [...stored.steps, ...stored.nodes];
      const owner = record?.userId ?? userId ?? null;
      const base = record?.baseId ?? baseId;
      const existing = new Map<string, ExecutionSummary>();
      if (entries.length > 0) {
        const found = await this.#db.findExecutions({ idPrefix: `${id}-`, limit: 1000 });
        for (const s of found) existing.set(s.id, s);
        if (found.length === 1000) {
          for (const entry of entries) {
            if (existing.has(entry.sessionId)) continue;
            const s = await summaryOf(this.#db, entry.sessionId);
            if (s !== null) existing.set(s.id, s);
          }
        }
      }
      const at = this.#clock();
      const put: ExecutionWrite[] = [
        {
          id,
          kind: "workflow",
          name: nameFor("workflow", id, options, workflowNameOfResult(result), record?.name),
          baseId: base,
          parentId: null,
          userId: owner,
          updatedAt: at,
          result: stored,
          messageCount: messageCountOf("workflow", stored),
          agentsInvolved: agentsInvolvedOf("workflow", stored),
          expectedVersion: record?.version ?? null,
        },
      ];
      for (const entry of entries) {
        const step = existing.get(entry.sessionId);
        if (step !== undefined && (step.kind !== "agent" || !visible(step, userId) || (step.parentId !== null && step.parentId !== id))) {
          throw new ConflictError(`The step id '${entry.sessionId}' is held by another session; save the workflow under another id.`, {
            sessionId: entry.sessionId,
          });
        }
        const stepResult = stepAgentResult(entry);
        put.push({
          id: entry.sessionId,
          kind: "agent",
          name: entry.agentName,
          baseId: base,
          parentId: id,
          userId: owner,
          updatedAt: at,
          result: stepResult,
          messageCount: stepResult.messages.length,
          agentsInvolved: null,
          expectedVersion: step?.version ?? null,
        });
      }
      const written = await this.#db.writeExecutions({ put });
      return written === null ? null : metadataOf(written.stored[0]!);
    });
  }

  /**
   * Appends a message to an agent session (and, for a workflow step, to the workflow's entry
   * for it). An unknown id creates an agent session (with the id rules of
   * {@link Executions.saveAgentResult}). A workflow session is refused with `ConflictError`:
   * add messages to one of its steps.
   */
  async addMessageToHistory(sessionId: string, message: ExecutionMessage, options: AddMessageOptions = {}): Promise<ExecutionMetadata> {
    const userId = checkScope(options);
    checkExecutionId(sessionId);
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      throw new InvalidInputError("message must be an object (e.g. { role, content }).", { field: "message" });
    }
    const safe = toJsonSafe(message) as JsonObject;
    return this.#retry("adding a message", async () => {
      const { id, baseId, record } = await this.#open("agent", sessionId);
      if (record !== null && !visible(record, userId)) throw unavailable(id);
      if (record !== null && record.kind === "workflow") {
        throw new ConflictError(`'${id}' is a workflow session; messages belong to its steps (agent sessions). Add the message to a step instead.`, {
          sessionId: id,
        });
      }
      const at = this.#clock();
      let write: ExecutionWrite;
      let parentId: string | null;
      if (record !== null) {
        const result = appendMessage(record.result, safe);
        write = { ...writeOf(record), result, messageCount: messageCountOf("agent", result), updatedAt: at, expectedVersion: record.version };
        parentId = record.parentId;
      } else {
        const parent = await workflowFor(this.#db, id);
        if (parent !== null && !visible(parent, userId)) throw unavailable(id);
        const result = { status: null, finalResponse: null, messages: [safe], error: null };
        write = {
          id,
          kind: "agent",
          name: executionName("agent", sessionId, options.name ?? parent?.agentsInvolved?.[id]),
          baseId: parent?.baseId ?? baseId,
          parentId: parent?.id ?? null,
          userId: parent?.userId ?? userId ?? null,
          updatedAt: at,
          result,
          messageCount: 1,
          agentsInvolved: null,
          expectedVersion: null,
        };
        parentId = parent?.id ?? null;
      }
      const put = [write];
      if (parentId !== null) {
        const mirrored = await this.#mirrorParent(parentId, id, write.result as JsonValue, at);
        if (mirrored !== null) put.push(mirrored);
      }
      const written = await this.#db.writeExecutions({ put });
      return written === null ? null : metadataOf(written.stored[0]!);
    });
  }

  // --- reading ------------------------------------------------------------------

  /**
   * Resolves a user-given id: the exact id; else a unique id prefix; else a base id. Among
   * prefix (or base) matches, every match that is a step of another match is left out; one
   * left → it; an agent run and a workflow run left → the most recently updated; otherwise
   * `AmbiguousIdError` listing up to 5 candidates. None → `NotFoundError` ("Session '<id>' not found").
   */
  async resolveSessionId(id: string, scope?: ExecutionScope): Promise<string> {
    return (await this.#resolve(id, scope)).id;
  }

  async #resolve(given: string, scope: ExecutionScope | undefined): Promise<ExecutionRecord> {
    const userId = checkScope(scope);
    checkExecutionId(given, "id");
    const exact = await this.#db.getExecution(given);
    if (exact !== null && visible(exact, userId)) return exact;
    const filter = { withoutStepsOfMatches: true, limit: 6, ...(userId === undefined ? {} : { userId }) };
    for (const query of [{ idPrefix: given }, { baseId: given }]) {
      const matches = await this.#db.findExecutions({ ...query, ...filter });
      const chosen = pick(given, matches);
      if (chosen === null) continue;
      const record = await this.#db.getExecution(chosen.id);
      if (record !== null) return record;
    }
    throw notFound(given);
  }

  /** Metadata and full result of a session (id resolved as in {@link Executions.resolveSessionId}). */
  async getSession(id: string, scope?: ExecutionScope): Promise<ExecutionSession> {
    const record = await this.#resolve(id, scope);
    return { ...metadataOf(record), result: record.result as JsonValue };
  }

  /** A session's metadata (id resolved as in {@link Executions.resolveSessionId}). */
  async getSessionMetadata(id: string, scope?: ExecutionScope): Promise<ExecutionMetadata> {
    return metadataOf(await this.#resolve(id, scope));
  }

  /** A session's stored result (id resolved as in {@link Executions.resolveSessionId}). */
  async getSessionResult(id: string, scope?: ExecutionScope): Promise<JsonValue> {
    return (await this.#resolve(id, scope)).result as JsonValue;
  }

  /**
   * A session's history (id resolved as in {@link Executions.resolveSessionId}): an agent
   * session's messages; a workflow's step conversations in step order, then its graph nodes'
   * in node order.
   */
  async getSessionHistory(id: string, scope?: ExecutionScope): Promise<JsonValue[]> {
    const record = await this.#resolve(id, scope);
    return historyOf(record.kind, record.result);
  }

  /**
   * A page of sessions, newest `updatedAt` first, with the `total` after filtering and the
   * cursor of the next page. By default workflow steps are left out (they belong to their
   * workflow). Never deletes anything.
   */
  async listSessions(options: ListExecutionSessionsOptions = {}): Promise<Page<ExecutionMetadata> & { total: number }> {
    const userId = checkScope(options);
    const { agentName, workflowName, includeSteps = false, limit = 50, cursor = null, offset = 0 } = options;
    if (agentName !== undefined && workflowName !== undefined) {
      throw new InvalidInputError("Filter by agentName or by workflowName, not both.", { field: "workflowName" });
    }
    const filter =
      agentName !== undefined
        ? { kind: "agent" as const, name: agentName }
        : workflowName !== undefined
          ? { kind: "workflow" as const, name: workflowName }
          : {};
    const page = await this.#db.listExecutions({
      ...filter,
      directOnly: !includeSteps,
      limit,
      cursor,
      offset,
      ...(userId === undefined ? {} : { userId }),
    });
    return { items: page.items.map(metadataOf), nextCursor: page.nextCursor, total: page.total };
  }

  // --- deleting -----------------------------------------------------------------

  /**
   * Deletes a session by its exact id; `null` when there is none. A workflow goes with its
   * own steps (same base and `<workflow id>-…`) and nothing else. A step is removed from its
   * workflow's result and `agentsInvolved`, the workflow's message count follows and its
   * `updatedAt` becomes now.
   */
  async deleteSession(id: string, scope?: ExecutionScope): Promise<DeleteExecutionReport | null> {
    const userId = checkScope(scope);
    checkExecutionId(id, "id");
    return this.#retry("deleting a session", async () => {
      const record = await summaryOf(this.#db, id);
      if (record === null || !visible(record, userId)) return { deletedIds: [], updatedParentId: null };
      const put: ExecutionWrite[] = [];
      if (record.parentId !== null) {
        const parent = await this.#db.getExecution(record.parentId);
        if (parent !== null) {
          const { result, found } = updateStepEntry(parent.result, id, () => null);
          const agents = { ...(parent.agentsInvolved ?? {}) };
          delete agents[id];
          put.push({
            ...writeOf(parent),
            result,
            messageCount: found ? messageCountOf("workflow", result) : Math.max(0, parent.messageCount - record.messageCount),
            agentsInvolved: Object.keys(agents).length === 0 ? null : agents,
            updatedAt: this.#clock(),
            expectedVersion: parent.version,
          });
        }
      }
      const written = await this.#db.writeExecutions({ put, delete: [id] });
      if (written === null) return null;
      return { deletedIds: written.deleted, updatedParentId: put[0]?.id ?? null };
    }).then((report) => (report.deletedIds.length === 0 ? null : report));
  }

  /**
   * Removes whole units (a session without a parent, with its steps) older than
   * `olderThanDays` (default 30; 0: all) or beyond the newest `maxSessions` (default 50),
   * a unit being as old as its newest member, and reports what it removed. Explicit only:
   * nothing else ever runs it.
   */
  async cleanup(options: CleanupOptions = {}): Promise<CleanupReport> {
    const userId = checkScope(options);
    return cleanupExecutions(this.#db, { ...options, ...(userId === undefined ? {} : { userId }) }, this.#clock());
  }

  /**
   * Imports a directory of JSON records (one file per session, as written by the design we
   * learn from); validated, idempotent, with the skipped files and their reasons.
   */
  async importDirectory(dir: string, options: ExecutionImportOptions = {}): Promise<ExecutionImportReport> {
    return importExecutionDirectory(this.#db, dir, options);
  }
}

/**
 * The name of a saved run: the caller's `name`; else the name its result gives (Aurite's
 * `agent_name` / `workflow_name`); else the stored one; else `Untitled …` after the id as
 * the caller gave it (the stored id when none was given).
 */
function nameFor(kind: ExecutionKind, id: string, options: SaveResultOptions, fromResult: string | undefined, stored: string | undefined): string {
  if (options.name !== undefined) return executionName(kind, options.sessionId ?? id, options.name);
  if (fromResult !== undefined) return executionName(kind, id, fromResult);
  return stored ?? executionName(kind, options.sessionId ?? id, undefined);
}

/** The write that stores `record` unchanged (before its fields are changed). */
function writeOf(record: ExecutionRecord): ExecutionWrite {
  return {
    id: record.id,
    kind: record.kind,
    name: record.name,
    baseId: record.baseId,
    parentId: record.parentId,
    userId: record.userId,
    updatedAt: record.updatedAt,
    result: record.result,
    messageCount: record.messageCount,
    agentsInvolved: record.agentsInvolved,
  };
}

/** Chooses among the primary matches of a partial id (see {@link Executions.resolveSessionId}); `null` when none. */
function pick(given: string, matches: ExecutionSummary[]): ExecutionSummary | null {
  if (matches.length === 0) return null;
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 2 && matches[0]!.kind !== matches[1]!.kind) {
    const [a, b] = matches as [ExecutionSummary, ExecutionSummary];
    return a.updatedAt !== b.updatedAt ? (a.updatedAt > b.updatedAt ? a : b) : a.kind === "workflow" ? a : b;
  }
  const candidates = matches.slice(0, 5).map((m) => ({ id: m.id, kind: m.kind, name: m.name, updatedAt: m.updatedAt }));
  throw new AmbiguousIdError(given, candidates, matches.length > 5);
}
