/**
 * The definition of `threadline db copy` (placeholder until the command lands).
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";

/** Builds `db copy`. */
export function makeDbCopyCommand(_io: CliIo): Command {
  return new Command("copy").description("copy a database into another (not implemented yet)");
}
