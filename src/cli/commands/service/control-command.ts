/**
 * The definitions of `threadline service start`, `stop` and `restart`; their action
 * (control-action.ts, which reads the verb from the command's name) is loaded with `import()`
 * only when one runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { lazyAction } from "../../action-loading.js";
import { managerOption, systemOption } from "./service-options.js";

const DESCRIPTIONS = {
  start: "start the installed gateway service",
  stop: "stop the gateway service: SIGTERM, it drains running turns (up to gateway.drainTimeoutSeconds) and exits",
  restart: "restart the gateway service (the old process drains first)",
} as const;

/** Builds `service start`, `service stop` or `service restart`. */
export function makeServiceControlCommand(io: CliIo, verb: keyof typeof DESCRIPTIONS): Command {
  return new Command(verb)
    .description(DESCRIPTIONS[verb])
    .addOption(managerOption())
    .addOption(systemOption())
    .action(lazyAction(io, () => import("./control-action.js")));
}
