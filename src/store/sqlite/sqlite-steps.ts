/**
 * Runs the store core's {@link Steps} on a SQLite connection, synchronously: every
 * statement executes on the calling tick, so a write's steps run whole inside the write
 * queue's transaction and a read's steps see one consistent state.
 *
 * @module
 */
import type { Step, Steps } from "../core/steps.js";
import type { SqliteConnection } from "./sqlite-connection.js";

function execute(conn: SqliteConnection, step: Step): unknown {
  if (step.kind === "native") return (step.run as (handle: SqliteConnection) => unknown)(conn);
  const statement = conn.stmt(step.sql);
  if (step.mode === "tuples") {
    // raw() sticks to the cached statement: switch it back for the next object read.
    try {
      return statement.raw(true).all(...step.params);
    } finally {
      statement.raw(false);
    }
  }
  switch (step.mode) {
    case "all": {
      if (!statement.reader) return statement.pluck(false).all(...step.params); // throws as better-sqlite3 does
      let rows: unknown[][];
      try {
        rows = statement.raw(true).all(...step.params) as unknown[][];
      } finally {
        statement.raw(false);
      }
      const maker = conn.rowMaker(statement.columns().map((c) => c.name));
      return maker === null ? statement.all(...step.params) : rows.map(maker);
    }
    case "one":
      return statement.pluck(false).get(...step.params);
    case "value":
      return statement.pluck(true).get(...step.params);
    case "column":
      return statement.pluck(true).all(...step.params);
    case "run":
      return statement.run(...step.params).changes;
  }
}

/** Runs `steps` to the end on `conn`; an error of a statement is thrown into the steps (which may catch it). */
export function runSteps<T>(conn: SqliteConnection, steps: Steps<T>): T {
  let next = steps.next();
  while (next.done !== true) {
    let result: unknown;
    try {
      result = execute(conn, next.value);
    } catch (error) {
      next = steps.throw(error);
      continue;
    }
    next = steps.next(result);
  }
  return next.value;
}
