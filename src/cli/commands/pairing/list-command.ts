/**
 * The definition of `threadline pairing list` (arguments, options, help); its action (list-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { pairingConfigOption } from "./pairing-options.js";

/**
 * Builds `pairing list`. JSON: `{ "location", "backend", "pending": PairingRequest[],
 * "approved": PairingApproval[] }` (times in epoch milliseconds; see docs/cli.md).
 */
export function makePairingListCommand(io: CliIo): Command {
  return new Command("list")
    .description("pending pairing codes (who asked, when they expire) and approved people")
    .addOption(new Option("--platform <platform>", "only this platform (telegram, slack, discord, whatsapp, signal, matrix)"))
    .addOption(dbOption())
    .addOption(pairingConfigOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./list-action.js")));
}
