/**
 * `threadline chat` (being written).
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-output.js";

/** Builds the `chat` command. */
export function makeChatCommand(_io: CliIo): Command {
  return new Command("chat").description("(not available yet)");
}
