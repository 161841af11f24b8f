/**
 * The definition of `threadline pairing revoke` (arguments, options, help); its action (revoke-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { pairingConfigOption } from "./pairing-options.js";

/** Builds `pairing revoke`. JSON: `{ "revoked": { "platform", "userId", "userName" } }` (see docs/cli.md). */
export function makePairingRevokeCommand(io: CliIo): Command {
  return new Command("revoke")
    .description("remove a person's approval: their next message is treated as a stranger's")
    .argument("<platform>", "telegram, slack, discord, whatsapp, signal or matrix")
    .argument("<userId>", 'the person\'s user id on that platform, as "threadline pairing list" shows it')
    .addOption(dbOption())
    .addOption(pairingConfigOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./revoke-action.js")));
}
