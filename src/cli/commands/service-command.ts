/**
 * `threadline service`: the gateway as a service that restarts itself (a systemd unit on
 * Linux, a launchd agent on macOS). `install` writes and starts it, `uninstall` removes it,
 * `start`/`stop`/`restart` control it, `status` and `logs` watch it. Each subcommand's
 * definition is in its own module under `service/`.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { makeServiceControlCommand } from "./service/control-command.js";
import { makeServiceInstallCommand } from "./service/install-command.js";
import { makeServiceLogsCommand } from "./service/logs-command.js";
import { makeServiceStatusCommand } from "./service/status-command.js";
import { makeServiceUninstallCommand } from "./service/uninstall-command.js";

/**
 * Builds the `service` command group; see docs/cli.md and docs/deploy.md.
 *
 * @example
 * program.addCommand(makeServiceCommand(processIo()));
 */
export function makeServiceCommand(io: CliIo): Command {
  return new Command("service")
    .description("run the gateway as a service that restarts itself: install | uninstall | start | stop | restart | status | logs")
    .addCommand(makeServiceInstallCommand(io))
    .addCommand(makeServiceUninstallCommand(io))
    .addCommand(makeServiceControlCommand(io, "start"))
    .addCommand(makeServiceControlCommand(io, "stop"))
    .addCommand(makeServiceControlCommand(io, "restart"))
    .addCommand(makeServiceStatusCommand(io))
    .addCommand(makeServiceLogsCommand(io));
}
