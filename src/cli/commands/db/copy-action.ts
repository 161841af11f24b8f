/**
 * `threadline db copy <from> <to> [--json]`: the action of `db copy` (copy-command.ts). Opens the
 * source (which must exist) and the target (a new SQLite file is created; a PostgreSQL database
 * or schema is migrated), refuses the same database twice and a target that holds data, and
 * runs `copyDatabase` with a progress bar on a terminal's stderr.
 *
 * @module
 */
import { realpath, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { copyDatabase, type DatabaseCopyCounts, type DatabaseCopyReport, type SessionDB } from "../../../store/index.js";
import { openSessionDB } from "../../../store/index.js";
import { writeJson, type CliIo } from "../../cli-output.js";
import { CliError, missingDatabaseFile, openExistingDatabase } from "../../cli-context.js";
import { progressWanted, startProgressBar } from "../../progress-bar.js";

interface CopyOptions {
  json?: boolean;
}

/** Refused records listed in the error message (the JSON report has them all). */
const LISTED_PROBLEMS = 20;

/** Runs `db copy`: the action of makeDbCopyCommand, loaded when the command runs. */
export async function run(io: CliIo, from: string, to: string, options: CopyOptions): Promise<void> {
  if (from.trim() === "" || to.trim() === "") throw new CliError("TL_ERR_USAGE", "Name both databases: threadline db copy <from> <to>.");
  if ((await sameDatabase(from, to)) !== null) {
    throw new CliError("TL_ERR_USAGE", `<from> and <to> name the same database (${withoutPassword(from)}); name a new, empty database as <to>.`);
  }
  const source = await openExistingDatabase(from, io.env);
  let target: SessionDB | null = null;
  const createdFile = await missingDatabaseFile(to);
  let report: DatabaseCopyReport;
  try {
    target = await openSessionDB(to);
    const total = progressWanted(io) ? (await source.getStats({ searchIndexBytes: false })).totalSessions : 0;
    const bar = startProgressBar(io, { label: "Copying sessions", total });
    try {
      report = await copyDatabase(source, target, { onSession: () => bar.increment() });
    } finally {
      bar.stop();
    }
  } catch (error) {
    // A SQLite file this run created holds a partial copy at most: leave nothing behind.
    if (createdFile !== null) {
      await target?.close().catch(() => {});
      target = null;
      for (const suffix of ["", "-wal", "-shm"]) await rm(`${createdFile}${suffix}`, { force: true });
    }
    throw error;
  } finally {
    await source.close();
    await target?.close();
  }
  if (options.json) writeJson(io, { from: withoutPassword(from), to: withoutPassword(to), ...report });
  else io.stdout.write(summary(report.counts, report.seconds));
  const problems = [...report.sessionErrors.map((p) => `session #${p.line}: ${p.message}`), ...report.stateErrors];
  if (problems.length > 0) {
    const listed = problems.slice(0, LISTED_PROBLEMS).map((p) => `  ${p}`);
    const rest = problems.length - listed.length;
    throw new CliError(
      "TL_ERR_INCOMPLETE",
      `${problems.length} record${problems.length === 1 ? " was" : "s were"} not copied (everything else was):\n${listed.join("\n")}${rest > 0 ? `\n  … and ${rest} more (--json lists them all)` : ""}`,
    );
  }
}

/**
 * The database both arguments name, when they name one (the same path or file, or the same
 * PostgreSQL server, database and schema), else `null`.
 */
async function sameDatabase(from: string, to: string): Promise<string | null> {
  if (from === to) return from;
  const pg = (target: string): string | null => {
    if (!/^postgres(ql)?:\/\//iu.test(target)) return null;
    try {
      const url = new URL(target);
      const schema = url.searchParams.get("schema") ?? "public";
      return `${url.hostname}:${url.port || "5432"}${url.pathname}?schema=${schema}`;
    } catch {
      return target;
    }
  };
  const a = pg(from);
  const b = pg(to);
  if (a !== null || b !== null) return a === b ? from : null;
  const file = async (target: string): Promise<string> => {
    const path = resolve(target.replace(/^file:\/\//iu, ""));
    return realpath(path).catch(() => path);
  };
  return (await file(from)) === (await file(to)) ? from : null;
}

/** A target as it may be shown: a URL's password replaced by `***`. */
function withoutPassword(target: string): string {
  return target.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/iu, "$1***@");
}

/** The text summary: one line per kind, then the time. */
function summary(c: DatabaseCopyCounts, seconds: number): string {
  const mib = (c.mediaBytes / (1024 * 1024)).toFixed(1);
  const rate = seconds > 0 ? Math.round(c.messages / seconds) : c.messages;
  return [
    `Copied ${c.sessions} session${c.sessions === 1 ? "" : "s"} with ${c.messages} messages in ${seconds.toFixed(1)} s (${rate} messages/s).`,
    `  attachments        ${c.mediaBlobs} blobs, ${mib} MiB`,
    `  execution sessions ${c.executions}`,
    `  memory records     ${c.memories}`,
    `  pairing approvals  ${c.pairingApprovals}`,
    `  identity aliases   ${c.aliases}`,
    `  routing entries    ${c.routes}`,
    `  meta values        ${c.meta}`,
    "",
  ].join("\n");
}
