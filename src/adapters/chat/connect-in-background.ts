/**
 * A platform that does not answer must not hold the gateway's start: an adapter's `connect`
 * waits for its bring-up (log in, open the connection) at most a while, then lets it go on
 * in the background ({@link connectInBackground}). A bring-up that fails before then (a
 * refused token, a wrong mode) still fails `connect` at once.
 *
 * @module
 */

/** What {@link connectInBackground} does when the bring-up outlasts its time. */
export interface ConnectInBackgroundOptions {
  /** How long to wait for the bring-up, in ms. */
  timeoutMs: number;
  /** Called once when `timeoutMs` passes first (the adapter logs that it is still connecting). */
  onTimeout(): void;
  /** Called when the bring-up fails after `timeoutMs` passed (the adapter logs it; nothing is thrown). */
  onBackgroundFailure(error: unknown): void;
}

/**
 * Waits for `up` at most `timeoutMs`. Resolves when `up` does, or when the time passes first
 * (then `onTimeout` is called and `up` goes on in the background, a later failure going to
 * `onBackgroundFailure`); rejects when `up` fails in time. Its timer never keeps the process
 * alive.
 *
 * @example
 * ```ts
 * await connectInBackground(this.#bringUp(), {
 *   timeoutMs: this.#options.connectTimeoutMs ?? 20_000,
 *   onTimeout: () => this.#log.warn({ platform }, "telegram: the Bot API does not answer yet; still connecting in the background"),
 *   onBackgroundFailure: (error) => this.#log.error({ err: error, platform }, "telegram: connecting failed"),
 * });
 * ```
 */
export async function connectInBackground(up: Promise<void>, options: ConnectInBackgroundOptions): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = await Promise.race([
    up.then(() => "up" as const),
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
  if (waited === "timeout") {
    options.onTimeout();
    up.catch((error: unknown) => options.onBackgroundFailure(error));
  }
}
