/**
 * The definition of `threadline sessions prune` (arguments, options, help); its action (prune-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption, sourceOption } from "../../command-options.js";
import { InvalidInputError } from "../../../store/errors.js";
import { lazyAction } from "../../action-loading.js";

function parseDays(value: string): number {
  const days = Number(value);
  if (value.trim() === "" || !Number.isFinite(days) || days < 0) {
    throw new InvalidInputError(`--older-than must be a number of days ≥ 0 (got "${value}").`, { field: "--older-than" });
  }
  return days;
}

/**
 * Builds `sessions prune`. Only ended sessions go; live ones are never pruned. Asks first
 * unless `--yes` (refusing without a terminal), after listing on stderr what will go (how
 * many, the oldest, the newest and a sample); `--dry-run` lists instead. A large prune on a
 * terminal draws a progress bar on stderr while it deletes. Then prints `Pruned N
 * session(s).` and the space reclaimed. `--vacuum` then runs a full `VACUUM` (even when
 * nothing was pruned). JSON: {@link PruneJson}.
 */
export function makePruneCommand(io: CliIo): Command {
  return new Command("prune")
    .description("delete ended sessions not active for N days (asks first unless --yes)")
    .addOption(new Option("--older-than <days>", "last activity more than this many days ago").default(90).argParser(parseDays))
    .addOption(sourceOption())
    .addOption(new Option("-y, --yes", "do not ask"))
    .addOption(new Option("--dry-run", "list what would be pruned, delete nothing"))
    .addOption(
      new Option(
        "--vacuum",
        "afterwards rewrite the whole database file (SQLite VACUUM: gives back all free space, blocks other writers while it runs; runs even when nothing is pruned)",
      ),
    )
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./prune-action.js")));
}
