/**
 * The definition of `threadline memory clear` (arguments, options, help); its action (clear-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { forOption, userOption } from "./memory-options.js";
import { pairingConfigOption } from "../pairing/pairing-options.js";

/** Builds `memory clear`. JSON: `{ "owner", "kind", "cleared": boolean }` (`false`: there was none, or the answer was no). */
export function makeMemoryClearCommand(io: CliIo): Command {
  return new Command("clear")
    .description("delete a person's memory (MEMORY; --user: USER), asking first unless --yes")
    .addOption(userOption())
    .addOption(forOption())
    .addOption(new Option("-y, --yes", "do not ask"))
    .addOption(dbOption())
    .addOption(pairingConfigOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./clear-action.js")));
}
