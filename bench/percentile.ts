/**
 * Nearest-rank percentile: the smallest value such that at least p% of the
 * values are less than or equal to it (rank = ceil(p/100 * n), 1-based).
 */
export function nearestRank(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** The p50 / p95 / p99 of a set of timings, in the timings' unit. */
export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

/** p50, p95 and p99 of the timed calls (no warm-up calls are dropped). */
export function percentiles(values: readonly number[]): Percentiles {
  return { p50: nearestRank(values, 50), p95: nearestRank(values, 95), p99: nearestRank(values, 99) };
}
