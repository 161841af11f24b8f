/**
 * Time as the gateway lifecycle reads it: Unix epoch seconds (a float), behind a
 * {@link Clock} interface so tests can drive time with a {@link ManualClock}
 * instead of sleeping.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";

/** A source of the current time. */
export interface Clock {
  /** The current time in Unix epoch seconds (fractional). */
  now(): number;
}

/**
 * The real wall clock (`Date.now() / 1000`).
 *
 * @example
 * ```ts
 * const startedAt = systemClock.now(); // e.g. 1767225600.123
 * ```
 */
export const systemClock: Clock = Object.freeze({
  now(): number {
    return Date.now() / 1000;
  },
});

function checkSeconds(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new InvalidInputError(`ManualClock: ${what} must be a finite number of seconds (got ${String(value)}).`, {
      field: what,
    });
  }
  return value;
}

/**
 * A clock that only moves when told to, for deterministic tests.
 *
 * @example
 * ```ts
 * const clock = new ManualClock(1_000);
 * clock.advance(90);
 * clock.now(); // 1090
 * clock.set(5_000);
 * ```
 */
export class ManualClock implements Clock {
  #seconds: number;

  /** @param startSeconds The starting time in Unix epoch seconds. */
  constructor(startSeconds: number) {
    this.#seconds = checkSeconds(startSeconds, "startSeconds");
  }

  /** The current (manual) time in epoch seconds. */
  now(): number {
    return this.#seconds;
  }

  /** Jumps to time `t` (epoch seconds); may move backwards. */
  set(t: number): void {
    this.#seconds = checkSeconds(t, "t");
  }

  /**
   * Moves time forward by `seconds` (0 or more) and returns the new time.
   * To move backwards use {@link ManualClock.set}.
   */
  advance(seconds: number): number {
    checkSeconds(seconds, "seconds");
    if (seconds < 0) {
      throw new InvalidInputError(`ManualClock.advance: seconds must be 0 or more (got ${seconds}); use set() to move the clock backwards.`, {
        field: "seconds",
      });
    }
    this.#seconds += seconds;
    return this.#seconds;
  }
}
