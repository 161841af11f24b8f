/**
 * The definition of `threadline pairing approve` (arguments, options, help); its action (approve-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { pairingConfigOption } from "./pairing-options.js";

/**
 * Builds `pairing approve`. JSON: `{ "approved": PairingApproval }` (see docs/cli.md).
 */
export function makePairingApproveCommand(io: CliIo): Command {
  return new Command("approve")
    .description("approve a pending pairing code: its sender's next message is answered")
    .argument("<platform>", "telegram, slack, discord, whatsapp, signal or matrix")
    .argument("<code>", "the code the person was given (any case; spaces and dashes are ignored)")
    .addOption(dbOption())
    .addOption(pairingConfigOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./approve-action.js")));
}
