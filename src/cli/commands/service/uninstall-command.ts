/**
 * The definition of `threadline service uninstall`; its action (uninstall-action.ts) is loaded
 * with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { lazyAction } from "../../action-loading.js";
import { managerOption, systemOption } from "./service-options.js";

/** Builds `service uninstall`. */
export function makeServiceUninstallCommand(io: CliIo): Command {
  return new Command("uninstall")
    .description("stop (drain), disable and remove the service definition; THREADLINE_HOME and its service.env are kept")
    .addOption(managerOption())
    .addOption(systemOption())
    .action(lazyAction(io, () => import("./uninstall-action.js")));
}
