/**
 * `threadline memory`: the per-person memory the agent keeps with its `memory` tool (hermes'
 * `MEMORY.md` and `USER.md`): `show` prints it, `edit` opens it in $EDITOR, `clear` deletes it.
 * Each subcommand is in its own module under `memory/`.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { makeMemoryClearCommand } from "./memory/clear-command.js";
import { makeMemoryEditCommand } from "./memory/edit-command.js";
import { makeMemoryShowCommand } from "./memory/show-command.js";

/**
 * Builds the `memory` command group. Every subcommand takes `--user` (USER instead of MEMORY),
 * `--for <platform>:<userId>` (default: the owner), `--db`, `--config` and `--json`; see docs/cli.md.
 *
 * @example
 * program.addCommand(makeMemoryCommand(processIo()));
 */
export function makeMemoryCommand(io: CliIo): Command {
  return new Command("memory")
    .description("the agent's memory of a person (hermes' MEMORY.md and USER.md): show, edit in $EDITOR, clear")
    .addCommand(makeMemoryShowCommand(io))
    .addCommand(makeMemoryEditCommand(io))
    .addCommand(makeMemoryClearCommand(io));
}
