/**
 * What a backend provides to run the `SessionDB` contract suite against it.
 *
 * Isolation rule: every `createStore()` returns a store with empty state that no other
 * store created by the same initializer can see (SQLite: a fresh temp file; PostgreSQL:
 * a fresh schema). `destroyStore()` closes it and removes whatever it created.
 *
 * @module
 */

import type { SessionDB } from "../../src/store/contract.js";

/** Wires one `SessionDB` backend into the contract suite (see `runContract`). */
export interface SessionDBTestInitializer {
  /** Backend name, used as the top-level `describe` and matched by `THREADLINE_STORES`. */
  name: string;
  /** Runs once before the whole suite (start a server, create a database…). */
  beforeAll?(): Promise<void>;
  /** Timeout of `beforeAll` in milliseconds (default: vitest's hook timeout). */
  beforeAllTimeoutMs?: number;
  /** Runs once after the whole suite. */
  afterAll?(): Promise<void>;
  /** A new store with empty, isolated state. */
  createStore(): Promise<SessionDB>;
  /**
   * Closes the store and removes its data. It may be called on a store that is already
   * closed. Without it the suite just calls `store.close()`.
   */
  destroyStore?(store: SessionDB): Promise<void>;
  /**
   * Opens a second handle on the same database as `store` (as another process or replica
   * would), for the specs that race two handles. The suite closes it (before destroying
   * `store`). Every backend provides it.
   */
  openAnother(store: SessionDB): Promise<SessionDB>;
  /**
   * Runs one statement straight on the store's database, outside the store (`?` placeholders),
   * for the specs that must damage stored data to see the store notice it. Optional: the specs
   * that need it are skipped without it.
   */
  execRaw?(store: SessionDB, sql: string, params: unknown[]): Promise<void>;
  /**
   * Tests this backend cannot run, each group with the reason. A test is named
   * `"<area>: <test name>"` (e.g. `"search: CJK: Korean substrings"`) or just by its name.
   */
  skip?: { reason: string; tests: string[] }[];
}
