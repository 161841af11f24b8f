/**
 * The {@link ExecutionStore} role (the stored results of agent and workflow runs) and its records.
 * Part of the storage contract (see `./index.ts`).
 *
 * @module
 */
import type { Page } from "./page.js";

/** What an execution session records: one agent run, or a workflow run whose steps are agent runs. */
export type ExecutionKind = "agent" | "workflow";

/** An execution session without its result (listing, resolution). See `threadline/executions`. */
export interface ExecutionSummary {
  id: string;
  kind: ExecutionKind;
  /** The agent or workflow name. */
  name: string;
  /** Groups a workflow with its steps (and any run started from the same user-given id). */
  baseId: string;
  /** For a workflow step: the workflow it is a step of; otherwise `null`. */
  parentId: string | null;
  /** The owner (a user or tenant id), or `null`. */
  userId: string | null;
  /** When it was first stored; never changes. */
  createdAt: number;
  updatedAt: number;
  /** For a record without a parent: the newest `updatedAt` of it and its steps (its retention age); for a step, its own `updatedAt`. */
  unitUpdatedAt: number;
  messageCount: number;
  /** Step session id → agent name; `null` when there are none. */
  agentsInvolved: Record<string, string> | null;
  /** Starts at 1 and grows by one on every write of the record (for {@link ExecutionWrite.expectedVersion}). */
  version: number;
}

/** A stored execution session with its full result. */
export interface ExecutionRecord extends ExecutionSummary {
  /** The result as stored (any JSON value). */
  result: unknown;
}

/** An execution session to insert or replace (see {@link ExecutionStore.writeExecutions}). */
export interface ExecutionWrite {
  /** An id-like string (1–256 characters, no control characters). */
  id: string;
  kind: ExecutionKind;
  /** An id-like string. */
  name: string;
  /** An id-like string. */
  baseId: string;
  /** The workflow this record is a step of: it must exist (or be put earlier in the same change), be a workflow and have no parent itself; a step is an `agent`. */
  parentId?: string | null;
  userId?: string | null;
  /** Used only when the record is new (default: `updatedAt`); an existing record keeps its creation time. */
  createdAt?: number;
  updatedAt: number;
  /** Any JSON value (at most 64 MiB as JSON). */
  result: unknown;
  /** A whole number ≥ 0. */
  messageCount: number;
  agentsInvolved: Record<string, string> | null;
  /**
   * Optimistic concurrency: `null` means the record must not exist yet, a number that it must
   * be at this version. When any expectation of a change fails nothing is written.
   * Omitted: written whatever is stored.
   */
  expectedVersion?: number | null;
}

/** One atomic change of execution sessions: puts (in order), then deletions. */
export interface ExecutionChange {
  /** Records to insert or replace (each id at most once). */
  put?: ExecutionWrite[];
  /** Ids to delete, each with its steps (records whose `parentId` is it). Unknown ids are ignored. */
  delete?: string[];
}

/** What {@link ExecutionStore.writeExecutions} did. */
export interface ExecutionChangeResult {
  /** The stored records of the puts, in order. */
  stored: ExecutionSummary[];
  /** Every deleted id: each deleted record, followed by its steps in id order. */
  deleted: string[];
}

/** Options of {@link ExecutionStore.findExecutions}: exactly one of `idPrefix`, `baseId`, `parentId`. */
export interface FindExecutionsOptions {
  /** Records whose id starts with this (the id itself included). */
  idPrefix?: string;
  /** Records with this base id. */
  baseId?: string;
  /** The steps of this workflow. */
  parentId?: string;
  /** Leave out every match whose parent is itself a match (the steps of a matching workflow). Default false. */
  withoutStepsOfMatches?: boolean;
  /** Only records of this owner. */
  userId?: string;
  /** Default 100, 1 to 1,000. */
  limit?: number;
}

/** Options of {@link ExecutionStore.listExecutions}. Newest `updatedAt` first. */
export interface ListExecutionsOptions {
  /** With `name`: only records of this kind and name. The two go together. */
  kind?: ExecutionKind;
  name?: string;
  /** Leave out workflow steps (records with a parent). Default false. */
  directOnly?: boolean;
  /** Only records of this owner. */
  userId?: string;
  /** Default 50, 1 to 100. */
  limit?: number;
  /**
   * `nextCursor` of the previous page, with the same filters (keyset paging: a record
   * written meanwhile is neither repeated nor skipped because of the others' moves).
   */
  cursor?: string | null;
  /** Rows to skip first (default 0), after `cursor` when both are given. */
  offset?: number;
}

/**
 * Options of {@link ExecutionStore.listExecutionUnits}: records without a parent (each a unit with
 * its steps), newest `unitUpdatedAt` first.
 */
export interface ListExecutionUnitsOptions {
  /** Only units whose `unitUpdatedAt` is strictly before this time. */
  updatedBefore?: number;
  /** Units to skip, newest first (default 0). */
  offset?: number;
  /** Only units of this owner. */
  userId?: string;
  /** Default 100, 1 to 1,000. */
  limit?: number;
}

/** Execution sessions: the stored results of agent and workflow runs (see `threadline/executions`). */
export interface ExecutionStore {
  /**
   * Applies puts and deletions of execution sessions in one transaction and returns what it
   * stored and deleted, or `null` (nothing written) when an `expectedVersion` did not hold.
   * A put keeps an existing record's `createdAt`; a deletion takes the record's steps with it.
   * Keeps `unitUpdatedAt` and the listing totals up to date.
   */
  writeExecutions(change: ExecutionChange): Promise<ExecutionChangeResult | null>;
  /** The execution session with its result, or `null`. */
  getExecution(id: string): Promise<ExecutionRecord | null>;
  /** Records by id prefix, base id or parent, in id order, at most `limit` (index-backed). */
  findExecutions(options: FindExecutionsOptions): Promise<ExecutionSummary[]>;
  /**
   * A page of records, newest `updatedAt` first, with a keyset cursor and the `total` after
   * filtering (index-backed; the total is kept on write, so it costs one row read).
   */
  listExecutions(options?: ListExecutionsOptions): Promise<Page<ExecutionSummary> & { total: number }>;
  /** Records without a parent (retention units), newest `unitUpdatedAt` first. */
  listExecutionUnits(options?: ListExecutionUnitsOptions): Promise<ExecutionSummary[]>;
}
