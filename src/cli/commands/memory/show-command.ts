/**
 * The definition of `threadline memory show` (arguments, options, help); its action (show-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";
import { forOption, userOption } from "./memory-options.js";
import { pairingConfigOption } from "../pairing/pairing-options.js";

/**
 * Builds `memory show`. JSON: `{ "owner": { platform, userId }, "kind", "entries": string[],
 * "chars", "limit", "updatedAt" (epoch ms or null), "version" (null when none was saved) }`.
 */
export function makeMemoryShowCommand(io: CliIo): Command {
  return new Command("show")
    .description("print a person's memory (MEMORY, the agent's notes; --user: USER, about them)")
    .addOption(userOption())
    .addOption(forOption())
    .addOption(dbOption())
    .addOption(pairingConfigOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./show-action.js")));
}
