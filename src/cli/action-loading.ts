/**
 * How a command definition runs its action: {@link lazyAction} loads the command's action
 * module (`*-action.ts`) only when the command runs, so the program table (every command's
 * name, arguments, options and help) loads without any command's libraries.
 *
 * @module
 */
import type { CliIo } from "./cli-io.js";

/** An action module: `run` takes the io of the run, then what commander gives the action (arguments, options, the command). */
export interface ActionModule<A extends unknown[]> {
  run(io: CliIo, ...args: A): Promise<unknown>;
}

/**
 * A commander action that imports its module on first use and runs it on `io` with the
 * action's arguments (positional arguments, then the options, then the command).
 *
 * @param load `() => import("./x-action.js")`: a dynamic import, so nothing is loaded before the command runs.
 * @example
 * new Command("list").addOption(dbOption()).action(lazyAction(io, () => import("./list-action.js")));
 */
export function lazyAction<A extends unknown[]>(io: CliIo, load: () => Promise<ActionModule<A>>): (...args: A) => Promise<void> {
  return async (...args: A): Promise<void> => {
    const { run } = await load();
    await run(io, ...args);
  };
}
