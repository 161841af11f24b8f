/**
 * `threadline sessions`: the group of session-management commands (list, show, search,
 * export, import, delete, rename, prune, stats), each in its own module under `sessions/`.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../cli-io.js";
import { makeBrowseCommand } from "./sessions/browse-command.js";
import { makeDeleteCommand } from "./sessions/delete-command.js";
import { makeExportCommand } from "./sessions/export-command.js";
import { makeImportCommand } from "./sessions/import-command.js";
import { makeListCommand } from "./sessions/list-command.js";
import { makePruneCommand } from "./sessions/prune-command.js";
import { makeRenameCommand } from "./sessions/rename-command.js";
import { makeSearchCommand } from "./sessions/search-command.js";
import { makeShowCommand } from "./sessions/show-command.js";
import { makeStatsCommand } from "./sessions/stats-command.js";

/**
 * Builds the `sessions` command group. Every subcommand takes `--db <target>` (else
 * `$THREADLINE_DB`, else the default file) and `--json`; see docs/cli.md.
 *
 * @example
 * program.addCommand(makeSessionsCommand(processIo()));
 */
export function makeSessionsCommand(io: CliIo): Command {
  return new Command("sessions")
    .description("manage stored sessions: list, show, search, export, import, delete, rename, prune, stats, browse")
    .addCommand(makeListCommand(io))
    .addCommand(makeShowCommand(io))
    .addCommand(makeSearchCommand(io))
    .addCommand(makeExportCommand(io))
    .addCommand(makeImportCommand(io))
    .addCommand(makeDeleteCommand(io))
    .addCommand(makeRenameCommand(io))
    .addCommand(makePruneCommand(io))
    .addCommand(makeStatsCommand(io))
    .addCommand(makeBrowseCommand(io));
}
