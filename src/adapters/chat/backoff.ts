/**
 * The one back-off of every reconnect, poll and send loop of the chat adapters: a pause that
 * grows from `initialMs` by `factor` up to `maxMs` ({@link Backoff}), optionally jittered,
 * replaced by the platform's `Retry-After` when it gives one ({@link parseRetryAfter}), and cut
 * short when the adapter stops ({@link abortableSleep}); plus {@link retry} for send loops.
 *
 * @module
 */

/** Options of a {@link Backoff}. */
export interface BackoffOptions {
  /** The first pause, in ms. */
  initialMs: number;
  /** The longest pause, in ms. */
  maxMs: number;
  /** How much each pause grows (default 2). */
  factor?: number;
  /**
   * `none` (default: exactly the grown delay), `full` (a random pause between 0 and it) or
   * `equal` (half of it plus a random part of the other half).
   */
  jitter?: "none" | "full" | "equal";
  /** The longest pause a `Retry-After` may ask for, in ms (default `maxMs`). */
  maxRetryAfterMs?: number;
}

/**
 * Resolves after `ms`, or as soon as `signal` aborts (at once when it already has). Never
 * rejects; its timer never keeps the process alive.
 *
 * @example
 * ```ts
 * await abortableSleep(delay, this.#stop.signal);
 * if (!this.#receiving) return;
 * ```
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    timer.unref();
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * A `Retry-After` value in ms: a number of seconds (`"120"`, `1.5`) or an HTTP date (the time
 * until it, at least 0); `null` when there is none or it cannot be read.
 *
 * @example
 * ```ts
 * parseRetryAfter("2"); // 2000
 * parseRetryAfter(response.headers.get("retry-after")); // null when absent
 * ```
 */
export function parseRetryAfter(value: string | number | null | undefined, now: number = Date.now()): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value * 1000 : null;
  const text = value.trim();
  if (text === "") return null;
  if (/^\d+(\.\d+)?$/u.test(text)) return Number.parseFloat(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Growing pauses: `next()` is `initialMs`, then `initialMs × factor`, … at most `maxMs`
 * (jittered when asked); `reset()` starts again after a success.
 *
 * @example
 * ```ts
 * const backoff = new Backoff({ initialMs: 1_000, maxMs: 60_000 });
 * while (receiving) {
 *   try { await poll(); backoff.reset(); }
 *   catch { await backoff.sleep(stop.signal); }
 * }
 * ```
 */
export class Backoff {
  readonly #options: Required<BackoffOptions>;
  #attempts = 0;

  constructor(options: BackoffOptions) {
    this.#options = {
      factor: 2,
      jitter: "none",
      maxRetryAfterMs: options.maxMs,
      ...options,
    };
  }

  /** How many pauses were taken since the start or the last {@link reset}. */
  get attempts(): number {
    return this.#attempts;
  }

  /**
   * The next pause in ms (and counts it): `retryAfter` (seconds, or an HTTP date, see
   * {@link parseRetryAfter}) wins when given and readable, capped at `maxRetryAfterMs`.
   */
  next(retryAfter?: string | number | null): number {
    const { initialMs, maxMs, factor, jitter, maxRetryAfterMs } = this.#options;
    const exponent = this.#attempts;
    this.#attempts += 1;
    const asked = parseRetryAfter(retryAfter);
    if (asked !== null) return Math.min(asked, maxRetryAfterMs);
    const grown = Math.min(maxMs, initialMs * factor ** Math.min(exponent, 64));
    if (jitter === "full") return Math.floor(Math.random() * grown);
    if (jitter === "equal") return Math.floor(grown / 2 + Math.random() * (grown / 2));
    return grown;
  }

  /** Starts again from `initialMs`. */
  reset(): void {
    this.#attempts = 0;
  }

  /** Pauses for {@link next}, cut short when `signal` aborts; resolves with the pause it took (in ms). */
  async sleep(signal?: AbortSignal, retryAfter?: string | number | null): Promise<number> {
    const ms = this.next(retryAfter);
    await abortableSleep(ms, signal);
    return ms;
  }
}

/** Options of {@link retry}. */
export interface RetryOptions {
  /** How many tries in all (the first one included; at least 1). */
  attempts: number;
  /** Whether a failure is worth another try (else it is thrown at once). */
  isRetryable(error: unknown): boolean;
  /** The pauses between tries. */
  backoff: BackoffOptions;
  /** The platform's `Retry-After` for a failure (seconds or an HTTP date), when it gave one. */
  retryAfter?(error: unknown): string | number | null | undefined;
  /** Stops the retries: a pause ends at once and the last failure is thrown. */
  signal?: AbortSignal;
  /** Told before each pause (for a log line). */
  onRetry?(info: { attempt: number; delayMs: number; error: unknown }): void;
}

/**
 * Calls `fn` until it resolves, a failure is not retryable, `attempts` tries were made or
 * `signal` aborted; then throws the last failure. `fn` gets the try's number (1, 2, …).
 *
 * @example
 * ```ts
 * const sent = await retry(() => api.send(text), {
 *   attempts: 6,
 *   isRetryable: (e) => e instanceof ApiError && (e.status === 429 || e.status >= 500),
 *   retryAfter: (e) => (e as ApiError).retryAfter,
 *   backoff: { initialMs: 1_000, maxMs: 60_000 },
 * });
 * ```
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const backoff = new Backoff(options.backoff);
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt >= options.attempts || options.signal?.aborted || !options.isRetryable(error)) throw error;
      const delayMs = backoff.next(options.retryAfter?.(error));
      options.onRetry?.({ attempt, delayMs, error });
      await abortableSleep(delayMs, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}
