/**
 * What `threadline` takes before (or instead of) a command: `-c [title]` and `-r <session>`
 * start a chat as `threadline chat -c/-r` does (hermes users type `hermes -c`), bare
 * `threadline` starts a chat on a terminal and prints the help otherwise, and `--db` /
 * `--config` given before the command apply to it as if given after it.
 *
 * @module
 */
import { Option, type Command } from "commander";
import { CliError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import { chatTarget } from "./commands/chat-command.js";
import { commandPath } from "./usage-errors.js";

interface TopLevelOptions {
  continue?: string | boolean;
  resume?: string;
  db?: string;
  config?: string;
}

/**
 * Gives the command that runs the options the program took from the command line: an option
 * given before the command counts as given after it, unless it was given there too. An option
 * the command does not take is a usage error (never silently ignored).
 */
function passProgramOptions(program: Command, actionCommand: Command): void {
  if (actionCommand === program) return;
  for (const option of program.options) {
    const key = option.attributeName();
    if (program.getOptionValueSource(key) !== "cli") continue;
    const path = commandPath(actionCommand);
    if (!actionCommand.options.some((o) => o.attributeName() === key)) {
      throw new CliError("TL_ERR_USAGE", `${option.long ?? option.flags} does not apply to "${path}". Leave it out (see "${path} --help").`);
    }
    if (actionCommand.getOptionValueSource(key) !== "cli") actionCommand.setOptionValueWithSource(key, program.getOptionValue(key), "cli");
  }
}

/**
 * Adds the top-level options and the action of bare `threadline` to `program`. Program
 * options are positional (only before the command), so a command's own `--db` is its own.
 *
 * @example
 * addTopLevel(new Command("threadline"), processIo()).addCommand(makeChatCommand(io));
 */
export function addTopLevel(program: Command, io: CliIo): Command {
  return program
    .addOption(new Option("-c, --continue [title]", "start a chat resuming the most recent terminal session, or the newest of a title's lineage"))
    .addOption(new Option("-r, --resume <session>", "start a chat resuming a session by id, id prefix or title"))
    .addOption(new Option("--db <target>", "the command's database (a SQLite file or a postgres:// URL), as if given after it"))
    .addOption(new Option("--config <file>", "the command's config file, as if given after it"))
    .argument("[words...]") // the rest of a -c/-r title typed without quotes (no description: not listed)
    .enablePositionalOptions()
    .helpCommand(true)
    .hook("preAction", (_hooked, actionCommand) => passProgramOptions(program, actionCommand))
    .action(async (words: string[], options: TopLevelOptions, command: Command) => {
      const chatting = options.continue !== undefined || options.resume !== undefined;
      if (!chatting && words.length > 0) {
        // Not a command: commander's own error, with its closest-match suggestion.
        (command as unknown as { unknownCommand(): never }).unknownCommand();
      }
      if (!chatting && !(io.stdin.isTTY === true && io.stdout.isTTY === true)) {
        command.outputHelp();
        return;
      }
      const { runChat } = await import("./commands/chat/chat-session.js");
      io.exitCode = await runChat(io, {
        ...chatTarget(options, words),
        ...(options.db === undefined ? {} : { db: options.db }),
        ...(options.config === undefined ? {} : { config: options.config }),
        showDbInHint: options.db !== undefined,
      });
    });
}
