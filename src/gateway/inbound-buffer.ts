/**
 * Holds inbound messages that arrive while a gateway restores its sessions after a
 * start, and hands them on in arrival order once the restore is done.
 *
 * @module
 */

/**
 * A hold-then-release buffer.
 *
 * @example
 * const buffer = new InboundBuffer<Msg>();
 * adapter.on("message", (m) => buffer.push(m, handle)); // held until release
 * await restoreSessions();
 * await buffer.release(handle); // held messages first, in order; later ones go straight through
 */
export class InboundBuffer<T> {
  #held: T[] = [];
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
  async push(message: T, deliver: (message: T) => unknown): Promise<void> {
    if (this.#released) {
      await deliver(message);
      return;
    }
    this.#held.push(message);
  }

  /**
   * Delivers the held messages one after the other, in arrival order (including any
   * that arrive while this runs), then lets later messages through. Idempotent.
   */
  release(deliver: (message: T) => unknown): Promise<void> {
    this.#releasing ??= (async () => {
      while (this.#held.length > 0) await deliver(this.#held.shift()!);
      this.#released = true;
    })();
    return this.#releasing;
  }
}
