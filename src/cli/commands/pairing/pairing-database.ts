/**
 * Which database `threadline pairing` acts on: the gateway's. `--db` (or THREADLINE_DB) when
 * given, else the config file's `database` (`--config`, THREADLINE_CONFIG, else the default
 * config file), as `threadline serve` picks it, else the default file. So an owner whose
 * gateway keeps its state in PostgreSQL (`database: postgres://…` in config.yaml) approves a
 * code with just `threadline pairing approve telegram <code>`.
 *
 * @module
 */
import { loadServeConfig } from "../../serve-config-file.js";

/** The `--db` and `--config` values of a pairing subcommand. */
export interface PairingDatabaseOptions {
  db?: string;
  config?: string;
}

/** The database target: `--db`/THREADLINE_DB, else the config file's `database`, else `undefined` (the default file). */
export async function pairingDatabaseTarget(options: PairingDatabaseOptions, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (options.db !== undefined && options.db.trim() !== "") return options.db;
  const config = await loadServeConfig(options.config, env);
  return config.database ?? undefined;
}
