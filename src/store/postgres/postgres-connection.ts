/**
 * The connection pool and a small query helper. Every pooled connection uses the
 * configured schema as its `search_path`; bigint results come back as numbers.
 *
 * @module
 */
import { userInfo } from "node:os";
import pg from "pg";
import type { PostgresConfig } from "./postgres-config.js";
import { quoteIdent } from "./postgres-migrations.js";

/** int8 (counts, ids, token totals) as a JavaScript number: all our values fit in 2^53. */
const TYPES = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20 && format !== "binary") return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as "text");
  },
} as unknown as pg.CustomTypesConfig;

/** Creates the pool for a resolved config. */
export function createPool(config: Required<PostgresConfig>): pg.Pool {
  const pool = new pg.Pool({
    connectionString: withDefaultUser(config.connectionString),
    max: config.poolSize,
    options: `-c search_path=${quoteIdent(config.schema)}`,
    types: TYPES,
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  return pool;
}

/** A query runner over one client (inside a transaction) or the pool (single statements). */
export class Sql {
  readonly #runner: pg.Pool | pg.ClientBase;

  constructor(runner: pg.Pool | pg.ClientBase) {
    this.#runner = runner;
  }

  /** Every row. */
  async all<T>(text: string, params: unknown[] = []): Promise<T[]> {
    return (await this.#runner.query(text, params)).rows as T[];
  }

  /** The first row, or `undefined`. */
  async one<T>(text: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.#runner.query(text, params)).rows[0] as T | undefined;
  }

  /** The first column of the first row, or `undefined`. */
  async value<T>(text: string, params: unknown[] = []): Promise<T | undefined> {
    const row = (await this.#runner.query({ text, values: params, rowMode: "array" })).rows[0] as unknown[] | undefined;
    return row?.[0] as T | undefined;
  }

  /** The first column of every row. */
  async column<T>(text: string, params: unknown[] = []): Promise<T[]> {
    return ((await this.#runner.query({ text, values: params, rowMode: "array" })).rows as unknown[][]).map((r) => r[0] as T);
  }

  /** Every row as an array of its column values. */
  async tuples(text: string, params: unknown[] = []): Promise<unknown[][]> {
    return (await this.#runner.query({ text, values: params, rowMode: "array" })).rows as unknown[][];
  }

  /**
   * Every row of a statement prepared under `name` on each connection (parsed and planned once
   * there, then only bound and executed). A name must always stand for the same text.
   */
  async prepared<T>(statement: { name: string; text: string; values: unknown[] }): Promise<T[]> {
    return (await this.#runner.query(statement)).rows as T[];
  }

  /** Runs a statement; returns the affected row count. */
  async run(text: string, params: unknown[] = []): Promise<number> {
    return (await this.#runner.query(text, params)).rowCount ?? 0;
  }
}

/**
 * Like libpq, a URL without a user name logs in as the operating-system user
 * (node-postgres only looks at `$USER`, which is unset in some service environments).
 * Returns the connection string to use.
 */
export function withDefaultUser(connectionString: string): string {
  if (process.env["PGUSER"] || process.env["USER"]) return connectionString;
  try {
    const url = new URL(connectionString);
    if (url.username !== "") return connectionString;
    url.username = userInfo().username;
    return url.toString();
  } catch {
    return connectionString; // let the driver report a malformed URL
  }
}
