/**
 * The definition of `threadline db backup` (arguments, options, help); its action
 * (backup-action.ts) is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import { lazyAction } from "../../action-loading.js";
import type { CliIo } from "../../cli-io.js";
import { dbOption, jsonOption } from "../../command-options.js";

/**
 * Builds `db backup <file>`. Exit codes: 0 backed up; 1 the copy failed its check (the
 * database is damaged: run doctor) or another failure; 2 a PostgreSQL target (the message
 * gives the `pg_dump` command), or `<file>` is a directory or the database itself; 3 no
 * database file, or the directory of `<file>` does not exist; 4 `<file>` exists and `--force`
 * was not given.
 *
 * JSON: the {@link BackupReport} (src/store/backup-report.ts).
 */
export function makeDbBackupCommand(io: CliIo): Command {
  return new Command("backup")
    .description(
      "back up a live SQLite database to <file> through SQLite's online backup API (safe while the gateway writes; attachments included); PostgreSQL: use pg_dump",
    )
    .argument("<file>", "the backup file to write (mode 0600; its directory must exist)")
    .addOption(new Option("--force", "replace <file> if it exists"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./backup-action.js")));
}
