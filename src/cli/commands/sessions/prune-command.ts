/**
 * `threadline sessions prune [--older-than 90] [--source S] [--yes] [--dry-run]`: deletes
 * ended sessions whose last activity is older than N days.
 *
 * @module
 */
import { Command, Option } from "commander";
import { InvalidInputError, type SessionSummary } from "../../../store/index.js";
import { useColor, writeJson, type CliIo } from "../../cli-output.js";
import { CliError, EXIT, withExistingDatabase } from "../../cli-context.js";
import { formatBytes } from "../../byte-size.js";
import { dbOption, jsonOption, sourceOption } from "../../command-options.js";
import { canPrompt, confirm } from "../../confirm-prompt.js";
import { collectSessions } from "../../session-pages.js";
import { sessionTable } from "../../session-table.js";

interface PruneCommandOptions {
  db?: string;
  json?: boolean;
  source?: string[];
  olderThan: number;
  yes?: boolean;
  dryRun?: boolean;
}

/** `sessions prune --json`. */
export interface PruneJson {
  dryRun: boolean;
  olderThanDays: number;
  /** The source filter (`[]`: all sources). */
  sources: string[];
  /** The sessions that matched (and, unless a dry run or declined, were deleted). */
  sessions: SessionSummary[];
  /** How many were deleted (0 for a dry run or a "no" answer). */
  pruned: number;
  /** Database size before and after (`null` when nothing was deleted). */
  databaseBytesBefore: number | null;
  databaseBytesAfter: number | null;
  /** `before − after`, at least 0 (`null` when nothing was deleted). */
  reclaimedBytes: number | null;
}

/**
 * Builds `sessions prune`. Only ended sessions go; live ones are never pruned. Asks first
 * unless `--yes` (refusing without a terminal), `--dry-run` lists instead; then prints
 * `Pruned N session(s).` and the space reclaimed. JSON: {@link PruneJson}.
 */
export function makePruneCommand(io: CliIo): Command {
  return new Command("prune")
    .description("delete ended sessions not active for N days (asks first unless --yes)")
    .addOption(new Option("--older-than <days>", "last activity more than this many days ago").default(90).argParser(parseDays))
    .addOption(sourceOption())
    .addOption(new Option("-y, --yes", "do not ask"))
    .addOption(new Option("--dry-run", "list what would be pruned, delete nothing"))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (options: PruneCommandOptions) => {
      await withExistingDatabase(options.db, async (db) => {
        const now = io.now();
        const days = options.olderThan;
        const sources = options.source !== undefined && options.source.length > 0 ? options.source : undefined;
        const cutoff = now - days * 86_400;
        const all = await collectSessions(db, { includeChildren: true, ...(sources === undefined ? {} : { sources }) }, Infinity);
        const candidates = all.items.filter((s) => s.endedAt !== null && s.lastActiveAt < cutoff);
        const result: PruneJson = {
          dryRun: options.dryRun === true,
          olderThanDays: days,
          sources: sources ?? [],
          sessions: candidates,
          pruned: 0,
          databaseBytesBefore: null,
          databaseBytesAfter: null,
          reclaimedBytes: null,
        };
        const what = `ended session${candidates.length === 1 ? "" : "s"} not active for ${days} day${days === 1 ? "" : "s"}${sources === undefined ? "" : ` from ${sources.join(", ")}`}`;
        if (candidates.length === 0) {
          if (options.json) writeJson(io, result);
          else io.stdout.write(`Nothing to prune: no ${what}.\n`);
          return;
        }
        if (options.dryRun) {
          if (options.json) writeJson(io, result);
          else {
            io.stdout.write(`Would prune ${candidates.length} ${what}:\n\n${sessionTable(candidates, { now, color: useColor(io) })}\n`);
            io.stdout.write(`\nDry run: nothing was deleted. Run again without --dry-run to prune.\n`);
          }
          return;
        }
        if (!options.yes) {
          if (!canPrompt(io)) {
            throw new CliError(
              `Refusing to prune ${candidates.length} session(s) without confirmation: stdin is not a terminal. Pass --yes to prune, or --dry-run to list them.`,
              EXIT.conflict,
            );
          }
          if (!(await confirm(io, `Prune ${candidates.length} ${what}? [y/N]`))) {
            if (options.json) writeJson(io, result);
            else io.stdout.write("Cancelled; nothing was deleted.\n");
            return;
          }
        }
        const before = (await db.getStats()).databaseBytes;
        const pruned = await db.pruneSessions({ olderThanDays: days, now, ...(sources === undefined ? {} : { sources }) });
        const after = (await db.getStats()).databaseBytes;
        Object.assign(result, { pruned, databaseBytesBefore: before, databaseBytesAfter: after, reclaimedBytes: Math.max(0, before - after) });
        if (options.json) {
          writeJson(io, result);
          return;
        }
        io.stdout.write(`Pruned ${pruned} session(s).\n`);
        io.stdout.write(`Reclaimed ${formatBytes(Math.max(0, before - after))} (database ${formatBytes(before)} → ${formatBytes(after)}).\n`);
      });
    });
}

function parseDays(value: string): number {
  const days = Number(value);
  if (value.trim() === "" || !Number.isFinite(days) || days < 0) {
    throw new InvalidInputError(`--older-than must be a number of days ≥ 0 (got "${value}").`, { field: "--older-than" });
  }
  return days;
}
