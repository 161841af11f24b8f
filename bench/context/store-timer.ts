/**
 * The store's share of the time: every method of the gateway's SessionDB instance is wrapped
 * (on the instance, after the gateway opened it; the product runs unchanged) and timed.
 *
 * - `busyMs`: wall time during which at least one SessionDB call was in progress (the union of
 *   the calls' intervals, so concurrent calls, e.g. a background compression beside a turn, and
 *   calls made from inside another call count once);
 * - per method: calls and the sum of their durations (nested and concurrent calls each count).
 *
 * @module
 */
import { performance } from "node:perf_hooks";

/** One method's figures. */
export interface MethodTime {
  calls: number;
  ms: number;
}

/** Times the calls of one object. */
export class StoreTimer {
  #depth = 0;
  #busySince = 0;
  #busyMs = 0;
  #recording = false;
  readonly #methods = new Map<string, MethodTime>();

  /** Wraps every method of `target` (own and inherited, not the constructor). */
  wrap(target: object): void {
    const names = new Set<string>();
    for (let proto: object | null = target; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        if (name === "constructor") continue;
        const d = Object.getOwnPropertyDescriptor(proto, name);
        if (d !== undefined && typeof d.value === "function") names.add(name);
      }
    }
    const record = target as Record<string, (...a: unknown[]) => unknown>;
    for (const name of names) {
      const original = record[name]!;
      const timer = this;
      record[name] = function (this: unknown, ...a: unknown[]) {
        const started = timer.#enter();
        let result: unknown;
        try {
          result = original.apply(this, a);
        } catch (error) {
          timer.#leave(name, started);
          throw error;
        }
        if (result instanceof Promise) {
          result.then(
            () => timer.#leave(name, started),
            () => timer.#leave(name, started),
          );
        } else timer.#leave(name, started);
        return result;
      };
    }
  }

  /** Counts from now on (calls already in progress are not counted). */
  start(): void {
    this.#recording = true;
  }

  /** Stops counting. */
  stop(): void {
    this.#recording = false;
  }

  #enter(): number {
    const now = performance.now();
    if (this.#recording) {
      if (this.#depth === 0) this.#busySince = now;
      this.#depth += 1;
    }
    return this.#recording ? now : Number.NaN;
  }

  #leave(name: string, started: number): void {
    if (Number.isNaN(started)) return;
    const now = performance.now();
    this.#depth -= 1;
    if (this.#depth === 0) this.#busyMs += now - this.#busySince;
    const m = this.#methods.get(name) ?? { calls: 0, ms: 0 };
    m.calls += 1;
    m.ms += now - started;
    this.#methods.set(name, m);
  }

  /** Wall ms with at least one call in progress. */
  get busyMs(): number {
    return this.#busyMs + (this.#depth > 0 ? performance.now() - this.#busySince : 0);
  }

  /** Calls in progress now. */
  get inProgress(): number {
    return this.#depth;
  }

  /** Per method, most time first. */
  methods(): Array<[string, MethodTime]> {
    return [...this.#methods.entries()].sort((a, b) => b[1].ms - a[1].ms);
  }
}
