/**
 * The pause of an adapter's reconnect and back-off loops ({@link abortableSleep}), cut short
 * when the adapter stops receiving, so a stop never waits out a back-off.
 *
 * @module
 */

/**
 * Resolves after `ms`, or as soon as `signal` aborts (at once when it already has). Never
 * rejects.
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
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
