/**
 * `threadline config` (being written).
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-output.js";

/** Builds the `config` command. */
export function makeConfigCommand(_io: CliIo): Command {
  return new Command("config").description("(not available yet)");
}
