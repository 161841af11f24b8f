/**
 * Holds inbound messages that arrive while a gateway restores its sessions after a
 * start, and hands them on in arrival order once the restore is done.
 *
 * @module
 */

interface Held<T> {
  message: T;
  deliver: (message: T) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * A hold-then-release buffer. `push` resolves with what `deliver` returned once the
 * message was delivered (at once after release; at release time before).
 *
 * @example
 * const buffer = new InboundBuffer<Msg>();
 * adapter.connect((m) => buffer.push(m, handle)); // held until release
 * await restoreSessions();
 * await buffer.release(); // held messages first, in order; later ones go straight through
 */
export class InboundBuffer<T> {
  #held: Held<T>[] = [];
  #released = false;
  #releasing: Promise<void> | null = null;

  /** Whether messages now pass straight through. */
  get released(): boolean {
    return this.#released;
  }

  /** How many messages are held. */
  get size(): number {
    return this.#held.length;
  }

  /** Holds a message, or (after release) hands it to `deliver` at once. */
  push<R>(message: T, deliver: (message: T) => R | Promise<R>): Promise<R> {
    if (this.#released) return Promise.resolve().then(() => deliver(message));
    return new Promise<R>((resolve, reject) => {
      this.#held.push({ message, deliver, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * Delivers the held messages one after the other, in arrival order (including any
   * that arrive while this runs), then lets later messages through. Idempotent.
   */
  release(): Promise<void> {
    this.#releasing ??= (async () => {
      while (this.#held.length > 0) {
        const held = this.#held.shift()!;
        try {
          held.resolve(await held.deliver(held.message));
        } catch (error) {
          held.reject(error);
        }
      }
      this.#released = true;
    })();
    return this.#releasing;
  }
}
