/**
 * The definition of `threadline sessions delete` (arguments, options, help); its action (delete-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";

/**
 * Builds `sessions delete`. Asks `Delete session '<id>' ("<title>") and all its messages? [y/N]` on
 * stderr unless `--yes`; without a terminal and without `--yes` it refuses (exit 4) instead of
 * waiting. JSON: `{ "id": string, "deleted": boolean }` (`false` when the answer was no).
 */
export function makeDeleteCommand(io: CliIo): Command {
  return new Command("delete")
    .description("delete a session and all its messages (asks first unless --yes)")
    .argument("<session...>", "session id, unique id prefix, or title (several words are joined with spaces, so quotes are optional)")
    .addOption(new Option("-y, --yes", "do not ask"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./delete-action.js")));
}
