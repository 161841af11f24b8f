/**
 * `threadline sessions import --from hermes <state.db>`: a hermes-agent SessionDB file,
 * opened read-only, imported a session per transaction (see `importHermesState`).
 *
 * @module
 */
import { HermesStateFile, importHermesState, type HermesImportReport, type HermesSessionOutcome } from "../../../importers/index.js";
import type { SessionDB } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, openExistingDatabase, withDatabase } from "../../cli-context.js";
import { startProgressBar, type ProgressBar } from "../../progress-bar.js";

/** Problems named in the error message (the JSON report always has them all). */
const LISTED_PROBLEMS = 20;

/** Options of a hermes import. */
export interface HermesImportCommandOptions {
  db?: string;
  json?: boolean;
  dryRun?: boolean;
}

/**
 * Imports (or with `dryRun` only checks) `file` into the command's database and prints the
 * report; throws a `CliError` when something was (or would be) left out, or on an interrupt.
 */
export async function runHermesImport(io: CliIo, file: string, options: HermesImportCommandOptions): Promise<void> {
  // The file is checked before the database is opened, so a wrong path creates no database.
  const source = await HermesStateFile.open(file);
  let stop = false;
  const onSignal = (): void => {
    stop = true;
  };
  io.signals.on("SIGINT", onSignal);
  io.signals.on("SIGTERM", onSignal);
  let bar: ProgressBar | null = null;
  const run = (db: SessionDB | null): Promise<HermesImportReport> =>
    importHermesState(db, source, {
      dryRun: options.dryRun ?? false,
      onPlan: ({ sessions }) => {
        bar = startProgressBar(io, { label: options.dryRun ? "Checking" : "Importing", total: sessions });
      },
      onSession: () => bar?.increment(),
      shouldStop: () => stop,
    });
  let report: HermesImportReport;
  try {
    report = options.dryRun ? await dryRun(io, options.db, run) : await withDatabase(options.db, io.env, run);
  } finally {
    source.close();
    (bar as ProgressBar | null)?.stop();
    io.signals.off("SIGINT", onSignal);
    io.signals.off("SIGTERM", onSignal);
  }
  if (options.json) writeJson(io, { from: "hermes", ...report });
  else io.stdout.write(describe(report));
  if (report.interrupted) {
    throw new CliError(
      "TL_ERR_INTERRUPTED",
      `Interrupted after ${report.sessions.length} of ${report.inFile.sessions} sessions; each session is written whole or not at all. ` +
        "Run the same command again to import the rest (sessions already imported are skipped).",
    );
  }
  const problems = problemLines(report);
  if (problems.length > 0) {
    const listed = problems.slice(0, LISTED_PROBLEMS).map((p) => `  ${p}`);
    const rest = problems.length - listed.length;
    throw new CliError(
      "TL_ERR_INCOMPLETE",
      `${report.dryRun ? "These would not be imported" : "Not imported"}:\n${listed.join("\n")}${rest > 0 ? `\n  … and ${rest} more (--json lists them all)` : ""}`,
    );
  }
}

/** A dry run reads the database if it exists and never creates one (a missing file counts as empty). */
async function dryRun(io: CliIo, target: string | undefined, run: (db: SessionDB | null) => Promise<HermesImportReport>): Promise<HermesImportReport> {
  let db: SessionDB | null;
  try {
    db = await openExistingDatabase(target, io.env);
  } catch (error) {
    if (error instanceof CliError && error.code === "TL_ERR_NOT_FOUND") return run(null);
    throw error;
  }
  try {
    return await run(db);
  } finally {
    await db.close();
  }
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The text report: the counts, then every change made on the way. */
function describe(report: HermesImportReport): string {
  const { imported } = report;
  const what = `${plural(imported.sessions, "session")} (${plural(imported.messages, "message")}, ${imported.rewound} of them rewound)`;
  const lines = [
    report.dryRun
      ? `Dry run: would import ${what} from ${report.file}; ${report.present} already present. Nothing was written.`
      : `Imported ${what} from ${report.file}; skipped ${report.present} already present.`,
  ];
  const changed = report.sessions.filter((s) => s.notes.length > 0);
  if (changed.length > 0) {
    lines.push(report.dryRun ? "Changes that would be made:" : "Changed on the way:");
    for (const s of changed) for (const note of s.notes) lines.push(`  ${sessionName(s)}: ${note}`);
  }
  return `${lines.join("\n")}\n`;
}

/** What was (or would be) left out, one line each. */
function problemLines(report: HermesImportReport): string[] {
  const lines: string[] = [];
  for (const s of report.sessions) {
    if (s.action === "failed") lines.push(`session ${sessionName(s)}: ${s.error ?? "failed"}`);
    for (const m of s.skippedMessages) lines.push(`session ${sessionName(s)}, message ${m.hermesMessageId}: ${m.reason}`);
  }
  for (const o of report.orphanMessages) {
    lines.push(`${plural(o.messages, "message")} of session ${o.hermesSessionId}, which is not in the file's sessions table`);
  }
  return lines;
}

function sessionName(s: HermesSessionOutcome): string {
  return s.id === s.hermesId ? s.id : `${s.hermesId} (${s.id})`;
}
