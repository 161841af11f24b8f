/**
 * Options of the PostgreSQL backend.
 *
 * @module
 */
import { InvalidInputError } from "../errors.js";

/** How the PostgreSQL backend connects. */
export interface PostgresConfig {
  /** A `postgres://user:password@host:port/database` URL. */
  connectionString: string;
  /**
   * The schema that holds Threadline's tables (default `public`). It is created if
   * missing; every pooled connection uses it as its `search_path`.
   */
  schema?: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /**
   * Runs `ANALYZE` on the messages and sessions tables in the background once enough rows
   * were added or removed since their last analyse, and checks after every import and prune
   * (default `true`). Turn it off where a DBA schedules `ANALYZE` (autovacuum still runs).
   */
  autoAnalyze?: boolean;
}

/** Fills the defaults of a {@link PostgresConfig}. */
export function resolvePostgresConfig(config: PostgresConfig): Required<PostgresConfig> {
  if (config === null || typeof config !== "object" || typeof config.connectionString !== "string" || !/^postgres(ql)?:\/\//iu.test(config.connectionString)) {
    throw new InvalidInputError("The PostgreSQL config needs a postgres:// connection string.", {
      field: "connectionString",
    });
  }
  const schema = config.schema ?? "public";
  if (typeof schema !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/u.test(schema)) {
    throw new InvalidInputError(`schema must be a plain identifier (letters, digits, _; at most 63), not "${String(schema)}".`, { field: "schema" });
  }
  const poolSize = config.poolSize ?? 10;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new InvalidInputError("poolSize must be a positive integer.", { field: "poolSize" });
  }
  const autoAnalyze = config.autoAnalyze ?? true;
  if (typeof autoAnalyze !== "boolean") {
    throw new InvalidInputError(`autoAnalyze must be true or false, not ${JSON.stringify(autoAnalyze)}.`, { field: "autoAnalyze" });
  }
  return { connectionString: config.connectionString, schema, poolSize, autoAnalyze };
}

/** The connection string without its password (for `location` and error messages). */
export function redactPassword(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== "") url.password = "";
    return url.toString().replace(/:@/u, "@");
  } catch {
    return connectionString.replace(/:\/\/([^:/@]+):[^@]*@/u, "://$1@");
  }
}
