/**
 * The definition of `threadline service logs`; its action (logs-action.ts) is loaded with
 * `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { lazyAction } from "../../action-loading.js";
import { parseCount } from "../../cli-errors.js";
import { managerOption, systemOption } from "./service-options.js";

/** Builds `service logs`. */
export function makeServiceLogsCommand(io: CliIo): Command {
  return new Command("logs")
    .description("follow the service's log (journalctl --user -u threadline, or launchd's $THREADLINE_HOME/logs/gateway.log) until Ctrl-C")
    .addOption(managerOption())
    .addOption(systemOption())
    .addOption(new Option("-n, --lines <n>", "lines of history to show first").default(50).argParser((v) => parseCount(v, "--lines", 0)))
    .option("--no-follow", "print the last lines and exit")
    .action(lazyAction(io, () => import("./logs-action.js")));
}
