/**
 * The definition of `threadline memory edit` (arguments, options, help); its action (edit-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { forOption, userOption } from "./memory-options.js";
import { pairingConfigOption } from "../pairing/pairing-options.js";

/** Builds `memory edit`. JSON: what `memory show --json` prints, after the write, plus `"changed"`. */
export function makeMemoryEditCommand(io: CliIo): Command {
  return new Command("edit")
    .description("edit a person's memory in $EDITOR (one entry per block, blocks separated by a line holding only §)")
    .addOption(userOption())
    .addOption(forOption())
    .addOption(dbOption())
    .addOption(pairingConfigOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./edit-action.js")));
}
