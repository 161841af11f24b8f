/**
 * `openSessionDB(target)`: the one place that picks a backend from a target string.
 *
 * @module
 */
import type { SessionDB } from "./contract.js";
import { defaultDatabasePath } from "./data-home.js";
import { DriverMissingError, InvalidInputError } from "./errors.js";

/** Options for {@link openSessionDB}: SQLite ones apply to file targets, PostgreSQL ones to URLs. */
export interface OpenSessionDBOptions {
  /** SQLite durability (default `FULL`). */
  synchronous?: "FULL" | "NORMAL" | "OFF";
  /** How long a write waits for another process's lock before failing (default 30,000 ms). */
  lockTimeoutMs?: number;
  /** PostgreSQL: the schema holding the tables (default `public`, created if missing). */
  schema?: string;
  /** PostgreSQL: connections in the pool (default 10). */
  poolSize?: number;
}

/**
 * Opens a session database.
 *
 * - nothing: `$THREADLINE_DB` if set, else `state.db` in the data home
 *   (`$THREADLINE_HOME`, else `~/.threadline`);
 * - a file path: SQLite at that path (created if missing);
 * - a `postgres://` (or `postgresql://`) URL: PostgreSQL (schema created and migrated if missing);
 *   a `?schema=name` parameter picks the schema (the `schema` option wins over it).
 *
 * @example
 * const db = await openSessionDB();               // ~/.threadline/state.db
 * const tmp = await openSessionDB("/tmp/t.db");   // an explicit file
 * const pg = await openSessionDB("postgres://127.0.0.1:5432/app"); // a shared server
 */
export async function openSessionDB(target?: string, options: OpenSessionDBOptions = {}): Promise<SessionDB> {
  const chosen = chooseDatabaseTarget(target);
  if (chosen.backend === "postgres") {
    const { PostgresSessionDB } = await importPostgresBackend();
    const chosenSchema = options.schema ?? chosen.schema;
    return PostgresSessionDB.open({
      connectionString: chosen.url,
      ...(chosenSchema === undefined ? {} : { schema: chosenSchema }),
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    });
  }
  const { SqliteSessionDB } = await import("./sqlite/index.js");
  const { schema: _schema, poolSize: _poolSize, ...sqliteOptions } = options;
  return SqliteSessionDB.open({ path: chosen.path, ...sqliteOptions });
}

/**
 * Loads the PostgreSQL backend, whose driver `pg` is an optional peer dependency.
 *
 * @throws {DriverMissingError} when `pg` is not installed.
 */
async function importPostgresBackend(): Promise<typeof import("./postgres/index.js")> {
  try {
    return await import("./postgres/index.js");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const message = error instanceof Error ? error.message : "";
    if (code === "ERR_MODULE_NOT_FOUND" && /['"]pg['"]/u.test(message)) {
      throw new DriverMissingError(
        "pg",
        "Opening a postgres:// database needs the PostgreSQL driver, which is not installed. Install it next to threadline (npm install pg) and try again.",
        { cause: error },
      );
    }
    throw error;
  }
}

/** A database target resolved to its backend (see {@link openSessionDB} for the rules). */
export type ChosenDatabaseTarget = { backend: "postgres"; url: string; schema: string | undefined } | { backend: "sqlite"; path: string };

/**
 * Resolves a target as {@link openSessionDB} does (nothing → `$THREADLINE_DB`, else the
 * default file) without opening it.
 */
export function chooseDatabaseTarget(target?: string): ChosenDatabaseTarget {
  const fromEnv = process.env["THREADLINE_DB"];
  const chosen = target ?? (fromEnv !== undefined && fromEnv.trim() !== "" ? fromEnv : defaultDatabasePath());
  if (typeof chosen !== "string" || chosen.trim() === "") {
    throw new InvalidInputError("The database target is empty; pass a file path or a postgres:// URL.", { field: "target" });
  }
  if (/^postgres(ql)?:\/\//iu.test(chosen)) {
    const { url, schema } = splitSchemaParam(chosen);
    return { backend: "postgres", url, schema };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(chosen) && !/^file:\/\//iu.test(chosen)) {
    throw new InvalidInputError(`Unknown database URL scheme in "${chosen}"; pass a SQLite file path or a postgres:// URL.`, { field: "target" });
  }
  return { backend: "sqlite", path: chosen.replace(/^file:\/\//iu, "") };
}

/** Takes a `schema` query parameter out of a PostgreSQL URL (the driver does not know it). */
function splitSchemaParam(target: string): { url: string; schema: string | undefined } {
  let parsed: URL;
  try {
    parsed = new URL(target);
  } catch {
    return { url: target, schema: undefined };
  }
  const schema = parsed.searchParams.get("schema");
  if (schema === null) return { url: target, schema: undefined };
  parsed.searchParams.delete("schema");
  return { url: parsed.toString(), schema };
}
