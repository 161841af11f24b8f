/**
 * Validation of the execution-session calls of {@link ExecutionStore} (`writeExecutions`,
 * `findExecutions`, `listExecutions`, `listExecutionUnits`): both backends run these
 * checks before touching storage, so bad input fails the same way everywhere and nothing
 * is half-written.
 *
 * @module
 */
import type { ExecutionChange, ExecutionKind, ExecutionWrite, FindExecutionsOptions, ListExecutionUnitsOptions, ListExecutionsOptions } from "./contract.js";
import { decodeCursor, type CursorPosition } from "./cursor.js";
import { InvalidInputError } from "./errors.js";
import { EXECUTION_LIST_ORDER } from "./execution-rows.js";
import { checkId, checkLimit, checkOffset, checkTime, checkUserIdFilter, toJson } from "./input-validation.js";

export { checkUserIdFilter };

/** Largest stored result, as JSON in UTF-8 bytes (64 MiB). */
export const MAX_EXECUTION_RESULT_BYTES = 64 * 1024 * 1024;
/** Most records one change may put or delete. */
export const MAX_EXECUTION_CHANGE = 10_000;
/** Default and largest page of `listExecutions`. */
export const DEFAULT_EXECUTION_PAGE = 50;
export const MAX_EXECUTION_PAGE = 100;

const KINDS: readonly string[] = ["agent", "workflow"] satisfies ExecutionKind[];

/** A checked put: the write with its JSON text resolved. */
export interface CheckedExecutionWrite {
  id: string;
  kind: ExecutionKind;
  name: string;
  baseId: string;
  parentId: string | null;
  userId: string | null;
  createdAt: number | null;
  updatedAt: number;
  resultJson: string;
  messageCount: number;
  agentsJson: string | null;
  expectedVersion: number | null | undefined;
}

/** A checked change. */
export interface CheckedExecutionChange {
  put: CheckedExecutionWrite[];
  delete: string[];
}

function checkKind(value: unknown, field: string): ExecutionKind {
  if (typeof value !== "string" || !KINDS.includes(value)) {
    throw new InvalidInputError(`${field} must be "agent" or "workflow".`, { field });
  }
  return value as ExecutionKind;
}

function checkWrite(write: ExecutionWrite, i: number): CheckedExecutionWrite {
  const at = `put[${i}]`;
  if (write === null || typeof write !== "object") throw new InvalidInputError(`${at} must be an object.`, { field: at });
  const id = checkId(write.id, `${at}.id`);
  const kind = checkKind(write.kind, `${at}.kind`);
  const parentId = write.parentId === undefined || write.parentId === null ? null : checkId(write.parentId, `${at}.parentId`);
  if (parentId === id) throw new InvalidInputError(`${at}: a record cannot be its own parent.`, { field: `${at}.parentId` });
  if (parentId !== null && kind !== "agent") {
    throw new InvalidInputError(`${at}: a workflow step is an agent run; a workflow cannot have a parent.`, { field: `${at}.kind` });
  }
  const { messageCount, expectedVersion } = write;
  if (typeof messageCount !== "number" || !Number.isSafeInteger(messageCount) || messageCount < 0) {
    throw new InvalidInputError(`${at}.messageCount must be a whole number of 0 or more.`, { field: `${at}.messageCount` });
  }
  if (
    expectedVersion !== undefined &&
    expectedVersion !== null &&
    (typeof expectedVersion !== "number" || !Number.isSafeInteger(expectedVersion) || expectedVersion < 1)
  ) {
    throw new InvalidInputError(`${at}.expectedVersion must be null or a whole number of 1 or more.`, {
      field: `${at}.expectedVersion`,
    });
  }
  if (write.result === undefined) throw new InvalidInputError(`${at}.result is required (any JSON value).`, { field: `${at}.result` });
  const resultJson = toJson(write.result, `${at}.result`);
  const bytes = Buffer.byteLength(resultJson);
  if (bytes > MAX_EXECUTION_RESULT_BYTES) {
    throw new InvalidInputError(`${at}.result is ${bytes} bytes as JSON; the limit is ${MAX_EXECUTION_RESULT_BYTES} (64 MiB).`, {
      field: `${at}.result`,
    });
  }
  let agentsJson: string | null = null;
  if (write.agentsInvolved !== null && write.agentsInvolved !== undefined) {
    const agents = write.agentsInvolved as unknown;
    if (typeof agents !== "object" || Array.isArray(agents)) {
      throw new InvalidInputError(`${at}.agentsInvolved must be an object (session id → agent name) or null.`, {
        field: `${at}.agentsInvolved`,
      });
    }
    for (const [key, value] of Object.entries(agents as Record<string, unknown>)) {
      checkId(key, `${at}.agentsInvolved`);
      if (typeof value !== "string") {
        throw new InvalidInputError(`${at}.agentsInvolved["${key}"] must be an agent name (a string).`, {
          field: `${at}.agentsInvolved`,
        });
      }
    }
    agentsJson = toJson(agents, `${at}.agentsInvolved`);
  }
  return {
    id,
    kind,
    name: checkId(write.name, `${at}.name`),
    baseId: checkId(write.baseId, `${at}.baseId`),
    parentId,
    userId: write.userId === undefined || write.userId === null ? null : checkId(write.userId, `${at}.userId`),
    createdAt: write.createdAt === undefined ? null : checkTime(write.createdAt, `${at}.createdAt`, 0),
    updatedAt: checkTime(write.updatedAt ?? Number.NaN, `${at}.updatedAt`, 0),
    resultJson,
    messageCount,
    agentsJson,
    expectedVersion,
  };
}

/** Validates a change (every put and id) before anything is written. */
export function checkExecutionChange(change: ExecutionChange): CheckedExecutionChange {
  if (change === null || typeof change !== "object") {
    throw new InvalidInputError("writeExecutions needs { put?, delete? }.", { field: "change" });
  }
  const puts = change.put ?? [];
  const deletes = change.delete ?? [];
  if (!Array.isArray(puts)) throw new InvalidInputError("put must be an array of records.", { field: "put" });
  if (!Array.isArray(deletes)) throw new InvalidInputError("delete must be an array of ids.", { field: "delete" });
  if (puts.length + deletes.length > MAX_EXECUTION_CHANGE) {
    throw new InvalidInputError(`One change may put and delete at most ${MAX_EXECUTION_CHANGE} records.`, { field: "put" });
  }
  const put = puts.map((w, i) => checkWrite(w, i));
  const seen = new Set<string>();
  for (const w of put) {
    if (seen.has(w.id)) throw new InvalidInputError(`The id "${w.id}" is put twice in one change.`, { field: "put" });
    seen.add(w.id);
  }
  return { put, delete: [...new Set(deletes.map((id, i) => checkId(id, `delete[${i}]`)))] };
}

/** A checked `findExecutions` query. */
export interface CheckedFindExecutions {
  by: "idPrefix" | "baseId" | "parentId";
  value: string;
  withoutStepsOfMatches: boolean;
  userId: string | null;
  limit: number;
}

/** Validates `findExecutions` options. */
export function checkFindExecutions(options: FindExecutionsOptions): CheckedFindExecutions {
  if (options === null || typeof options !== "object") {
    throw new InvalidInputError("findExecutions needs { idPrefix } , { baseId } or { parentId }.", { field: "options" });
  }
  const given = (["idPrefix", "baseId", "parentId"] as const).filter((k) => options[k] !== undefined);
  if (given.length !== 1) {
    throw new InvalidInputError("findExecutions takes exactly one of idPrefix, baseId and parentId.", {
      field: given[1] ?? "idPrefix",
    });
  }
  const by = given[0]!;
  return {
    by,
    value: checkId(options[by], by),
    withoutStepsOfMatches: options.withoutStepsOfMatches === true,
    userId: checkUserIdFilter(options.userId),
    limit: checkLimit(options.limit, 100),
  };
}

/** A checked `listExecutions` query. */
export interface CheckedListExecutions {
  kind: ExecutionKind | null;
  name: string | null;
  directOnly: boolean;
  userId: string | null;
  limit: number;
  /** Rows after this position only (the decoded `cursor`: `key` is the `updatedAt`), or null from the start. */
  after: CursorPosition | null;
  offset: number;
}

/** Validates `listExecutions` options. */
export function checkListExecutions(options: ListExecutionsOptions = {}): CheckedListExecutions {
  if (options === null || typeof options !== "object") throw new InvalidInputError("listExecutions options must be an object.");
  const hasKind = options.kind !== undefined && options.kind !== null;
  const hasName = options.name !== undefined && options.name !== null;
  if (hasKind !== hasName) {
    throw new InvalidInputError("kind and name filter together: give both or neither.", { field: hasKind ? "name" : "kind" });
  }
  return {
    kind: hasKind ? checkKind(options.kind, "kind") : null,
    name: hasName ? checkId(options.name, "name") : null,
    directOnly: options.directOnly === true,
    userId: checkUserIdFilter(options.userId),
    limit: checkLimit(options.limit, DEFAULT_EXECUTION_PAGE, MAX_EXECUTION_PAGE),
    after: options.cursor === undefined || options.cursor === null ? null : decodeCursor(options.cursor, EXECUTION_LIST_ORDER),
    offset: checkOffset(options.offset),
  };
}

/** A checked `listExecutionUnits` query. */
export interface CheckedListExecutionUnits {
  updatedBefore: number | null;
  offset: number;
  userId: string | null;
  limit: number;
}

/** Validates `listExecutionUnits` options. */
export function checkListExecutionUnits(options: ListExecutionUnitsOptions = {}): CheckedListExecutionUnits {
  if (options === null || typeof options !== "object") throw new InvalidInputError("listExecutionUnits options must be an object.");
  const before = options.updatedBefore;
  if (before !== undefined && (typeof before !== "number" || Number.isNaN(before))) {
    throw new InvalidInputError("updatedBefore must be a time in epoch seconds.", { field: "updatedBefore" });
  }
  return {
    updatedBefore: before ?? null,
    offset: checkOffset(options.offset),
    userId: checkUserIdFilter(options.userId),
    limit: checkLimit(options.limit, 100),
  };
}
