/**
 * The action of `threadline chat` (defined in chat-command.ts): the session the options name,
 * then {@link runChat}.
 *
 * @module
 */
import type { Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { chatTarget } from "./chat-command.js";
import { runChat } from "./chat/chat-session.js";

/** Runs `chat`: the action of makeChatCommand (in chat-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: { continue?: string | boolean; resume?: string; db?: string; config?: string }, command: Command): Promise<void> {
  const target = chatTarget(options, command.args);
  io.exitCode = await runChat(io, { ...options, ...target, showDbInHint: command.getOptionValueSource("db") === "cli" });
}
