/**
 * How a command definition runs its action: {@link lazyAction} loads the command's action
 * module (`*-action.ts`) only when the command runs, so the program table (every command's
 * name, arguments, options and help) loads without any command's libraries.
 *
 * @module
 */
import type { CliIo } from "./cli-io.js";
import { loadDisplayWidth } from "./display-width.js";

/** An action module: `run` takes the io of the run, then what commander gives the action (arguments, options, the command). */
export interface ActionModule<A extends unknown[]> {
  run(io: CliIo, ...args: A): Promise<unknown>;
  /**
   * `true` when the action measures text only inside `withDisplayWidth` (display-width.ts), so
   * `string-width` loads only for text that needs it; else it is loaded before `run`.
   */
  loadsDisplayWidthItself?: boolean;
}

/**
 * A commander action that imports its module on first use and runs it on `io` with the
 * action's arguments (positional arguments, then the options, then the command), after loading
 * `string-width` unless the module measures its text itself ({@link ActionModule.loadsDisplayWidthItself}).
 *
 * @param load `() => import("./x-action.js")`: a dynamic import, so nothing is loaded before the command runs.
 * @example
 * new Command("list").addOption(dbOption()).action(lazyAction(io, () => import("./list-action.js")));
 */
export function lazyAction<A extends unknown[]>(io: CliIo, load: () => Promise<ActionModule<A>>): (...args: A) => Promise<void> {
  return async (...args: A): Promise<void> => {
    const action = await load();
    if (action.loadsDisplayWidthItself !== true) await loadDisplayWidth();
    await action.run(io, ...args);
  };
}
