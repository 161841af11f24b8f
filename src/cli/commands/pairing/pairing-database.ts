/**
 * Which database `threadline pairing` acts on: the gateway's. `--db` (or THREADLINE_DB) when
 * given, else the config file's `database` (`--config`, THREADLINE_CONFIG, else the default
 * config file), as `threadline serve` picks it, else the default file. So an owner whose
 * gateway keeps its state in PostgreSQL (`database: postgres://…` in config.yaml) approves a
 * code with just `threadline pairing approve telegram <code>`.
 *
 * @module
 */
import { Option } from "commander";
import { loadServeConfig } from "../../command-options.js";
import { bindEnv } from "../../option-env.js";

/** The `--db` and `--config` values of a pairing subcommand. */
export interface PairingDatabaseOptions {
  db?: string;
  config?: string;
}

/** `--config <file>`: the gateway's config file, for its `database`. */
export function pairingConfigOption(): Option {
  return bindEnv(new Option("--config <file>", "the gateway's config file, for its database (default: $THREADLINE_HOME/config.yaml)"), "THREADLINE_CONFIG");
}

/** The database target: `--db`/THREADLINE_DB, else the config file's `database`, else `undefined` (the default file). */
export async function pairingDatabaseTarget(options: PairingDatabaseOptions, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (options.db !== undefined && options.db.trim() !== "") return options.db;
  const config = await loadServeConfig(options.config, env);
  return config.database ?? undefined;
}
