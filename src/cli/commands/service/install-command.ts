/**
 * The definition of `threadline service install` (options, help); its action
 * (install-action.ts) is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { lazyAction } from "../../action-loading.js";
import { managerOption, serviceConfigOption, systemOption } from "./service-options.js";

const AFTER = `
What it writes:
  systemd  ~/.config/systemd/user/threadline.service (with --system: /etc/systemd/system/threadline.service)
  launchd  ~/Library/LaunchAgents/dev.threadline.gateway.plist (log: $THREADLINE_HOME/logs/gateway.log)
  both     $THREADLINE_HOME/service.env, mode 0600: the THREADLINE_*, OPENAI_*, platform token and PG*
           variables set here (existing lines are kept). Secrets never go into the unit or plist.

The service runs this Node and this threadline's "serve" with this THREADLINE_HOME and config file.
Running install again is safe: an unchanged definition is left as it is. A user unit starts at login;
to start it at boot without logging in: loginctl enable-linger $USER

Examples:
  threadline service install --dry-run          review the unit, write nothing
  threadline service install
  sudo THREADLINE_HOME=/srv/threadline threadline service install --system --run-as threadline`;

/** Builds `service install`. */
export function makeServiceInstallCommand(io: CliIo): Command {
  return new Command("install")
    .description("write the service definition and service.env, then enable and start the gateway")
    .option("--dry-run", "print the files it would write (secret values hidden) and write nothing; works on any machine")
    .addOption(managerOption())
    .addOption(systemOption())
    .addOption(serviceConfigOption())
    .addOption(new Option("--run-as <user>", "the account a --system unit runs as (default: $SUDO_USER, else you)"))
    .option("--no-start", "write and enable it, but do not start it now")
    .addHelpText("after", AFTER)
    .action(lazyAction(io, () => import("./install-action.js")));
}
