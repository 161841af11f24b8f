/**
 * What a backend supplies to the store core ({@link StoreCore}): only what truly differs
 * between databases. Everything else (validation, paging, title rules, lineage walking,
 * export/import, prune orchestration, the routing write) lives once in the core, written as
 * {@link Steps} over `?`-placeholder SQL that both dialects run.
 *
 * A dialect provides:
 * - **plumbing**: how a read and a write transaction run the core's steps (SQLite: its
 *   group-commit write queue, synchronously; PostgreSQL: a pooled client, with retries and
 *   per-session lanes), error translation and closing;
 * - **text and rows**: how free text is stored (PostgreSQL escapes NUL characters) and how a
 *   message row reads back (the two schemas store content flags differently);
 * - **SQL fragments** where the dialects' syntax differs;
 * - **optional capabilities** a database can do faster itself (SQLite writes an export line
 *   without reading messages into JavaScript);
 * - **backend-only steps**: the transcript with its search index (FTS5 vs tsvector), search,
 *   stats and insights, the gateway's routing entries and handoffs (whose locking and schemas
 *   differ), and the writer locks the shared queue, alias and execution logic takes (SQLite's write lock covers the whole database;
 *   PostgreSQL locks rows).
 *
 * @module
 */
import type { Handoff, Insights, LeaseFence, Message, Page, Route, RouteFields, SearchHit, SearchOptions, StoreCapabilities, StoreStats } from "../contract.js";
import type { CheckedClaimHandoff, CheckedHandoffResult, CheckedNewHandoff } from "../handoff-input.js";
import type { NormalizedMessage } from "../input-validation.js";
import type { CheckedInsightsOptions } from "../insights.js";
import type { CheckedListRoutes } from "../routing-input.js";
import type { ExportedMessage } from "../record-format.js";
import type { TextDecoder } from "../session-rows.js";
import type { UsageValueKind } from "../usage-update.js";
import type { Steps } from "./steps.js";

/** A route claimed for writing inside a routing write (opaque to the core). */
export interface RouteClaim {
  readonly __routeClaim?: never;
}

/** A backend's side of the store core. `M` is its stored (serialised) message form. */
export interface StoreDialect<M> {
  readonly capabilities: StoreCapabilities;
  /** Where the data lives, for messages (a file path; a URL without its password). */
  readonly location: string;
  /** True once {@link close} has begun. */
  readonly closed: boolean;

  // --- plumbing ---------------------------------------------------------------

  /**
   * Runs `steps` as a read (after this instance's queued writes; with a `lane`, at least after
   * those queued in that lane); errors come back translated.
   */
  read<T>(doing: string, steps: () => Steps<T>, lane?: string): Promise<T>;
  /**
   * Runs `steps` in one write transaction; resolves once durable. `lane` (a session id or a
   * queue key) keeps one instance's writes to it in call order where the backend needs that.
   * `steps` may run more than once (a retried transaction), so it must not keep state outside.
   */
  write<T>(doing: string, steps: () => Steps<T>, lane?: string): Promise<T>;
  /**
   * Runs `steps` that issue exactly one statement as a write of its own; resolves once durable.
   * A database that runs writes in an explicit transaction may send the statement without one
   * (a single statement is its own transaction: PostgreSQL saves BEGIN and COMMIT, two round
   * trips); otherwise it is {@link write}. Only for steps whose one statement decides alone
   * (an upsert with its condition, a guarded UPDATE); it may run more than once.
   */
  writeStatement<T>(doing: string, steps: () => Steps<T>, lane?: string): Promise<T>;
  /** Finishes pending work and releases the connection(s). */
  close(): Promise<void>;

  // --- text, rows and SQL fragments -------------------------------------------

  /** A free-text value as stored. */
  encodeText(value: string | null): string | null;
  /** Undoes {@link encodeText}. */
  readonly decodeText: TextDecoder;
  /** Appended to a `SELECT` whose rows a write must hold until commit (`""` where the write lock already covers them). */
  readonly forUpdate: string;
  /** Appended to a `SELECT` whose rows must not change until commit, while others may read them (`""` likewise). */
  readonly forShare: string;
  /** Appended to an `ORDER BY` column to sort text in code-point order (`""` where that is the default). */
  readonly bytewiseOrder: string;
  /** The columns of `messages` a message is read from (never a search vector). */
  readonly messageColumns: string;
  /** `LIMIT`/`OFFSET` text for a page (`limit` null: no limit). */
  limitOffset(limit: number | null, offset: number): string;
  /** The placeholder of a usage value of this kind (a typed cast where the database needs one). */
  usageParam(kind: Exclude<UsageValueKind, "text">): string;
  /** A `messages` row (read with {@link messageColumns}) as a contract message. */
  toMessage(row: unknown): Message;
  /** The columns of `messages` an exported message is read from, as tuples, in the order {@link toExportedMessage} takes them. */
  readonly exportedMessageColumns: string;
  /**
   * A `messages` row read as a tuple of {@link exportedMessageColumns} as a message of an export record: the
   * same keys, in the same order, with the same values as {@link toMessage} without `id` and `sessionId`.
   */
  toExportedMessage(tuple: unknown[]): ExportedMessage;
  /**
   * Optional: a session's export line written by the database itself, as UTF-8 bytes: `head`
   * (the record's JSON up to and including `"messages":`), the session's messages (`includeRewound`:
   * rewound ones too) as a JSON array in id order, `}` and `\n`. It must be byte for byte
   * `JSON.stringify` of the record the core would build from {@link toExportedMessage}, plus `\n`;
   * `null` when it cannot be for this session (the core then serialises the record itself).
   * Without it, every line is serialised by the core.
   */
  exportLine?(head: string, sessionId: string, includeRewound: boolean): Steps<Uint8Array | null>;

  // --- transcript and search index --------------------------------------------

  /** Serialises a validated message for storage (outside any transaction). */
  storeMessage(message: NormalizedMessage, rewoundAt?: number | null): M;
  /** Inserts messages; returns their ids in order. Counters are not touched. */
  insertMessages(sessionId: string, messages: M[]): Steps<number[]>;
  /**
   * Appends messages to a live session: throws NotFoundError when it is missing and
   * ConflictError when it has ended; inserts them and bumps its counters and preview.
   */
  appendMessages(sessionId: string, messages: M[]): Steps<number[]>;
  /**
   * The hottest write, whole: appends messages to a live session in the session's lane (one
   * instance's writes to it land in call order), as one write that resolves once durable.
   * With a `fence`, it is checked first and holds until the write commits (a takeover waits
   * for it); a lost lease throws LeaseLostError, a missing session NotFoundError, an ended one
   * ConflictError, each with nothing written. It means the fence check (`lease-steps.ts`) then
   * {@link appendMessages} in one {@link write}; a backend may do that in fewer round trips.
   */
  append(doing: string, sessionId: string, messages: M[], fence: LeaseFence | null): Promise<number[]>;
  /** Recomputes a session's counters, preview and last activity from its visible messages. */
  recomputeSummary(sessionId: string): Steps<void>;
  /** Recomputes a session's last activity. */
  refreshLastActive(sessionId: string): Steps<void>;
  /** Before a rewind hides a session's visible messages from `fromId` on: drops them from the search index. */
  unindexFrom(sessionId: string, fromId: number): Steps<void>;
  /** After rewound rows (read with {@link messageColumns}) are visible again: indexes them. */
  reindex(rows: unknown[]): Steps<void>;
  /** Searches messages (options already checked). */
  searchMessages(query: string, options: SearchOptions): Promise<SearchHit[]>;
  /**
   * At the start of a prune batch's write: keeps index upkeep that bulk deletions would
   * trigger out of the batch (SQLite: FTS5 segment merges), until {@link releaseIndexMerges}
   * at its end, in the same write.
   */
  holdIndexMerges(): Steps<void>;
  /** At the end of a prune batch's write: undoes {@link holdIndexMerges}. */
  releaseIndexMerges(): Steps<void>;
  /** After a prune deleted something: the index upkeep held during its batches, in bounded writes. */
  mergeIndex(): Promise<void>;
  /**
   * After an import or a prune changed many rows: lets the backend bring what its query
   * planner knows of the tables up to date (PostgreSQL: a background `ANALYZE` check). Starts
   * work in the background and returns at once; never throws.
   */
  afterBulkChange(): void;
  /**
   * Gives space freed by a prune back to the file system, when the backend can (best
   * effort). `full: false`: in bounded steps that let other writers in between; `full:
   * true`: the whole file at once (an explicit maintenance request).
   */
  compact(options: { full: boolean }): Promise<void>;

  // --- stats ------------------------------------------------------------------

  /** Totals, per-source and per-model figures, sizes. */
  stats(options: { searchIndexBytes?: boolean }): Promise<StoreStats>;
  /** Usage insights over one consistent snapshot. */
  insights(checked: CheckedInsightsOptions): Promise<Insights>;

  // --- gateway state ----------------------------------------------------------

  getRoute(key: string): Steps<Route | null>;
  routeBySession(sessionId: string): Steps<Route | null>;
  listRoutes(options: CheckedListRoutes): Steps<Page<Route>>;
  /**
   * Claims the routing entry `key` for a write expecting `expectedVersion` (`null`: must not
   * exist); `null` when the entry is not at that version (nothing is written then).
   */
  claimRoute(key: string, expectedVersion: number | null, route: RouteFields): Steps<RouteClaim | null>;
  /** Stores the route under a claim (its version is the expected one + 1). */
  storeRoute(claim: RouteClaim, key: string, route: RouteFields, expectedVersion: number | null): Steps<Route>;
  /** Serialises writers of an alias namespace until the transaction ends (no-op where a write already excludes other writers). */
  lockAliasNamespace(namespace: string): Steps<void>;
  /** Serialises writers of a key's inbound queue until the transaction ends (no-op where a write already excludes other writers). */
  lockQueue(key: string): Steps<void>;
  /** Serialises pairing writers of a platform until the transaction ends (no-op where a write already excludes other writers). */
  lockPairing(platform: string): Steps<void>;
  createHandoff(input: CheckedNewHandoff): Steps<Handoff>;
  getHandoff(id: string): Steps<Handoff | null>;
  claimHandoff(claim: CheckedClaimHandoff): Steps<Handoff | null>;
  finishHandoff(id: string, result: CheckedHandoffResult): Steps<Handoff>;

  // --- execution sessions -----------------------------------------------------

  /** The two-argument maximum function (`max` in SQLite, `greatest` in PostgreSQL). */
  readonly greatest: string;
  /** Serialises writers of these execution ids (sorted) until the transaction ends (no-op where a write already excludes other writers). */
  lockExecutions(ids: string[]): Steps<void>;
}
