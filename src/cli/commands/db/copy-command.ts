/**
 * The definition of `threadline db copy` (arguments, options, help); its action (copy-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command } from "commander";
import type { CliIo } from "../../cli-io.js";
import { jsonOption } from "../../command-options.js";
import { lazyAction } from "../../action-loading.js";

/**
 * Builds `db copy <from> <to>`: every session with its messages and attachments, and the
 * durable gateway state (execution sessions, memory, pairing approvals, identity aliases,
 * routing entries, home channels and other meta values), from one database into an empty one.
 * Prints the counts per kind and the time taken (`--json`: one object); a progress bar on a
 * terminal's stderr. See docs/cli.md and docs/deploy.md.
 */
export function makeDbCopyCommand(io: CliIo): Command {
  return new Command("copy")
    .description(
      "copy a whole database (sessions, messages, attachments, gateway state) into an empty one, e.g. a SQLite file into PostgreSQL; stop the gateway first",
    )
    .argument("<from>", "the database to copy: a SQLite file or a postgres:// URL")
    .argument("<to>", "an empty database: a new SQLite file, or a postgres:// URL (?schema=NAME for a schema of its own)")
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./copy-action.js")));
}
