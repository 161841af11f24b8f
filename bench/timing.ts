import { performance } from "node:perf_hooks";

/** The result of one timed call and how long it took, in milliseconds. */
export interface Timed<R> {
  ms: number;
  value: R;
}

/** Times exactly one awaited call with `performance.now()`. */
export async function timed<R>(call: () => Promise<R>): Promise<Timed<R>> {
  const start = performance.now();
  const value = await call();
  return { ms: performance.now() - start, value };
}

/** Positions `floor(i*n/count)` for i = 0..count-1 (the README's even sampling). */
export function evenPositions(n: number, count = 200): number[] {
  const positions: number[] = [];
  if (n <= 0) return positions;
  for (let i = 0; i < count; i++) positions.push(Math.floor((i * n) / count));
  return positions;
}
