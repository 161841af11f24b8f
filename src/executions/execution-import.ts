/**
 * Import of a directory of execution records in the format of the design we learn from
 * (an Aurite cache directory): one JSON file per session with `session_id`,
 * `base_session_id`, `execution_result`, `result_type`, `created_at`, `last_updated`,
 * `name`, `message_count`, `agents_involved`. Every file is validated; a bad one is skipped
 * with its reason and nothing of it is written. The result is kept as written (reading
 * understands Aurite's shape). A record without a name takes its result's `agent_name` /
 * `workflow_name`. A workflow's step that has no file of its own is created from the
 * workflow's entry for it, with the workflow. Times without an offset are UTC (Aurite writes
 * `datetime.utcnow().isoformat()`). Importing again changes nothing (existing ids are skipped).
 *
 * @module
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { InvalidInputError, NotFoundError, ThreadlineError, type ExecutionKind, type ExecutionStore, type ExecutionWrite } from "../store/index.js";
import { checkExecutionId, executionName } from "./execution-id.js";
import { summaryOf, workflowFor } from "./execution-lookup.js";
import {
  agentNameOfResult,
  agentsInvolvedOf,
  entriesOf,
  entryAgentName,
  entrySessionId,
  messageCountOf,
  messagesOf,
  runOf,
  workflowNameOfResult,
} from "./execution-result.js";
import { toJsonSafe, type JsonValue } from "./safe-json.js";

/** Options of `Executions.importDirectory`. */
export interface ExecutionImportOptions {
  /** The owner of every imported session (default: none). */
  userId?: string;
}

/** One file that was not imported, and why. */
export interface ExecutionImportSkip {
  /** The file name inside the directory. */
  file: string;
  reason: string;
  /** The file's session is already in the database (importing again skips it); `false` for a bad file. */
  alreadyPresent: boolean;
}

/** What `importDirectory` did. */
export interface ExecutionImportReport {
  /** Ids of the sessions imported. */
  imported: string[];
  /** Files not imported (bad, or a session that already exists), in file-name order. */
  skipped: ExecutionImportSkip[];
}

/** Largest file read (64 MiB). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

interface ValidRecord {
  file: string;
  id: string;
  baseId: string;
  kind: ExecutionKind;
  name: string;
  createdAt: number;
  updatedAt: number;
  result: JsonValue;
  messageCount: number;
  agentsInvolved: Record<string, string> | null;
}

/** An ISO 8601 date and time without a time-zone offset. */
const NAIVE_ISO = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/u;

/**
 * A time field: an ISO 8601 string (one without an offset is UTC, as Aurite writes it), or
 * epoch seconds (a number above 10^11 is taken as milliseconds).
 */
function parseTime(value: unknown, field: string): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value > 1e11 ? value / 1000 : value;
  if (typeof value === "string" && value.trim() !== "") {
    const text = value.trim();
    const ms = Date.parse(NAIVE_ISO.test(text) ? `${text.replace(" ", "T")}Z` : text);
    if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  }
  throw new InvalidInputError(`${field} must be an ISO 8601 time or epoch seconds (got ${JSON.stringify(value) ?? String(value)}).`, {
    field,
  });
}

function validate(file: string, text: string): ValidRecord {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`not valid JSON (${(error as Error).message})`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new InvalidInputError("not a JSON object");
  const r = doc as Record<string, unknown>;
  const id = checkExecutionId(r["session_id"], "session_id");
  const kind = r["result_type"];
  if (kind !== "agent" && kind !== "workflow") {
    throw new InvalidInputError(`result_type must be "agent" or "workflow" (got ${JSON.stringify(kind) ?? "nothing"})`, {
      field: "result_type",
    });
  }
  const baseId = r["base_session_id"] === undefined || r["base_session_id"] === null ? id : checkExecutionId(r["base_session_id"], "base_session_id");
  if (!("execution_result" in r) || r["execution_result"] === undefined) {
    throw new InvalidInputError("execution_result is missing", { field: "execution_result" });
  }
  const result = toJsonSafe(r["execution_result"]);
  if (r["created_at"] === undefined && r["last_updated"] === undefined) {
    throw new InvalidInputError("created_at is missing", { field: "created_at" });
  }
  const createdAt = parseTime(r["created_at"] ?? r["last_updated"], "created_at");
  const updatedAt = r["last_updated"] === undefined || r["last_updated"] === null ? createdAt : parseTime(r["last_updated"], "last_updated");
  if (r["name"] !== undefined && r["name"] !== null && typeof r["name"] !== "string") {
    throw new InvalidInputError("name must be a string or null", { field: "name" });
  }
  let messageCount = messageCountOf(kind, result);
  const givenCount = r["message_count"];
  if (givenCount !== undefined && givenCount !== null) {
    if (typeof givenCount !== "number" || !Number.isSafeInteger(givenCount) || givenCount < 0) {
      throw new InvalidInputError("message_count must be a whole number of 0 or more", { field: "message_count" });
    }
    messageCount = givenCount;
  }
  let agentsInvolved = agentsInvolvedOf(kind, result);
  const givenAgents = r["agents_involved"];
  if (givenAgents !== undefined) {
    if (givenAgents === null) agentsInvolved = null;
    else if (typeof givenAgents !== "object" || Array.isArray(givenAgents)) {
      throw new InvalidInputError("agents_involved must be an object (session id → agent name) or null", { field: "agents_involved" });
    } else {
      const entries = Object.entries(givenAgents as Record<string, unknown>);
      for (const [key, value] of entries) {
        checkExecutionId(key, "agents_involved");
        if (typeof value !== "string") throw new InvalidInputError(`agents_involved["${key}"] must be a string`, { field: "agents_involved" });
      }
      agentsInvolved = entries.length === 0 ? null : (givenAgents as Record<string, string>);
    }
  }
  return {
    file,
    id,
    baseId,
    kind,
    name: executionName(
      kind,
      id,
      typeof r["name"] === "string" && r["name"].trim() !== "" ? r["name"] : kind === "agent" ? agentNameOfResult(result) : workflowNameOfResult(result),
    ),
    createdAt,
    updatedAt,
    result,
    messageCount,
    agentsInvolved,
  };
}

/**
 * The writes that create the steps of an imported workflow that have no file of their own
 * in the directory and do not exist yet: each from the workflow's entry for it (Aurite's
 * `step_results[i].result`), linked to the workflow. Only entries whose id is structurally
 * a step of the workflow (`<workflow id>-…`) count.
 */
async function stepsWithoutFiles(
  db: ExecutionStore,
  workflow: ValidRecord,
  files: ReadonlyMap<string, string>,
  userId: string | null,
): Promise<ExecutionWrite[]> {
  const out: ExecutionWrite[] = [];
  const ids = new Set<string>();
  for (const entry of entriesOf(workflow.result)) {
    const id = entrySessionId(entry);
    if (id === null || !id.startsWith(`${workflow.id}-`) || id.length === workflow.id.length + 1) continue;
    if (files.has(id) || ids.has(id) || (await summaryOf(db, id)) !== null) continue;
    checkExecutionId(id, "step session_id");
    ids.add(id);
    const result = runOf(entry);
    out.push({
      id,
      kind: "agent",
      name: executionName("agent", id, entryAgentName(entry)),
      baseId: workflow.baseId,
      parentId: workflow.id,
      userId,
      createdAt: workflow.createdAt,
      updatedAt: workflow.updatedAt,
      result,
      messageCount: messagesOf(result).length,
      agentsInvolved: null,
      expectedVersion: null,
    });
  }
  return out;
}

/** Imports every `*.json` file of `dir` (other files are ignored). See {@link ExecutionImportReport}. */
export async function importExecutionDirectory(db: ExecutionStore, dir: string, options: ExecutionImportOptions = {}): Promise<ExecutionImportReport> {
  if (typeof dir !== "string" || dir === "") throw new InvalidInputError("dir must be a directory path.", { field: "dir" });
  const userId = options.userId === undefined ? null : checkExecutionId(options.userId, "userId");
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isFile() && e.name.endsWith(".json")).map((e) => e.name);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new NotFoundError(`No directory at ${dir}.`, { cause: error });
    throw error;
  }
  names.sort();
  const skipped: ExecutionImportSkip[] = [];
  const valid: ValidRecord[] = [];
  const seen = new Map<string, string>();
  for (const file of names) {
    const path = join(dir, file);
    try {
      const size = (await stat(path)).size;
      if (size > MAX_FILE_BYTES) throw new InvalidInputError(`the file is ${size} bytes; the limit is ${MAX_FILE_BYTES}`);
      const record = validate(file, await readFile(path, "utf8"));
      const first = seen.get(record.id);
      if (first !== undefined) throw new InvalidInputError(`session ${record.id} is also in ${first}`);
      seen.set(record.id, file);
      valid.push(record);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      skipped.push({ file, reason: error.message, alreadyPresent: false });
    }
  }
  // Workflows first, so that each step finds its workflow (a step is linked to it by structure: same base, `<workflow id>-…`).
  valid.sort((a, b) => (a.kind === b.kind ? (a.file < b.file ? -1 : 1) : a.kind === "workflow" ? -1 : 1));
  const imported: string[] = [];
  for (const record of valid) {
    let present = false;
    try {
      present = (await summaryOf(db, record.id)) !== null;
      if (present) throw new InvalidInputError(`session ${record.id} already exists`);
      const parent = record.kind === "agent" ? await workflowFor(db, record.id, record.baseId) : null;
      const write: ExecutionWrite = {
        id: record.id,
        kind: record.kind,
        name: record.name,
        baseId: record.baseId,
        parentId: parent?.id ?? null,
        userId: parent?.userId ?? userId,
        createdAt: record.createdAt,
        updatedAt: record.updatedAt,
        result: record.result,
        messageCount: record.messageCount,
        agentsInvolved: record.agentsInvolved,
        expectedVersion: null,
      };
      const steps = record.kind === "workflow" ? await stepsWithoutFiles(db, record, seen, write.userId ?? null) : [];
      const written = await db.writeExecutions({ put: [write, ...steps] });
      present = written === null;
      if (present) throw new InvalidInputError(`session ${record.id} already exists`);
      imported.push(record.id, ...steps.map((s) => s.id));
    } catch (error) {
      if (!(error instanceof ThreadlineError) || !["TL_ERR_INVALID_INPUT", "TL_ERR_NOT_FOUND"].includes(error.code)) throw error;
      skipped.push({ file: record.file, reason: error.message, alreadyPresent: present });
    }
  }
  skipped.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { imported, skipped };
}
