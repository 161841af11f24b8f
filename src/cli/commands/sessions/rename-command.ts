/**
 * The definition of `threadline sessions rename` (arguments, options, help); its action (rename-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";

/**
 * Builds `sessions rename`. A title another session holds is refused with the store's message
 * (exit 4). JSON: `{ "id": string, "title": string | null }` (the stored, sanitised title).
 */
export function makeRenameCommand(io: CliIo): Command {
  return new Command("rename")
    .description('set a session\'s title (several words are joined with spaces; "" clears it)')
    .argument("<session>", "session id, unique id prefix, or title")
    .argument("<title...>", "the new title")
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./rename-action.js")));
}
