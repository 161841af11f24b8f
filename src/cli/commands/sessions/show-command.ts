/**
 * The definition of `threadline sessions show` (arguments, options, help); its action (show-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";

/**
 * Builds `sessions show`. JSON: `{ "session": Session, "messages": Message[] }` with every
 * visible message in full (`--full` changes only the text output).
 */
export function makeShowCommand(io: CliIo): Command {
  return new Command("show")
    .description("show a session's details and transcript (tool calls collapsed unless --full)")
    .argument("<session...>", "session id, unique id prefix, or title (several words are joined with spaces, so quotes are optional)")
    .addOption(new Option("--full", "show everything: system prompt, each tool call and result, reasoning"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./show-action.js")));
}
