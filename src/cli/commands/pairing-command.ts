/**
 * `threadline pairing`: who may talk to the agent on a chat platform. `list` shows pending
 * codes and approved people, `approve` lets the person who was given a code in, `revoke`
 * takes an approval back. Each subcommand is in its own module under `pairing/`.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { makePairingApproveCommand } from "./pairing/approve-command.js";
import { makePairingListCommand } from "./pairing/list-command.js";
import { makePairingRevokeCommand } from "./pairing/revoke-command.js";

/**
 * Builds the `pairing` command group. Every subcommand takes `--db <target>` (else
 * `$THREADLINE_DB`, else the default file) and `--json`; see docs/cli.md.
 *
 * @example
 * program.addCommand(makePairingCommand(processIo()));
 */
export function makePairingCommand(io: CliIo): Command {
  return new Command("pairing")
    .description("who may talk to the agent: list pending pairing codes and approved people, approve a code, revoke an approval")
    .addCommand(makePairingListCommand(io))
    .addCommand(makePairingApproveCommand(io))
    .addCommand(makePairingRevokeCommand(io));
}
