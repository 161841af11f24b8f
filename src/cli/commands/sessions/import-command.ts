/**
 * `threadline sessions import <file|->`: reads JSON Lines as written by `export`. Existing
 * sessions are skipped, so importing twice changes nothing the second time.
 *
 * @module
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { Command } from "commander";
import { readJsonlLines, type ImportReport } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, withDatabase } from "../../cli-context.js";
import { dbOption, jsonOption } from "../../command-options.js";
import { progressWanted, startProgressBar } from "../../progress-bar.js";

interface ImportOptions {
  db?: string;
  json?: boolean;
}

/** Bad lines listed in the error message (the JSON report always has them all). */
const LISTED_PROBLEMS = 20;

/**
 * Builds `sessions import`. Prints `Imported N sessions, skipped M already present.` (JSON:
 * `{ "file": FILE, "imported": N, "skipped": M, "errors": [{ "line": 4, "message": "…" }] }`);
 * when lines were rejected it also names each on stderr and exits 1.
 */
export function makeImportCommand(io: CliIo): Command {
  return new Command("import")
    .description('read sessions from JSON Lines as written by "export" ("-" for stdin); sessions already present are skipped')
    .argument("<file>", 'input file, or "-" for stdin')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (file: string, options: ImportOptions) => {
      let input: Readable;
      let total = 0;
      if (file === "-") input = io.stdin as unknown as Readable;
      else {
        const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
          throw error.code === "ENOENT"
            ? new CliError("TL_ERR_NOT_FOUND", `No such file: ${file}`)
            : new CliError("TL_ERR_IO", `Cannot read ${file}: ${error.message}`, { cause: error });
        });
        if (info.isDirectory()) throw new CliError("TL_ERR_USAGE", `${file} is a directory; name a JSONL file.`);
        if (progressWanted(io) && info.isFile()) total = await countLines(file);
        input = createReadStream(file);
      }
      const report = await withDatabase(options.db, io.env, async (db) => {
        const bar = startProgressBar(io, { label: "Importing", total });
        async function* counted(lines: AsyncIterable<string>): AsyncIterable<string> {
          for await (const line of lines) {
            yield line;
            bar.increment();
          }
        }
        try {
          return await db.importSessions(counted(readJsonlLines(input)));
        } finally {
          bar.stop();
          if (file !== "-") input.destroy();
        }
      });
      if (options.json) writeJson(io, { file, ...report });
      else io.stdout.write(`${summary(report)}\n`);
      if (report.errors.length > 0) {
        const listed = report.errors.slice(0, LISTED_PROBLEMS).map((p) => `  line ${p.line}: ${p.message}`);
        const rest = report.errors.length - listed.length;
        throw new CliError(
          "TL_ERR_INCOMPLETE",
          `${report.errors.length} bad line${report.errors.length === 1 ? " was" : "s were"} not imported:\n${listed.join("\n")}${rest > 0 ? `\n  … and ${rest} more (--json lists them all)` : ""}`,
        );
      }
    });
}

function summary(report: ImportReport): string {
  const plural = (n: number): string => `${n} session${n === 1 ? "" : "s"}`;
  return `Imported ${plural(report.imported)}, skipped ${report.skipped} already present.`;
}

/** Lines in a file (a last line without a newline counts), for the progress bar's total. */
async function countLines(path: string): Promise<number> {
  let lines = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines += 1;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  return last === 0x0a ? lines : lines + 1;
}
