/**
 * `--config <file>` of the `pairing` and `memory` subcommands: the gateway's config file, read
 * for its `database` (pairing-database.ts).
 *
 * @module
 */
import { Option } from "commander";
import { bindEnv } from "../../option-env.js";

/** `--config <file>`: the gateway's config file, for its `database`. */
export function pairingConfigOption(): Option {
  return bindEnv(new Option("--config <file>", "the gateway's config file, for its database (default: $THREADLINE_HOME/config.yaml)"), "THREADLINE_CONFIG");
}
