/**
 * The pure arithmetic of bench:cli: medians of the rounds, ratios to `node -e 0`, the
 * order of the commands in each round, and the targets.
 *
 * @module
 */

/** The median of `values` (the mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** The figures of one command over the rounds. */
export interface CommandFigures {
  /** Median wall time, spawn to exit (serve: spawn to the first 200 from /healthz), ms. */
  median_ms: number;
  /** Fastest round, ms. */
  min_ms: number;
  /** Median over the baseline's median (`node -e 0` of the same run); absent for the baseline. */
  ratio?: number;
}

/**
 * Median and minimum of `samples` (ms), and with `baselineMedian` the ratio of the median to it.
 * Times are rounded to 0.1 ms, ratios to 0.01.
 */
export function summarize(samples: readonly number[], baselineMedian?: number): CommandFigures {
  const mid = median(samples);
  const figures: CommandFigures = { median_ms: round(mid, 1), min_ms: round(Math.min(...samples), 1) };
  if (baselineMedian !== undefined) figures.ratio = round(mid / baselineMedian, 2);
  return figures;
}

/**
 * The commands of round `round` (0-based): `names` rotated by the round number, so that no
 * command always runs first (after an idle gap) or right after the same neighbour.
 */
export function roundOrder<T>(names: readonly T[], round: number): T[] {
  if (names.length === 0) return [];
  const shift = round % names.length;
  return [...names.slice(shift), ...names.slice(0, shift)];
}

/** A target of the issue: a figure of a command at most `max`. */
export interface Target {
  /** The command's key in the report. */
  command: string;
  /** `ratio` (to `node -e 0`) or `median_ms`. */
  figure: "ratio" | "median_ms";
  max: number;
}

/** Issue 31: `--version` ≤ 2× `node -e 0`, `sessions list` ≤ 3×, serve answers /healthz ≤ 0.5 s after spawn. */
export const TARGETS: readonly Target[] = [
  { command: "version", figure: "ratio", max: 2 },
  { command: "sessions_list", figure: "ratio", max: 3 },
  { command: "serve_healthz", figure: "median_ms", max: 500 },
];

/** The target of a command, as printed beside its figure (`≤ 2×`, `≤ 500 ms`); empty when it has none. */
export function targetLabel(command: string): string {
  const target = TARGETS.find((t) => t.command === command);
  if (target === undefined) return "";
  return target.figure === "ratio" ? `≤ ${target.max}×` : `≤ ${target.max} ms`;
}

/** Whether each target is met by `figures` (by command key); a missing figure does not meet it. */
export function targetsMet(figures: Readonly<Record<string, CommandFigures>>): Record<string, boolean> {
  const met: Record<string, boolean> = {};
  for (const target of TARGETS) {
    const value = figures[target.command]?.[target.figure];
    met[target.command] = value !== undefined && value <= target.max;
  }
  return met;
}
