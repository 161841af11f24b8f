/**
 * The definition of `threadline sessions list` (arguments, options, help); its action (list-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import { parseCount } from "../../cli-errors.js";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption, sourceOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";

/**
 * Builds `sessions list`. JSON: `{ "sessions": SessionSummary[], "more": number }` where
 * `more` counts the sessions the limit left out.
 */
export function makeListCommand(io: CliIo): Command {
  return new Command("list")
    .description("list sessions, most recently active first")
    .addOption(sourceOption())
    .addOption(new Option("--limit <n>", "how many to show").default(20).argParser((v: string) => parseCount(v, "--limit")))
    .addOption(new Option("--all", "show every session (ignores --limit)"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./list-action.js")));
}
