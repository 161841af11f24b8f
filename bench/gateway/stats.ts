import { nearestRank } from "../percentile.js";

const round3 = (value: number): number => Math.round(value * 1000) / 1000;

/** Nearest-rank p50 / p99 (and max) of timings in ms, rounded to µs. */
export interface Spread {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function spread(values: readonly number[]): Spread {
  return {
    p50_ms: round3(nearestRank(values, 50)),
    p99_ms: round3(nearestRank(values, 99)),
    max_ms: round3(values.length === 0 ? Number.NaN : Math.max(...values)),
  };
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export { round3 };
export const round1 = (value: number): number => Math.round(value * 10) / 10;
export const mb = (bytes: number): number => Math.round(bytes / 1e4) / 100;
