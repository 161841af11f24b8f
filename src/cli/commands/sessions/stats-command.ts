/**
 * The definition of `threadline sessions stats` (arguments, options, help); its action (stats-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";

/**
 * Builds `sessions stats`. JSON: `{ "location", "backend", "totalSessions", "totalMessages",
 * "sessionsBySource", "databaseBytes", "searchIndexBytes", "byModel": ModelStats[] }`, where
 * `byModel` carries the token and cost totals per model. The default database not created
 * yet reads as an empty one at its path (0 bytes; the text says "not created yet").
 */
export function makeStatsCommand(io: CliIo): Command {
  return new Command("stats")
    .description("show totals, sessions per source and the database size (--json adds tokens and cost per model)")
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./stats-action.js")));
}
