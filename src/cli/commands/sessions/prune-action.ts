/**
 * `threadline sessions prune [--older-than 90] [--source S] [--yes] [--dry-run] [--vacuum]`:
 * deletes ended sessions whose last activity is older than N days; `--vacuum` then rewrites
 * the whole file.
 *
 * The action of the command defined in prune-command.ts, loaded with `import()` only when the command runs.
 *
 * @module
 */
import type { SessionSummary, StoreMaintenance } from "../../../store/index.js";
import { relativeTime, truncate, useColor, writeJson, type CliIo } from "../../cli-output.js";
import { CliError, withExistingDatabase } from "../../cli-context.js";
import { formatBytes } from "../../byte-size.js";
import { canPrompt, confirm } from "../../confirm-prompt.js";
import { progressWanted, PROGRESS_MIN_ITEMS, startProgressBar } from "../../progress-bar.js";
import { collectSessions } from "../../session-pages.js";
import { sessionTable } from "../../session-table.js";

interface PruneCommandOptions {
  db?: string;
  json?: boolean;
  source?: string[];
  olderThan: number;
  yes?: boolean;
  dryRun?: boolean;
  vacuum?: boolean;
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
  /** Whether a full `VACUUM` ran (`--vacuum`; false for a dry run or a "no" answer). */
  vacuumed: boolean;
  /** Database size before and after (`null` when nothing was deleted or vacuumed). */
  databaseBytesBefore: number | null;
  databaseBytesAfter: number | null;
  /** `before − after`, at least 0 (`null` when nothing was deleted or vacuumed). */
  reclaimedBytes: number | null;
}

/** Sessions shown in the preview before the question. */
export const PRUNE_SAMPLE_SIZE = 5;

/** Delete batches of a prune with a progress bar (each one transaction). */
const PRUNE_BATCHES = 20;

/** Runs `prune`: the action of makePruneCommand (in prune-command.ts), loaded when the command runs. */
export async function run(io: CliIo, options: PruneCommandOptions): Promise<void> {
  await withExistingDatabase(options.db, io.env, async (db) => {
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
      vacuumed: false,
      databaseBytesBefore: null,
      databaseBytesAfter: null,
      reclaimedBytes: null,
    };
    const what = `ended session${candidates.length === 1 ? "" : "s"} not active for ${days} day${days === 1 ? "" : "s"}${sources === undefined ? "" : ` from ${sources.join(", ")}`}`;
    if (candidates.length === 0 && options.vacuum && !options.dryRun) {
      const before = (await db.getStats()).databaseBytes;
      const pruned = await db.pruneSessions({ olderThanDays: days, now, vacuum: "full", ...(sources === undefined ? {} : { sources }) });
      const after = (await db.getStats()).databaseBytes;
      Object.assign(result, {
        pruned,
        vacuumed: true,
        databaseBytesBefore: before,
        databaseBytesAfter: after,
        reclaimedBytes: Math.max(0, before - after),
      });
      if (options.json) writeJson(io, result);
      else {
        io.stdout.write(`Nothing to prune: no ${what}.\n`);
        io.stdout.write(`Vacuumed: reclaimed ${formatBytes(Math.max(0, before - after))} (database ${formatBytes(before)} → ${formatBytes(after)}).\n`);
      }
      return;
    }
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
          "TL_ERR_CONFIRMATION_REQUIRED",
          `Refusing to prune ${candidates.length} session(s) without confirmation: stdin is not a terminal. Pass --yes to prune, or --dry-run to list them.`,
        );
      }
      io.stderr.write(prunePreview(candidates, what, { now, color: useColor(io, io.stderr) }));
      if (!(await confirm(io, `Prune ${candidates.length} ${what}? [y/N]`))) {
        if (options.json) writeJson(io, result);
        else io.stdout.write("Cancelled; nothing was deleted.\n");
        return;
      }
    }
    const before = (await db.getStats()).databaseBytes;
    const vacuum = options.vacuum === true ? "full" : true;
    const pruned = await pruneWithProgress(io, db, candidates, { days, now, sources, vacuum });
    const after = (await db.getStats()).databaseBytes;
    Object.assign(result, {
      pruned,
      vacuumed: options.vacuum === true,
      databaseBytesBefore: before,
      databaseBytesAfter: after,
      reclaimedBytes: Math.max(0, before - after),
    });
    if (options.json) {
      writeJson(io, result);
      return;
    }
    io.stdout.write(`Pruned ${pruned} session(s).\n`);
    io.stdout.write(
      `${options.vacuum ? "Vacuumed: reclaimed" : "Reclaimed"} ${formatBytes(Math.max(0, before - after))} (database ${formatBytes(before)} → ${formatBytes(after)}).\n`,
    );
  });
}

/**
 * What a prune will delete, shown before the question: the count, the oldest and the newest
 * session (by last activity), and a sample (every one when there are few, else
 * {@link PRUNE_SAMPLE_SIZE} spread from newest to oldest).
 */
function prunePreview(candidates: readonly SessionSummary[], what: string, { now, color }: { now: number; color: boolean }): string {
  const newestFirst = [...candidates].sort((a, b) => b.lastActiveAt - a.lastActiveAt);
  const newest = newestFirst[0]!;
  const oldest = newestFirst[newestFirst.length - 1]!;
  const describe = (s: SessionSummary): string =>
    `${s.id}, last active ${relativeTime(s.lastActiveAt, now)}${s.title ? ` "${truncate(s.title, 40)}"` : s.preview ? ` "${truncate(s.preview, 40)}"` : ""}`;
  const n = newestFirst.length;
  const sample =
    n <= PRUNE_SAMPLE_SIZE
      ? newestFirst
      : Array.from({ length: PRUNE_SAMPLE_SIZE }, (_v, i) => newestFirst[Math.round((i * (n - 1)) / (PRUNE_SAMPLE_SIZE - 1))]!);
  const lines = [`${n} ${what} will be deleted, with all their messages:`];
  if (n > 1) lines.push(`  Oldest: ${describe(oldest)}`, `  Newest: ${describe(newest)}`);
  lines.push("", n <= PRUNE_SAMPLE_SIZE ? "" : `A sample of ${PRUNE_SAMPLE_SIZE} of the ${n}:`, sessionTable(sample, { now, color }));
  if (n > PRUNE_SAMPLE_SIZE) lines.push(`("threadline sessions prune --dry-run" lists all ${n}.)`);
  return `${lines.filter((line, i) => !(line === "" && lines[i - 1] === "")).join("\n")}\n\n`;
}

/**
 * Deletes the candidates through the store's own prune (same rule; the store deletes in
 * batches of bounded transactions). On a terminal, a large prune goes oldest first in batches, each a prune with its
 * cutoff at the next batch's first session, so the bar moves; the last call uses the real
 * cutoff (anything that qualified meanwhile goes too) and reclaims the space.
 */
async function pruneWithProgress(
  io: CliIo,
  db: StoreMaintenance,
  candidates: readonly SessionSummary[],
  { days, now, sources, vacuum }: { days: number; now: number; sources: string[] | undefined; vacuum: true | "full" },
): Promise<number> {
  const filter = sources === undefined ? {} : { sources };
  if (!progressWanted(io) || candidates.length < PROGRESS_MIN_ITEMS) return db.pruneSessions({ olderThanDays: days, now, vacuum, ...filter });
  const oldestFirst = candidates.map((s) => s.lastActiveAt).sort((a, b) => a - b);
  const step = Math.ceil(oldestFirst.length / PRUNE_BATCHES);
  const bar = startProgressBar(io, { label: "Pruning", total: candidates.length });
  let pruned = 0;
  try {
    let previous = -Infinity;
    for (let i = step; i < oldestFirst.length; i += step) {
      const boundary = oldestFirst[i]!;
      if (boundary <= previous) continue;
      previous = boundary;
      // Everything last active strictly before the boundary: older than the real cutoff too.
      const done = await db.pruneSessions({ olderThanDays: 0, now: boundary, vacuum: false, ...filter });
      pruned += done;
      bar.increment(done);
    }
    const rest = await db.pruneSessions({ olderThanDays: days, now, vacuum, ...filter });
    pruned += rest;
    bar.increment(rest);
  } finally {
    bar.stop();
  }
  return pruned;
}
