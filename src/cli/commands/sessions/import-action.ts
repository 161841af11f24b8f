/**
 * `threadline sessions import [--from jsonl|hermes|aurite] <source> [--media-dir FOLDER]`: the one
 * import verb. `jsonl` (the default) reads JSON Lines as written by `export` (attachments from
 * the records' base64, or from the folder `export --media-dir` wrote); `hermes` a hermes-agent
 * `state.db` (read-only); `aurite` a directory of Aurite execution records. Existing sessions
 * are skipped, so importing twice changes nothing the second time.
 *
 * @module
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { readJsonlLines, type ImportReport } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, withDatabase } from "../../cli-context.js";
import { progressWanted, startProgressBar } from "../../progress-bar.js";
import { checkImportMediaDir } from "./export-media.js";
import { runAuriteImport } from "./import-aurite.js";
import { runHermesImport } from "./import-hermes.js";
import type { IMPORT_FORMATS } from "./import-command.js";

interface ImportOptions {
  db?: string;
  json?: boolean;
  from: (typeof IMPORT_FORMATS)[number];
  dryRun?: boolean;
  user?: string;
  mediaDir?: string;
}

/** Bad lines listed in the error message (the JSON report always has them all). */
const LISTED_PROBLEMS = 20;

/** Runs `import`: the action of makeImportCommand (in import-command.ts), loaded when the command runs. */
export async function run(io: CliIo, file: string, options: ImportOptions): Promise<void> {
  if (options.dryRun && options.from !== "hermes") {
    throw new CliError("TL_ERR_USAGE", `--dry-run works with --from hermes only (not --from ${options.from}).`);
  }
  if (options.user !== undefined && options.from !== "aurite") {
    throw new CliError("TL_ERR_USAGE", `--user works with --from aurite only (not --from ${options.from}).`);
  }
  if (options.mediaDir !== undefined) {
    if (options.from !== "jsonl") throw new CliError("TL_ERR_USAGE", `--media-dir works with --from jsonl only (not --from ${options.from}).`);
    await checkImportMediaDir(options.mediaDir);
  }
  if (options.from === "hermes") {
    if (file === "-") throw new CliError("TL_ERR_USAGE", "--from hermes reads a state.db file; name the file (stdin cannot be read as a database).");
    return runHermesImport(io, file, options);
  }
  if (options.from === "aurite") return runAuriteImport(io, file, options);
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
      return await db.importSessions(counted(readJsonlLines(input)), options.mediaDir === undefined ? {} : { mediaDir: options.mediaDir });
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
