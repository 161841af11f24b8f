/**
 * The definition of `threadline sessions export` (arguments, options, help); its action (export-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption, sourceOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { exportMediaDirOption, mediaOption } from "./media-options.js";

/**
 * Builds `sessions export`. Prints `Exported N sessions to FILE` (JSON: `{ "exported": N,
 * "file": FILE }`) on stdout, or on stderr when the records themselves go to stdout (`-`).
 */
export function makeExportCommand(io: CliIo): Command {
  return new Command("export")
    .description('write sessions as JSON Lines to FILE ("-" for stdout)')
    .argument("<file>", 'output file, or "-" for stdout')
    .addOption(sourceOption())
    .option("--session-id <session...>", "only this session (id, unique id prefix, or title; takes the rest of the line, so quotes are optional)")
    .addOption(mediaOption())
    .addOption(exportMediaDirOption())
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./export-action.js")));
}
