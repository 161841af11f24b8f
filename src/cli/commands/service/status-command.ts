/**
 * The definition of `threadline service status`; its action (status-action.ts) is loaded with
 * `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { parseCount } from "../../cli-errors.js";
import { managerOption, serviceConfigOption, systemOption } from "./service-options.js";

const AFTER = `
Exit codes: 0 running and /healthz answers ok, 1 running but /healthz does not, 3 not running or not installed.`;

/** Builds `service status`. */
export function makeServiceStatusCommand(io: CliIo): Command {
  return new Command("status")
    .description("whether the service runs, since when, its main PID, the last lines of its log, and GET /healthz")
    .addOption(managerOption())
    .addOption(systemOption())
    .addOption(serviceConfigOption())
    .addOption(new Option("-n, --lines <n>", "log lines to show").default(10).argParser((v) => parseCount(v, "--lines", 0)))
    .addOption(jsonOption())
    .addHelpText("after", AFTER)
    .action(lazyAction(io, () => import("./status-action.js")));
}
