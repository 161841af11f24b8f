/**
 * Correcting token estimates with what the provider reports: after each model call the
 * provider's `usage.prompt_tokens` is compared with the count of the request that was
 * sent, and later estimates for that session are scaled by the observed ratio. Pure
 * bookkeeping, bounded in size.
 *
 * @module
 */

/** Sessions whose correction is remembered (least recently used first out). */
export const CALIBRATED_SESSIONS = 1000;
/** The correction never shrinks an estimate, and never scales it by more than this. */
export const MAX_CORRECTION = 4;

/** Per-session correction factors for token estimates. */
export class TokenCalibration {
  readonly #factors = new Map<string, number>();

  /**
   * Records one model call: `counted` tokens were estimated for the request, the provider
   * reported `reported`. Ignored when either is not a positive number.
   */
  record(sessionId: string, counted: number, reported: number): void {
    if (!(counted > 0) || !(reported > 0) || !Number.isFinite(counted) || !Number.isFinite(reported)) return;
    const factor = Math.min(MAX_CORRECTION, Math.max(1, reported / counted));
    this.#factors.delete(sessionId);
    this.#factors.set(sessionId, factor);
    if (this.#factors.size > CALIBRATED_SESSIONS) this.#factors.delete(this.#factors.keys().next().value!);
  }

  /** The factor to scale a session's estimates by (1 when nothing was reported yet). */
  factor(sessionId: string): number {
    return this.#factors.get(sessionId) ?? 1;
  }

  /** `tokens` scaled by the session's factor, rounded up. */
  correct(sessionId: string, tokens: number): number {
    return Math.ceil(tokens * this.factor(sessionId));
  }
}
