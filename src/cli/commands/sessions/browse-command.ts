/**
 * The definition of `threadline sessions browse` (arguments, options, help); its action (browse-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import { CliError } from "../../cli-errors.js";
import type { CliIo } from "../../cli-io.js";
import { dbOption, sourceOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { bindEnv } from "../../option-env.js";

/** Builds `sessions browse`. */
export function makeBrowseCommand(io: CliIo): Command {
  return new Command("browse")
    .description("pick a session interactively (type to filter, arrows, Enter resumes it in threadline chat, Esc clears then leaves)")
    .addOption(sourceOption())
    .addOption(
      new Option("--limit <n>", "how many of the most recent sessions to offer").default(1000).argParser((v: string) => {
        const n = Number(v);
        if (!Number.isSafeInteger(n) || n < 1) throw new CliError("TL_ERR_USAGE", `--limit must be a whole number ≥ 1 (got "${v}").`);
        return n;
      }),
    )
    .addOption(dbOption())
    .addOption(bindEnv(new Option("--config <file>", "config file (YAML) for the chat"), "THREADLINE_CONFIG"))
    .action(lazyAction(io, () => import("./browse-action.js")));
}
