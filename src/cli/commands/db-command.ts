/**
 * `threadline db`: the database as a whole. `backup` copies a live SQLite database to a file
 * (SQLite's online backup API), `copy` moves every session and the state that goes with it from
 * one database to another (e.g. SQLite to PostgreSQL). Each subcommand is in its own module
 * under `db/`.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { makeDbBackupCommand } from "./db/backup-command.js";
import { makeDbCopyCommand } from "./db/copy-command.js";

/**
 * Builds the `db` command group; see docs/cli.md.
 *
 * @example
 * program.addCommand(makeDbCommand(processIo()));
 */
export function makeDbCommand(io: CliIo): Command {
  return new Command("db")
    .description("the database as a whole: back up a live SQLite file, copy everything to another database (SQLite to PostgreSQL)")
    .addCommand(makeDbBackupCommand(io))
    .addCommand(makeDbCopyCommand(io));
}
