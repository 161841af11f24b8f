/**
 * Help text that needs more than the program table (`chat --help` lists the gateway's slash
 * commands): {@link addLazyHelpText} registers a section whose text is loaded before the
 * command line is parsed when it asks for that command's help ({@link prepareLazyHelpFor},
 * which `runCli` awaits), so showing the program's or any other command's help loads nothing for it.
 *
 * @module
 */
import type { AddHelpTextContext, Command } from "commander";

type HelpText = (context: AddHelpTextContext) => string;

/** The loader of each command's lazy help section. */
const loaders = new WeakMap<Command, () => Promise<void>>();

/**
 * Adds a help section to `command` at `position`, its text made by the function `load` resolves
 * to. The text is there once {@link prepareLazyHelp} ran for the command (before the command
 * line is parsed); until then the section is empty.
 *
 * @example
 * addLazyHelpText(chat, "after", async () => (await import("./chat/chat-session.js")).slashCommandHelp);
 */
export function addLazyHelpText(command: Command, position: "before" | "after", load: () => Promise<HelpText>): Command {
  let text: HelpText | undefined;
  loaders.set(command, async () => {
    text ??= await load();
  });
  return command.addHelpText(position, (context) => text?.(context) ?? "");
}

/** Loads the lazy help sections of `command` (none: nothing happens). */
export async function prepareLazyHelp(command: Command): Promise<void> {
  await loaders.get(command)?.();
}

/** The words of a command line that ask for help. */
const HELP_WORDS = new Set(["help", "-h", "--help"]);

/**
 * Loads the lazy help sections of the commands a command line names, when it asks for help
 * (`threadline chat --help`, `threadline help chat`, `threadline sessions help browse`): the
 * words are followed down the command tree from `program`. Commander prints help synchronously
 * (`help <command>` before any hook runs), so `runCli` awaits this before parsing. A line that
 * does not ask for help loads nothing.
 */
export async function prepareLazyHelpFor(program: Command, argv: readonly string[]): Promise<void> {
  if (!argv.some((word) => HELP_WORDS.has(word))) return;
  let command = program;
  for (const word of argv) {
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub === undefined) continue;
    command = sub;
    await prepareLazyHelp(sub);
  }
}
