/**
 * `threadline sessions` (being written).
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-output.js";

/** Builds the `sessions` command. */
export function makeSessionsCommand(_io: CliIo): Command {
  return new Command("sessions").description("(not available yet)");
}
