/**
 * `threadline service uninstall [--manager M] [--system]`: stops the service (it drains),
 * disables it and removes its unit or plist. THREADLINE_HOME (the data) and its service.env
 * are kept, and the output says so.
 *
 * The action of the command defined in uninstall-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { removeDefinition, serviceEnvPath } from "../../../service/index.js";
import { threadlineHome } from "../../../store/index.js";
import type { CliIo } from "../../cli-io.js";
import { chooseManager, managerNoun, requireManager } from "./service-setup.js";
import type { ServiceOptions } from "./service-options.js";

/** Runs `uninstall`: the action of makeServiceUninstallCommand (in uninstall-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: ServiceOptions): Promise<void> {
  const manager = chooseManager(io, options);
  if (!existsSync(manager.definitionPath)) {
    io.stdout.write(`The ${managerNoun(manager)} is not installed (no ${manager.definitionPath}); nothing to do.\n`);
    return;
  }
  await requireManager(manager);
  await manager.deactivate();
  await removeDefinition(manager.definitionPath);
  await manager.forget();
  const home = threadlineHome(io.env);
  io.stdout.write(
    `Stopped (drained), disabled and removed the ${managerNoun(manager)} ${manager.definitionPath}.\n` +
      `Kept ${home} (your sessions and config) and ${serviceEnvPath(home)} (the service's secrets): delete them yourself if you no longer need them.\n`,
  );
}
