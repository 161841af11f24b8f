/**
 * Progress of long export and import runs: a `cli-progress` bar on stderr, only when stderr
 * is a terminal and the job is large; otherwise nothing is drawn.
 *
 * @module
 */
import cliProgress from "cli-progress";
import type { CliIo } from "./cli-output.js";

/** Jobs with fewer items than this get no bar (they finish before a bar would help). */
export const PROGRESS_MIN_ITEMS = 100;

/** A running bar (or a no-op one). */
export interface ProgressBar {
  /** Counts `by` (default 1) more items done. */
  increment(by?: number): void;
  /** Draws the final state and releases the terminal line. */
  stop(): void;
}

const NO_BAR: ProgressBar = { increment: () => {}, stop: () => {} };

/** Whether a bar would be drawn at all on this io (stderr is a terminal); lets callers skip counting. */
export function progressWanted(io: CliIo): boolean {
  return io.stderr.isTTY === true;
}

/**
 * Starts a bar `label [████░░░░] 40% | 400/1000` on stderr, or returns a no-op bar when
 * stderr is not a terminal or `total` is below {@link PROGRESS_MIN_ITEMS}.
 *
 * @example
 * const bar = startProgressBar(io, { label: "Exporting", total: 5000 });
 * for await (const record of records) { write(record); bar.increment(); }
 * bar.stop();
 */
export function startProgressBar(io: CliIo, { label, total }: { label: string; total: number }): ProgressBar {
  if (!progressWanted(io) || total < PROGRESS_MIN_ITEMS) return NO_BAR;
  const bar = new cliProgress.SingleBar(
    {
      stream: io.stderr,
      format: `${label} {bar} {percentage}% | {value}/{total}`,
      barCompleteChar: "\u2588",
      barIncompleteChar: "\u2591",
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  let stopped = false;
  return {
    increment: (by = 1) => {
      if (!stopped) bar.increment(by);
    },
    stop: () => {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}
