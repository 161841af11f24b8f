/**
 * The definition of `threadline db backup` (placeholder until the command lands).
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";

/** Builds `db backup`. */
export function makeDbBackupCommand(_io: CliIo): Command {
  return new Command("backup").description("back up a live SQLite database to a file (not implemented yet)");
}
