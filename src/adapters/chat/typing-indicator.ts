/**
 * A typing indicator that lasts as long as a turn: platforms show "typing…" for a few
 * seconds per call (Telegram 5 s, Discord 10 s, Slack until the next message), so it is
 * renewed on an interval until the reply is sent or the turn ends.
 *
 * @module
 */

/** Options of a {@link TypingIndicator}. */
export interface TypingIndicatorOptions {
  /** Sends one "typing" signal to a chat (errors are passed to `onError` and renewal goes on). */
  send: (chat: string) => Promise<unknown>;
  /** How often to renew, in ms (default 4,000: under Telegram's 5 s). */
  intervalMs?: number;
  /** Stop renewing after this long even if nobody called stop, in ms (default 10 minutes). */
  maxMs?: number;
  onError?: (error: unknown, chat: string) => void;
  /** Ends the indicator on the platform at once, where it has a call for that (errors go to `onError`); else it fades by itself. */
  end?: (chat: string) => Promise<unknown>;
}

/**
 * Keeps "typing…" showing in chats. `start(chat)` sends at once and renews every
 * `intervalMs`; `stop(chat)` ends it (call it when the reply is sent). Several starts of
 * one chat share one timer. Timers never keep the process alive.
 *
 * @example
 * ```ts
 * const typing = new TypingIndicator({ send: (chat) => api.sendChatAction(chat, "typing") });
 * typing.start("12345");  // when a message is accepted
 * typing.stop("12345");   // when the reply has been sent
 * ```
 */
export class TypingIndicator {
  readonly #send: TypingIndicatorOptions["send"];
  readonly #intervalMs: number;
  readonly #maxMs: number;
  readonly #onError: (error: unknown, chat: string) => void;
  readonly #end: TypingIndicatorOptions["end"];
  readonly #timers = new Map<string, { timer: NodeJS.Timeout; until: number }>();

  constructor(options: TypingIndicatorOptions) {
    this.#send = options.send;
    this.#intervalMs = options.intervalMs ?? 4_000;
    this.#maxMs = options.maxMs ?? 600_000;
    this.#onError = options.onError ?? (() => {});
    this.#end = options.end;
  }

  /** Chats currently showing the indicator. */
  get active(): string[] {
    return [...this.#timers.keys()];
  }

  /** Shows the indicator in `chat` now and keeps renewing it. */
  start(chat: string): void {
    const until = Date.now() + this.#maxMs;
    const existing = this.#timers.get(chat);
    if (existing !== undefined) {
      existing.until = until;
      return;
    }
    const timer = setInterval(() => {
      const state = this.#timers.get(chat);
      if (state === undefined || Date.now() > state.until) {
        this.stop(chat);
        return;
      }
      this.#fire(chat);
    }, this.#intervalMs);
    timer.unref();
    this.#timers.set(chat, { timer, until });
    this.#fire(chat);
  }

  /** Stops renewing the indicator of `chat` (ended with `end` when given, else it fades on the platform by itself). */
  stop(chat: string): void {
    const state = this.#timers.get(chat);
    if (state === undefined) return;
    clearInterval(state.timer);
    this.#timers.delete(chat);
    this.#end?.(chat).catch((error: unknown) => this.#onError(error, chat));
  }

  /** Stops every indicator. */
  stopAll(): void {
    for (const chat of [...this.#timers.keys()]) this.stop(chat);
  }

  #fire(chat: string): void {
    this.#send(chat).catch((error: unknown) => this.#onError(error, chat));
  }
}
