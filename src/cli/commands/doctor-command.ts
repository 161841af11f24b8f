/**
 * The definition of `threadline doctor` (arguments, options, help); its action (doctor-action.ts)
 * is loaded with `import()` only when the command runs.
 *
 * @module
 */
import { Command, Option } from "commander";
import type { CliIo } from "../cli-io.js";
import { dbOption, jsonOption } from "../command-options.js";
import { lazyAction } from "../action-loading.js";

/**
 * Builds `doctor`. Exit codes: 0 healthy (or repaired; also the default database not created
 * yet: nothing to check), 1 damage found (without `--repair`; also attachment references that do
 * not resolve, with or without it: a repair cannot bring bytes back), 2 `--repair` on a PostgreSQL
 * target, 3 no such file (`--db` or THREADLINE_DB), 4 repair refused (another process has the
 * file open, or the file is from a newer Threadline).
 *
 * JSON: the {@link DoctorReport}; with `--repair`, `{ "diagnosis": DoctorReport, "repair":
 * RepairReport | null }` (`null` when there was nothing to repair). The default database not
 * created yet: {@link NotCreatedYetJson} in place of the report.
 */
export function makeDoctorCommand(io: CliIo): Command {
  return new Command("doctor")
    .description("check the database (integrity, search index, schema, WAL, free space, attachments); --repair salvages a damaged SQLite file")
    .addOption(
      new Option(
        "--repair",
        "copy every readable session and message of a damaged SQLite file into a fresh file (the damaged one is kept as <file>.damaged-<time>)",
      ),
    )
    .addOption(new Option("--verify-media", "also re-hash every stored attachment (reads every blob)"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(lazyAction(io, () => import("./doctor-action.js")));
}
