/**
 * De-duplication of platform events inside one adapter connection: a platform that
 * redelivers after a reconnect (Discord RESUME replays, Telegram getUpdates offsets that
 * were not yet confirmed, Slack retries with `x-slack-retry-num`) must not produce a
 * second turn. The gateway also drops a message id it has already taken for a session
 * (in memory, seeded from the transcript after a restart) and its durable queue refuses a
 * queued id twice; this set stops a repeat at the door, before any store work.
 *
 * @module
 */

/**
 * A bounded set of recently seen ids (oldest forgotten first).
 *
 * @example
 * ```ts
 * const seen = new SeenMessageIds(5000);
 * if (!seen.add(`${chatId}:${messageId}`)) return; // a repeat: ignore it
 * ```
 */
export class SeenMessageIds {
  readonly #max: number;
  readonly #ids = new Set<string>();

  /** @param max how many ids to remember (default 10,000). */
  constructor(max = 10_000) {
    this.#max = Math.max(1, max);
  }

  /** Records `id`; returns `false` when it was already there (a repeat). */
  add(id: string): boolean {
    if (this.#ids.has(id)) return false;
    this.#ids.add(id);
    if (this.#ids.size > this.#max) this.#ids.delete(this.#ids.values().next().value!);
    return true;
  }

  /** Whether `id` was seen. */
  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /** Forgets `id` (e.g. when handing it to the gateway failed, so a redelivery is taken). */
  delete(id: string): void {
    this.#ids.delete(id);
  }

  get size(): number {
    return this.#ids.size;
  }
}
