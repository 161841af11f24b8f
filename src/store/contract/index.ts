/**
 * The storage contract every Threadline backend implements (`SessionDB`), the roles it is
 * cut into (`SessionHistory`, `SessionSearch`, `GatewayState` and its parts, `ExecutionStore`,
 * `MetaStore`, `StoreMaintenance`: a caller asks only for the roles it calls), and the
 * records it reads and writes. Nothing here knows about SQLite or PostgreSQL.
 *
 * Conventions: times are Unix epoch **seconds** (float); ids are strings; methods
 * that look something up return `null` when it is missing, methods that act on a
 * named session throw {@link NotFoundError} when it is missing.
 *
 * @module
 */
import type { ExecutionStore } from "./executions.js";
import type { GatewayState } from "./gateway-state.js";
import type { SessionHistory } from "./history.js";
import type { StoreMaintenance } from "./maintenance.js";
import type { MediaStore } from "./media.js";
import type { MemoryStore } from "./memory.js";
import type { MetaStore } from "./meta.js";
import type { SessionSearch } from "./search.js";

// --- the roles ------------------------------------------------------------------
//
// The contract is cut into the roles its callers play: a layer asks for the roles it calls
// (the executions layer an `ExecutionStore`, the agent tools `SessionHistory & SessionSearch
// & AliasStore`, …), and one object, a `SessionDB`, implements them all. Each role lives in
// its own file with the records it reads and writes; this file re-exports them all. A role
// file that holds only types is re-exported with `export type *`: nothing loads it at run time
// (eleven modules fewer for every process that opens a store; issue 31).

export type * from "./page.js";
export * from "./history.js";
export type * from "./search.js";
export type * from "./routes.js";
export type * from "./aliases.js";
export type * from "./queue.js";
export type * from "./leases.js";
export * from "./handoffs.js";
export type * from "./pairing.js";
export * from "./inbound-claims.js";
export type * from "./gateway-state.js";
export type * from "./executions.js";
export * from "./memory.js";
export * from "./media.js";
export type * from "./meta.js";
export type * from "./maintenance.js";

/**
 * The session storage contract: every role in one object, as `openSessionDB` returns it and
 * every backend implements it. Every method is async; every write is durable when its
 * promise resolves. One instance may be shared by any number of concurrent callers in a
 * process; several processes may share one database. Code that uses only part of it asks
 * for that role ({@link SessionHistory}, {@link SessionSearch}, {@link GatewayState} and its
 * parts, {@link ExecutionStore}, {@link MemoryStore}, {@link MediaStore}, {@link MetaStore}, {@link StoreMaintenance}).
 */
export interface SessionDB extends SessionHistory, SessionSearch, GatewayState, ExecutionStore, MemoryStore, MediaStore, MetaStore, StoreMaintenance {}
