/**
 * The definition of `threadline api` (arguments, options, help); its action (api-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../cli-io.js";
import { portOption } from "../command-options.js";
import { lazyAction } from "../action-loading.js";
import { bindEnv } from "../option-env.js";

/** Builds the `api` command. */
export function makeApiCommand(io: CliIo): Command {
  return new Command("api")
    .description("run the HTTP API alone (sessions, search, export, execution history) on http://127.0.0.1:8788, until SIGTERM/SIGINT")
    .addOption(bindEnv(new Option("--config <file>", "config file (YAML; the api: section)"), "THREADLINE_CONFIG"))
    .addOption(bindEnv(new Option("--db <target>", "database: a SQLite file or a postgres:// URL"), "THREADLINE_DB"))
    .addOption(portOption("api.port"))
    .addOption(new Option("--host <host>", "HTTP host (overrides api.host)"))
    .action(lazyAction(io, () => import("./api-action.js")));
}
