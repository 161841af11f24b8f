/**
 * A per-process memo of what an endpoint refused for a model ({@link RefusalMemo}): the base of
 * {@link ToolSupport} (tools) and {@link VisionSupport} (images), so only the first request after
 * a start pays for a refusal.
 *
 * @module
 */

/** Options of a {@link RefusalMemo}. */
export interface RefusalMemoOptions {
  /** Called once per endpoint and model when the provider first refuses. */
  onRefused?: (info: { baseUrl: string; model: string; providerMessage: string }) => void;
}

/** Remembers which endpoint and model refused something, for the life of the process. */
export class RefusalMemo {
  readonly #refused = new Map<string, string>();
  readonly #onRefused: RefusalMemoOptions["onRefused"];

  constructor(options: RefusalMemoOptions = {}) {
    this.#onRefused = options.onRefused;
  }

  /** Whether this endpoint refused it for this model. */
  refused(baseUrl: string, model: string): boolean {
    return this.#refused.has(keyOf(baseUrl, model));
  }

  /** Records a refusal (the first one per endpoint and model is reported to `onRefused`). */
  markRefused(baseUrl: string, model: string, providerMessage: string): void {
    const key = keyOf(baseUrl, model);
    if (this.#refused.has(key)) return;
    this.#refused.set(key, providerMessage);
    try {
      this.#onRefused?.({ baseUrl, model, providerMessage });
    } catch {
      // A listener's failure must not fail the turn.
    }
  }
}

function keyOf(baseUrl: string, model: string): string {
  return `${baseUrl}\u0000${model}`;
}
