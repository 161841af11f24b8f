/**
 * Runs the store core's {@link Steps} on PostgreSQL: each statement is awaited on the
 * given runner (the transaction's client, or the pool for a read). The core writes `?`
 * placeholders; they become `$1, $2, …` here, once per distinct text.
 *
 * @module
 */
import type { Step, Steps } from "../core/steps.js";
import type { Sql } from "./postgres-connection.js";

/** `?` placeholders numbered for PostgreSQL, by text (the core's texts are few and fixed, but bound the cache anyway). */
const numbered = new Map<string, string>();
const MAX_CACHED = 2_000;

/** The text with each `?` replaced by `$n` (the core never writes `?` inside a literal). */
export function numberPlaceholders(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    if (numbered.size >= MAX_CACHED) numbered.clear();
    numbered.set(sql, text);
  }
  return text;
}

async function execute(sql: Sql, step: Step): Promise<unknown> {
  if (step.kind === "native") return (step.run as (handle: Sql) => unknown)(sql);
  const text = numberPlaceholders(step.sql);
  const params = step.params as unknown[];
  switch (step.mode) {
    case "all":
      return sql.all(text, params);
    case "one":
      return sql.one(text, params);
    case "value":
      return sql.value(text, params);
    case "column":
      return sql.column(text, params);
    case "tuples":
      return sql.tuples(text, params);
    case "run":
      return sql.run(text, params);
  }
}

/** Runs `steps` to the end on `sql`; an error of a statement is thrown into the steps (which may catch it). */
export async function runSteps<T>(sql: Sql, steps: Steps<T>): Promise<T> {
  let next = steps.next();
  while (next.done !== true) {
    let result: unknown;
    try {
      result = await execute(sql, next.value);
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(result);
  }
  return next.value;
}
