/**
 * Shared plumbing of the contract specs: a fresh store per test, skip lists, and small
 * assertion helpers. Uses only the public `SessionDB` contract.
 *
 * @module
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewMessage, RouteFields, SessionDB, SessionUsage } from "../../src/store/contract.js";
import { StoreClosedError, ThreadlineError } from "../../src/store/errors.js";
import type { SessionDBTestInitializer } from "./session-db-test-initializer.js";

/** Access to the stores of the running test. */
export interface StoreContext {
  /** The store created for the running test (empty at the start of the test). */
  db(): SessionDB;
  /** Another empty, isolated store, destroyed after the test. */
  freshStore(): Promise<SessionDB>;
  /**
   * A second handle on the database of {@link db} (see `SessionDBTestInitializer.openAnother`),
   * closed after the test.
   */
  anotherHandle(): Promise<SessionDB>;
}

/** Registers one test (honouring the initializer's skip list). */
export type ContractTest = (name: string, fn: () => Promise<void>, timeoutMs?: number) => void;

async function destroy(init: SessionDBTestInitializer, store: SessionDB): Promise<void> {
  if (init.destroyStore) {
    await init.destroyStore(store);
    return;
  }
  try {
    await store.close();
  } catch (error) {
    if (!(error instanceof StoreClosedError)) throw error;
  }
}

function skipReason(init: SessionDBTestInitializer, area: string, name: string): string | null {
  for (const group of init.skip ?? []) {
    if (group.tests.includes(name) || group.tests.includes(`${area}: ${name}`)) return group.reason;
  }
  return null;
}

/**
 * Declares the specs of one contract area: `describe(area)` with a fresh store per test
 * (created in `beforeEach`, destroyed in `afterEach`).
 */
export function contractArea(init: SessionDBTestInitializer, area: string, body: (test: ContractTest, ctx: StoreContext) => void): void {
  describe(area, () => {
    let current: SessionDB | undefined;
    const extra: SessionDB[] = [];
    const handles: SessionDB[] = [];

    beforeEach(async () => {
      current = await init.createStore();
    });

    afterEach(async () => {
      // Second handles first: they share the database `destroy` removes.
      for (const handle of handles.splice(0)) {
        await handle.close().catch((e: unknown) => {
          if (!(e instanceof StoreClosedError)) throw e;
        });
      }
      const stores = [...(current ? [current] : []), ...extra.splice(0)];
      current = undefined;
      for (const store of stores) await destroy(init, store);
    });

    const ctx: StoreContext = {
      db() {
        if (!current) throw new Error("no store: db() is only available inside a test");
        return current;
      },
      async freshStore() {
        const store = await init.createStore();
        extra.push(store);
        return store;
      },
      async anotherHandle() {
        const handle = await init.openAnother(ctx.db());
        handles.push(handle);
        return handle;
      },
    };

    const test: ContractTest = (name, fn, timeoutMs) => {
      const reason = skipReason(init, area, name);
      if (reason !== null) it.skip(`${name} [skipped for ${init.name}: ${reason}]`, fn);
      else it(name, fn, timeoutMs);
    };

    body(test, ctx);
  });
}

type ErrorClass<E> = abstract new (...args: never[]) => E;

/**
 * Asserts that the call rejects with an error of `cls` (a `ThreadlineError` with a
 * stable code) whose message matches `message` when given; returns the error.
 */
export async function expectReject<E extends Error>(call: () => Promise<unknown>, cls: ErrorClass<E>, message?: RegExp): Promise<E> {
  let caught: unknown;
  let threw = false;
  try {
    await call();
  } catch (error) {
    threw = true;
    caught = error;
  }
  expect(threw, `expected a ${cls.name}, but the call resolved`).toBe(true);
  expect(caught, `expected a ${cls.name}, got ${String(caught)}`).toBeInstanceOf(cls);
  expect(caught).toBeInstanceOf(ThreadlineError);
  const error = caught as E;
  if (message) expect(error.message).toMatch(message);
  return error;
}

/** Collects an async iterable into an array. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** One day in seconds. */
export const DAY = 86_400;

/** The current time in epoch seconds. */
export function nowSeconds(): number {
  return Date.now() / 1000;
}

/** A plain user message. */
export function user(content: string, timestamp?: number): NewMessage {
  return timestamp === undefined ? { role: "user", content } : { role: "user", content, timestamp };
}

/** A plain assistant message. */
export function assistant(content: string, timestamp?: number): NewMessage {
  return timestamp === undefined ? { role: "assistant", content } : { role: "assistant", content, timestamp };
}

/** Ids of records (sessions, summaries, hits…). */
export function ids(items: ReadonlyArray<{ id: string }>): string[] {
  return items.map((item) => item.id);
}

/** The usage totals of a session nothing has been recorded for. */
export const ZERO_USAGE: SessionUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  apiCalls: 0,
  estimatedCostUsd: 0,
  actualCostUsd: null,
  billingProvider: null,
  billingMode: null,
  costStatus: null,
};

/** Every routing field at its zero value, for `sessionId` at time `at`, with `overrides`. */
export function routeFields(sessionId: string, at: number, overrides: Partial<RouteFields> = {}): RouteFields {
  return {
    sessionId,
    createdAt: at,
    updatedAt: at,
    origin: null,
    displayName: null,
    platform: "telegram",
    chatType: "dm",
    wasAutoReset: false,
    autoResetReason: null,
    resetHadActivity: false,
    isFreshReset: false,
    expiryFinalized: false,
    suspended: false,
    resumePending: false,
    resumeReason: null,
    lastResumeMarkedAt: null,
    lastPromptTokens: 0,
    turnStartedAt: null,
    interruptedRestarts: 0,
    finalizeFailures: 0,
    ...overrides,
  };
}
