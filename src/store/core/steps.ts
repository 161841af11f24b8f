/**
 * Store logic written once, run by every backend: a core operation is a generator that
 * yields the statements it needs ({@link Step}s) and receives each result back. A backend
 * supplies only the loop that runs them: SQLite runs the generator synchronously inside its
 * write queue's transaction (one tick, so nothing interleaves and group commit stays as it
 * is); PostgreSQL awaits each statement on the transaction's client. SQL text uses `?`
 * placeholders; a backend whose driver numbers them (`$1`) rewrites them once per text.
 *
 * A backend-only piece of work (its search index, a statement only its dialect can write)
 * is a `native` step: a function of the backend's own connection handle, which only that
 * backend's run loop ever receives.
 *
 * @example
 * function* sessionTitle(id: string): Steps<string | null> {
 *   const row = yield* one<{ title: string | null }>("SELECT title FROM sessions WHERE id = ?", [id]);
 *   return row?.title ?? null;
 * }
 *
 * @module
 */

/** What a statement step asks for: every row, the first row, the first column of the first row, the first column of every row, or the affected row count. */
export type StepMode = "all" | "one" | "value" | "column" | "tuples" | "run";

/** One statement (`?` placeholders), or a backend-native function of its connection handle. */
export type Step =
  | { readonly kind: "sql"; readonly mode: StepMode; readonly sql: string; readonly params: readonly unknown[] }
  | { readonly kind: "native"; readonly run: (handle: never) => unknown };

/** A piece of store logic that yields steps and returns `T`. */
export type Steps<T> = Generator<Step, T, unknown>;

/** Every row of a query. */
export function* all<T>(sql: string, params: readonly unknown[] = []): Steps<T[]> {
  return (yield { kind: "sql", mode: "all", sql, params }) as T[];
}

/**
 * Every row as an array of its column values, in the order the `SELECT` names them (no
 * object per row: for reads of many rows, such as an export).
 */
export function* tuples(sql: string, params: readonly unknown[] = []): Steps<unknown[][]> {
  return (yield { kind: "sql", mode: "tuples", sql, params }) as unknown[][];
}

/** The first row of a query, or `undefined`. */
export function* one<T>(sql: string, params: readonly unknown[] = []): Steps<T | undefined> {
  return (yield { kind: "sql", mode: "one", sql, params }) as T | undefined;
}

/** The first column of the first row, or `undefined` when there is no row. */
export function* value<T>(sql: string, params: readonly unknown[] = []): Steps<T | undefined> {
  return (yield { kind: "sql", mode: "value", sql, params }) as T | undefined;
}

/** The first column of every row. */
export function* column<T>(sql: string, params: readonly unknown[] = []): Steps<T[]> {
  return (yield { kind: "sql", mode: "column", sql, params }) as T[];
}

/** Runs a statement; returns how many rows it changed. */
export function* run(sql: string, params: readonly unknown[] = []): Steps<number> {
  return (yield { kind: "sql", mode: "run", sql, params }) as number;
}

/**
 * A backend-native step: `fn` receives the backend's connection handle (SQLite: its
 * connection, synchronously; PostgreSQL: the transaction's query runner, awaited). Only a
 * backend creates these, for its own handle type.
 */
export function* native<H, T>(fn: (handle: H) => T): Steps<Awaited<T>> {
  return (yield { kind: "native", run: fn as (handle: never) => unknown }) as Awaited<T>;
}

/** `?, ?, ?` for a list of `n` values (an `IN (…)` list; `n` must be at least 1). */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}
