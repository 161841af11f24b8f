/**
 * `threadline service start | stop | restart [--manager M] [--system]`: the verb is the
 * command's name. `stop` sends SIGTERM through the manager: the gateway drains its running
 * turns (up to `gateway.drainTimeoutSeconds`) and exits 0.
 *
 * The action of the commands defined in control-command.ts, loaded with `import()` only when one runs.
 *
 * @module
 */
import type { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { chooseManager, managerNoun, requireInstalled, requireManager } from "./service-setup.js";
import type { ServiceOptions } from "./service-options.js";

const DONE = { start: "Started", stop: "Stopped (running turns drained)", restart: "Restarted (the old process drained first)" } as const;

/** Runs `start`, `stop` or `restart`: the action of makeServiceControlCommand (in control-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: ServiceOptions, command: Command): Promise<void> {
  const verb = command.name() as keyof typeof DONE;
  const manager = chooseManager(io, options);
  await requireManager(manager);
  requireInstalled(manager);
  await manager.control(verb);
  io.stdout.write(`${DONE[verb]} the ${managerNoun(manager)}. See it with: threadline service status\n`);
}
