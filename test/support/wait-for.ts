/**
 * The one place tests wait: for a condition ({@link waitFor}, polling with a deadline) or for
 * a promise with a deadline ({@link withDeadline}). No test sleeps a fixed time and hopes
 * something happened meanwhile; `test/support/no-fixed-sleeps.test.ts` keeps it that way.
 *
 * A "nothing happened" check needs a positive barrier instead of a pause: make something
 * happen later whose effect is ordered after the thing that must not happen (a second
 * message through the same chat, whose reply comes after anything the first one caused),
 * wait for that, then assert.
 *
 * @module
 */

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** What is awaited, for the error: "the reply to the second message". */
  what: string;
  /** How long to wait at most (default 20 s). */
  timeoutMs?: number;
  /** Pause between two probes (default 25 ms). */
  intervalMs?: number;
  /** Extra diagnostics for the error (what was seen instead). */
  describe?: () => string;
}

/**
 * Polls `probe` until it returns something other than `undefined`, `null` or `false`, and
 * resolves with that value. A probe that throws counts as "not yet" (its last error is
 * quoted if the deadline passes). Throws after `timeoutMs` (default 20 s), naming `what`
 * and, when given, the diagnostics of `describe()`.
 *
 * @example
 * const reply = await waitFor(() => fake.sent.find((m) => m.text === "Echo: hi"), { what: "the echo" });
 */
export async function waitFor<T>(probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, options: WaitForOptions): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  const interval = options.intervalMs ?? 25;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      lastError = null;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const extra = options.describe ? `\n${options.describe()}` : "";
      const cause = lastError === null ? "" : ` (last error: ${String(lastError)})`;
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${options.what}${cause}${extra}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** The error of {@link withDeadline} when the deadline passes first. */
export class DeadlineError extends Error {
  override readonly name = "DeadlineError";
}

/**
 * Resolves (or rejects) as `work` does, unless `timeoutMs` passes first: then rejects with
 * a {@link DeadlineError} naming `what` (and the diagnostics of `describe()`). The timer is
 * cleared as soon as `work` settles.
 *
 * @example
 * const status = await withDeadline(child.exited, { timeoutMs: 5_000, what: "the child to exit" });
 */
export async function withDeadline<T>(work: Promise<T>, options: { timeoutMs: number; what: string; describe?: () => string }): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const extra = options.describe ? `\n${options.describe()}` : "";
      reject(new DeadlineError(`Timed out after ${options.timeoutMs} ms waiting for ${options.what}${extra}`));
    }, options.timeoutMs);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
