/**
 * Help text that needs more than the program table (`chat --help` lists the gateway's slash
 * commands): {@link addLazyHelpText} registers a section whose text is loaded before the
 * command is dispatched ({@link prepareLazyHelp}, which `runCli` awaits in a `preSubcommand`
 * hook), so showing the program's or any other command's help loads nothing for it.
 *
 * @module
 */
import type { AddHelpTextContext, Command } from "commander";

type HelpText = (context: AddHelpTextContext) => string;

/** The loader of each command's lazy help section. */
const loaders = new WeakMap<Command, () => Promise<void>>();

/**
 * Adds a help section to `command` at `position`, its text made by the function `load` resolves
 * to. The text is there once {@link prepareLazyHelp} ran for the command (before commander
 * dispatches it); until then the section is empty.
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

/**
 * Makes `program` and every command under it load a subcommand's lazy help before it is
 * dispatched (`threadline chat --help`, `threadline help chat`). Call once every command is added.
 */
export function applyLazyHelp(program: Command): void {
  const visit = (command: Command): void => {
    if (command.commands.length > 0) command.hook("preSubcommand", (_hooked, sub) => prepareLazyHelp(sub));
    for (const sub of command.commands) visit(sub);
  };
  visit(program);
}
