/**
 * `threadline sessions import --from aurite <dir>`: a directory of Aurite execution records,
 * through the executions importer (`Executions.importDirectory`).
 *
 * @module
 */
import { Executions } from "../../../executions/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, withDatabase } from "../../cli-context.js";

/** Problems named in the error message (the JSON report always has them all). */
const LISTED_PROBLEMS = 20;

/** Options of an Aurite import. */
export interface AuriteImportCommandOptions {
  db?: string;
  json?: boolean;
  user?: string;
}

/**
 * Imports every `*.json` file of `dir` and prints `Imported N execution sessions from DIR; M
 * already present.` (JSON: `{ from, dir, imported: [ids], skipped: [{ file, reason,
 * alreadyPresent }] }`); a bad file is named on stderr and makes the exit code 1.
 */
export async function runAuriteImport(io: CliIo, dir: string, options: AuriteImportCommandOptions): Promise<void> {
  const report = await withDatabase(options.db, io.env, (db) =>
    new Executions(db).importDirectory(dir, options.user === undefined ? {} : { userId: options.user }),
  );
  const present = report.skipped.filter((s) => s.alreadyPresent).length;
  if (options.json) writeJson(io, { from: "aurite", dir, ...report });
  else {
    const n = report.imported.length;
    io.stdout.write(`Imported ${n} execution session${n === 1 ? "" : "s"} from ${dir}; ${present} already present.\n`);
  }
  const bad = report.skipped.filter((s) => !s.alreadyPresent);
  if (bad.length > 0) {
    const listed = bad.slice(0, LISTED_PROBLEMS).map((s) => `  ${s.file}: ${s.reason}`);
    const rest = bad.length - listed.length;
    throw new CliError(
      "TL_ERR_INCOMPLETE",
      `${bad.length} file${bad.length === 1 ? " was" : "s were"} not imported:\n${listed.join("\n")}${rest > 0 ? `\n  … and ${rest} more (--json lists them all)` : ""}`,
    );
  }
}
