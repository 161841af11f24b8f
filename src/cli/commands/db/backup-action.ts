/**
 * `threadline db backup <file> [--force] [--db target] [--json]`: a consistent copy of a live
 * SQLite database in one standalone file (the store's `backupDatabase`), with what it holds
 * and how long it took.
 *
 * @module
 */
import { resolve } from "node:path";
import { backupDatabase, type BackupReport } from "../../../store/index.js";
import { formatBytes } from "../../byte-size.js";
import { CliError, databaseTarget, missingDatabaseFile } from "../../cli-context.js";
import { styles, useColor, writeJson, type CliIo } from "../../cli-output.js";

interface BackupCommandOptions {
  db?: string;
  force?: boolean;
  json?: boolean;
}

/** Runs `db backup`: the action of makeDbBackupCommand (in backup-command.ts), loaded when the command runs. */
export async function run(io: CliIo, file: string, options: BackupCommandOptions): Promise<void> {
  if (file.trim() === "") throw new CliError("TL_ERR_USAGE", "Name the backup file: threadline db backup <file>.");
  const target = databaseTarget(options.db, io.env);
  const missing = await missingDatabaseFile(target);
  if (missing !== null) {
    throw new CliError(
      "TL_ERR_NOT_FOUND",
      `No database at ${resolve(missing)}, so there is nothing to back up. Name the database with --db (or THREADLINE_DB), or check THREADLINE_HOME.`,
    );
  }
  // Ctrl-C (or a service manager's SIGTERM) stops the copy at its next step and removes the partial file.
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  io.signals.on("SIGINT", onSignal);
  io.signals.on("SIGTERM", onSignal);
  let report: BackupReport;
  try {
    report = await backupDatabase(target, file, { force: options.force === true, signal: stop.signal });
  } finally {
    io.signals.off("SIGINT", onSignal);
    io.signals.off("SIGTERM", onSignal);
  }
  if (options.json) {
    writeJson(io, report);
    return;
  }
  io.stdout.write(`${describe(report, styles(useColor(io)))}\n`);
}

function describe(r: BackupReport, s: ReturnType<typeof styles>): string {
  const n = (v: number): string => v.toLocaleString("en-US");
  const row = (label: string, value: string): string => `${s.dim(label.padEnd(12))}  ${value}`;
  const seconds = (r.elapsedMs / 1000).toFixed(r.elapsedMs < 10_000 ? 2 : 1);
  return [
    s.green(`Backed up ${r.source}${r.replaced ? " (replaced the old backup)" : ""}.`),
    row("Backup", `${r.path} (${formatBytes(r.bytes)}, mode 0600, one standalone file)`),
    row("Holds", `${n(r.sessions)} session(s), ${n(r.messages)} message(s), ${n(r.attachments.count)} attachment(s) (${formatBytes(r.attachments.bytes)})`),
    row("Checked", `integrity ok, schema version ${r.schemaVersion}`),
    row("Took", `${seconds} s${r.restarts > 0 ? ` (the copy started over ${r.restarts} time(s) as the database was written meanwhile)` : ""}`),
    s.dim(
      "Attachments live inside the database, so this file is the whole history. The config file and service.env are not in it: keep copies of those yourself.",
    ),
  ].join("\n");
}
