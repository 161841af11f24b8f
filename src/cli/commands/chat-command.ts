/**
 * The definition of `chat` (options, help); the chat itself (chat/chat-session.ts) is loaded
 * only when the command runs, and its "In the chat:" help section when the help is asked for.
 *
 * @module
 */
import { Command, Option } from "commander";
import { CliError } from "../cli-errors.js";
import type { CliIo } from "../cli-io.js";
import { lazyAction } from "../action-loading.js";
import { addLazyHelpText } from "../lazy-help.js";
import { bindEnv } from "../option-env.js";
import type { ChatOptions } from "./chat/chat-session.js";

/**
 * The session `-c`/`-r` name, with the words that followed on the line (a title typed
 * without quotes: `chat -r Deploy staging`) joined onto it with single spaces. Words
 * without `-c` or `-r` are a usage error.
 */
export function chatTarget(options: Pick<ChatOptions, "continue" | "resume">, words: readonly string[]): Pick<ChatOptions, "continue" | "resume"> {
  const { continue: cont, resume } = options;
  const target: Pick<ChatOptions, "continue" | "resume"> = {
    ...(cont === undefined ? {} : { continue: cont }),
    ...(resume === undefined ? {} : { resume }),
  };
  if (words.length === 0) return target;
  const rest = words.join(" ");
  if (resume !== undefined) return { ...target, resume: `${resume} ${rest}` };
  if (cont !== undefined && cont !== false) return { continue: cont === true ? rest : `${cont} ${rest}` };
  throw new CliError(
    "TL_ERR_USAGE",
    `unexpected argument "${rest}" for "threadline chat". To resume a session, name it with --resume: threadline chat --resume ${rest}`,
  );
}

/** Builds the `chat` command. */
export function makeChatCommand(io: CliIo): Command {
  const chat = new Command("chat")
    .description("chat in the terminal: a session of source cli, the configured agent (echo without one), the gateway's slash commands")
    .addOption(new Option("-c, --continue [title]", "resume the most recent terminal session, or the newest session of a title's lineage"))
    .addOption(new Option("-r, --resume <session>", "resume a session by id, unique id prefix or title (newest of its lineage)"))
    .addOption(bindEnv(new Option("--db <target>", "database: a SQLite file or a postgres:// URL"), "THREADLINE_DB"))
    .addOption(bindEnv(new Option("--config <file>", "config file (YAML)"), "THREADLINE_CONFIG"))
    .allowExcessArguments(); // the rest of a -c/-r title typed without quotes (chatTarget checks them)
  return addLazyHelpText(chat, "after", async () => (await import("./chat/chat-session.js")).slashCommandHelp).action(
    lazyAction(io, () => import("./chat-action.js")),
  );
}
