/**
 * `threadline doctor [--repair] [--verify-media] [--db target] [--json]`: checks a database
 * (integrity, the search index, schema version, WAL, free space; for PostgreSQL connectivity,
 * schema version and the server's view; on both, that every attachment reference resolves)
 * and, with `--repair`, salvages a damaged SQLite file into a fresh one, keeping the damaged
 * file as a backup.
 *
 * @module
 */
import { resolve } from "node:path";
import {
  diagnoseDatabase,
  repairDatabase,
  type DoctorReport,
  type MediaDoctorCheck,
  type PostgresDoctorReport,
  type RepairReport,
  type SqliteDoctorReport,
} from "../../store/index.js";
import { formatBytes } from "../byte-size.js";
import { CliError, databaseTarget, EXIT, missingDatabaseFile } from "../cli-context.js";
import { styles, useColor, writeJson, type CliIo } from "../cli-output.js";

/** `doctor --json` when the default database does not exist yet (a first run). */
export interface NotCreatedYetJson {
  backend: "sqlite";
  /** The default file's absolute path. */
  location: string;
  notCreatedYet: true;
  /** Nothing stored, nothing damaged. */
  healthy: true;
}

interface DoctorOptions {
  db?: string;
  json?: boolean;
  repair?: boolean;
  verifyMedia?: boolean;
}

/** Control characters of text read from a damaged file, made visible. */
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/gu, "?");
}

/** Runs `doctor`: the action of makeDoctorCommand (in doctor-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: DoctorOptions): Promise<void> {
  const target = databaseTarget(options.db, io.env);
  const named = (options.db ?? "").trim() !== "" || (io.env["THREADLINE_DB"] ?? "").trim() !== "";
  const notCreated = named ? null : await missingDatabaseFile(target);
  if (notCreated !== null) {
    // A first run: the default database does not exist yet. Nothing to check or repair; nothing is created.
    const location = resolve(notCreated);
    if (options.json) {
      const report: NotCreatedYetJson = { backend: "sqlite", location, notCreatedYet: true, healthy: true };
      writeJson(io, options.repair ? { diagnosis: report, repair: null } : report);
    } else {
      io.stdout.write(
        `No database yet at ${location}: nothing has been stored, so there is nothing to check${options.repair ? " or repair" : ""}. "threadline chat" (or serve, import, api) creates it.\n`,
      );
    }
    return;
  }
  const diagnosis = await diagnoseDatabase(target, { verifyMedia: options.verifyMedia === true });
  const s = styles(useColor(io));
  if (!options.repair) {
    if (options.json) writeJson(io, diagnosis);
    else io.stdout.write(`${describe(diagnosis, s)}\n${verdict(diagnosis, s)}\n`);
    if (!diagnosis.healthy) io.exitCode = EXIT.failure;
    return;
  }
  if (diagnosis.backend === "postgres") {
    if (options.json) writeJson(io, { diagnosis, repair: null });
    else io.stdout.write(`${describe(diagnosis, s)}\n`);
    throw new CliError(
      "TL_ERR_USAGE",
      '--repair is for SQLite files only; a PostgreSQL server keeps its data safe itself (use its backups). Run "threadline doctor" without --repair.',
    );
  }
  if (diagnosis.healthy) {
    if (options.json) writeJson(io, { diagnosis, repair: null });
    else io.stdout.write(`${describe(diagnosis, s)}\n${s.green("Healthy: nothing to repair.")}\n`);
    return;
  }
  if (onlyMediaProblems(diagnosis)) {
    // Missing or damaged attachments are not damage a salvage copy can mend.
    if (options.json) writeJson(io, { diagnosis, repair: null });
    else io.stdout.write(`${describe(diagnosis, s)}\n${verdict(diagnosis, s)}\n${s.yellow("Nothing for --repair to do: the file itself is intact.")}\n`);
    io.exitCode = EXIT.failure;
    return;
  }
  if (diagnosis.schemaVersion !== null && diagnosis.schemaVersion > diagnosis.supportedSchemaVersion) {
    throw new CliError(
      "TL_ERR_CONFLICT",
      `${diagnosis.location} was written by a newer Threadline (schema ${diagnosis.schemaVersion}, this one knows ${diagnosis.supportedSchemaVersion}); ` +
        "a repair here would lose what it added. Run the repair with that newer Threadline.",
    );
  }
  const repair = await repairDatabase(diagnosis.location);
  if (options.json) writeJson(io, { diagnosis, repair });
  else io.stdout.write(`${describe(diagnosis, s)}\n\n${describeRepair(repair, s)}\n`);
}

type Styles = ReturnType<typeof styles>;

/** Whether every problem found is a media one (a repair cannot mend those). */
function onlyMediaProblems(report: DoctorReport): boolean {
  return report.problems.length > 0 && report.problems.every((p) => report.media.problems.includes(p));
}

function describe(report: DoctorReport, s: Styles): string {
  return `${report.backend === "sqlite" ? describeSqlite(report, s) : describePostgres(report, s)}\n${describeMedia(report.media, s)}`;
}

/** The media check's row: counts, what is missing, what the sweep will remove. */
function describeMedia(m: MediaDoctorCheck, s: Styles): string {
  const n = (v: number): string => v.toLocaleString("en-US");
  if (m.ok === null) return row(s, "Media", s.yellow(clean(m.skipped ?? "not checked")));
  const counts = `${n(m.references)} reference(s) to ${n(m.blobs)} stored attachment(s) (${formatBytes(m.bytes)})${m.verified ? ", every blob re-hashed" : ""}`;
  const lines = [row(s, "Media", `${m.ok ? mark(true, s) : s.red("PROBLEMS")}, ${counts}`)];
  if (m.missingCount > 0) {
    lines.push(`${" ".repeat(14)}${s.red(`${n(m.missingCount)} missing`)} (bytes not stored):`);
    for (const x of m.missing.slice(0, 10)) lines.push(`${" ".repeat(16)}session ${clean(x.sessionId)}, message ${x.messageId}: ${x.sha256}`);
    if (m.missingCount > 10) lines.push(`${" ".repeat(16)}… and ${n(m.missingCount - 10)} more (--json lists up to 100)`);
  }
  for (const sha of m.corrupt.slice(0, 10)) lines.push(`${" ".repeat(14)}${s.red("damaged")}: ${sha}`);
  if (m.unreferenced > 0) {
    lines.push(`${" ".repeat(14)}${n(m.unreferenced)} attachment(s) nothing refers to (not a problem: the gateway's hourly sweep removes them after an hour)`);
  }
  return lines.join("\n");
}

function row(s: Styles, label: string, value: string): string {
  return `${s.dim(label.padEnd(12))}  ${value}`;
}

function mark(ok: boolean, s: Styles): string {
  return ok ? s.green("ok") : s.red("DAMAGED");
}

function describeSqlite(r: SqliteDoctorReport, s: Styles): string {
  const n = (v: number): string => v.toLocaleString("en-US");
  const lines = [
    row(s, "Database", `${r.location} (sqlite, ${formatBytes(r.space.fileBytes)})`),
    row(s, "Schema", r.schemaVersion === null ? "unreadable" : `version ${r.schemaVersion} (this Threadline: ${r.supportedSchemaVersion})`),
    row(
      s,
      "Integrity",
      r.integrity.ok ? mark(true, s) : `${mark(false, s)}${r.integrity.findings.length > 0 ? `: ${r.integrity.findings.length} finding(s)` : ""}`,
    ),
    ...r.integrity.findings.slice(0, 10).map((f) => `${" ".repeat(14)}${clean(f)}`),
    row(
      s,
      "Search index",
      r.searchIndex.ok === false
        ? `${mark(false, s)}${r.searchIndex.finding === null ? "" : ` (${clean(r.searchIndex.finding)})`}`
        : `${r.searchIndex.ok === null ? s.yellow(clean(r.searchIndex.finding ?? "not checked")) : mark(true, s)}` +
            `${r.searchIndex.indexedUpTo === null ? "" : `, indexed up to message ${n(r.searchIndex.indexedUpTo)} of ${n(r.searchIndex.newestMessageId ?? 0)}`}`,
    ),
    row(s, "WAL", `${r.wal.journalMode ?? "unknown"} mode, -wal ${formatBytes(r.wal.walBytes)} (${n(r.wal.walFrames)} frame(s) not yet checkpointed)`),
    row(
      s,
      "Free space",
      `${r.space.freelistPages === null ? "unknown" : `${n(r.space.freelistPages)} free page(s) (${formatBytes(r.space.freelistBytes ?? 0)})`} in the file; ` +
        `${r.space.diskFreeBytes === null ? "unknown" : formatBytes(r.space.diskFreeBytes)} free on the disk`,
    ),
  ];
  return lines.join("\n");
}

function describePostgres(r: PostgresDoctorReport, s: Styles): string {
  const lines = [
    row(s, "Database", `${r.location} (postgres, schema ${r.schema})`),
    row(s, "Connection", r.connected ? s.green("ok") : s.red("FAILED")),
    row(s, "Schema", r.schemaVersion === null ? "none" : `version ${r.schemaVersion} (this Threadline: ${r.supportedSchemaVersion})`),
  ];
  if (r.server !== null) {
    lines.push(
      row(
        s,
        "Server",
        `PostgreSQL ${r.server.version}, database ${r.server.database} (${formatBytes(r.server.databaseBytes)})` +
          (r.server.checksumFailures === null ? "" : `, ${r.server.checksumFailures} checksum failure(s)`),
      ),
    );
  }
  lines.push(row(s, "Repair", "SQLite only (a PostgreSQL server keeps its data safe itself: use its backups)"));
  return lines.join("\n");
}

function verdict(report: DoctorReport, s: Styles): string {
  if (report.healthy) return `\n${s.green("Healthy.")}`;
  const problems = report.problems.map((p) => `  - ${clean(p)}`).join("\n");
  const next = onlyMediaProblems(report)
    ? "Only attachments are affected: do what is named above (a --repair would not bring them back)."
    : report.backend === "sqlite"
      ? `Stop the processes that use it, then run "threadline doctor --repair --db ${report.location}" to copy everything readable into a fresh file (the damaged one is kept).`
      : "Fix what is named above; repair is SQLite-only.";
  return `\n${s.red("Problems found:")}\n${problems}\n${next}`;
}

function describeRepair(r: RepairReport, s: Styles): string {
  const n = (v: number): string => v.toLocaleString("en-US");
  const other = Object.entries(r.copied.other)
    .filter(([, count]) => count > 0)
    .map(([table, count]) => `${table} ${n(count)}`)
    .join(", ");
  const lines = [
    s.green(`Repaired ${r.location}.`),
    row(s, "Copied", `${n(r.copied.sessions)} session(s), ${n(r.copied.messages)} message(s)${other === "" ? "" : `; ${other}`}`),
    row(s, "Indexed", `${n(r.indexed)} message(s) in a fresh search index`),
    row(s, "Backup", `${r.backup} (the damaged file, kept as it was)`),
  ];
  const lost: string[] = [];
  for (const table of r.unreadableTables) lost.push(`table ${table}: nothing could be read`);
  for (const u of r.unreadable) {
    lost.push(`${u.table}: rows after rowid ${u.afterRowid ?? "(start)"} and before ${u.beforeRowid ?? "(end)"}`);
  }
  if (r.lostSessionIds.length > 0) lost.push(`sessions lost: ${r.lostSessionIds.map(clean).join(", ")}`);
  for (const m of r.lostMessages) lost.push(`session ${clean(m.sessionId)}: message id(s) ${compactIds(m.messageIds)}`);
  if (r.recreatedSessionIds.length > 0)
    lost.push(`sessions recreated from their messages (source "recovered", their details lost): ${r.recreatedSessionIds.map(clean).join(", ")}`);
  for (const [table, count] of Object.entries(r.dropped)) lost.push(`${table}: ${n(count)} row(s) dropped (what they pointed at was lost)`);
  if (lost.length === 0) lines.push(row(s, "Lost", "nothing: every row was read"));
  else lines.push(`${s.yellow("Could not be read:")}`, ...lost.map((l) => `  - ${l}`));
  return lines.join("\n");
}

/** `3-7, 9, 12-13` for ascending ids. */
function compactIds(ids: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++;
    parts.push(j === i ? String(ids[i]) : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}
