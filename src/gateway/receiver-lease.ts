/**
 * The store-backed {@link ReceiverLease}: of several gateway replicas sharing one database,
 * one receives for a platform's credentials at a time (Telegram polling, the Discord gateway,
 * Slack Socket Mode, a Matrix sync loop, Signal's receive), and another takes over within the
 * lease time when that one dies. The lease is the store's session-key lease on the key
 * `receiver:<platform>`, held under the runner's lease holder id with the gateway's lease TTL.
 *
 * The holder renews it every third of the TTL; a renewal refused (another holder took it, or it
 * was released) or failing until the lease has run out means it is lost: the receiver is stopped
 * and the replica goes back to waiting. A waiting replica looks again when the holder's lease
 * runs out (at most a third of the TTL later), so it takes over within the TTL of the last
 * renewal of a replica that died.
 *
 * @module
 */
import type { LeaseStore } from "../store/index.js";
import type { ReceiverHandlers, ReceiverLease } from "./adapter.js";
import { systemClock, type Clock } from "./clock.js";
import { noopLogger, type GatewayLogger } from "./gateway-logger.js";
import { releaseStaleLease, type StaleHolderTest } from "./stale-leases.js";

/** Options of a {@link StoreReceiverLease}. */
export interface StoreReceiverLeaseOptions {
  /** The runner's lease holder id (unique to this process, never reused after a restart). */
  holder: string;
  /** Holders that are dead earlier processes of this replica: their lease is taken over at once (default: none). */
  stale?: StaleHolderTest;
  /** How long a lease lasts without renewal, in seconds (the gateway's `leaseTtlSeconds`): the longest a takeover waits. */
  ttlSeconds: number;
  /** Time source of the lease expiries (default: the system clock). */
  clock?: Clock;
  logger?: GatewayLogger;
}

/** The lease key of receiving for a platform. */
export function receiverLeaseKey(platform: string): string {
  return `receiver:${platform}`;
}

/**
 * The lease on receiving for one platform, in the store.
 *
 * @example
 * const lease = new StoreReceiverLease(db, "discord", { holder: "replica-a-1234", ttlSeconds: 30 });
 * const release = lease.hold({ start: () => client.login(token), stop: () => client.destroy() });
 * // … on disconnect:
 * await release();
 */
export class StoreReceiverLease implements ReceiverLease {
  readonly #store: LeaseStore;
  readonly #platform: string;
  readonly #key: string;
  readonly #holder: string;
  readonly #stale: StaleHolderTest;
  readonly #ttl: number;
  readonly #clock: Clock;
  readonly #log: GatewayLogger;

  constructor(store: LeaseStore, platform: string, options: StoreReceiverLeaseOptions) {
    this.#store = store;
    this.#platform = platform;
    this.#key = receiverLeaseKey(platform);
    this.#holder = options.holder;
    this.#stale = options.stale ?? (() => false);
    this.#ttl = options.ttlSeconds;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger ?? noopLogger;
  }

  /** A third of the TTL, in ms: how often the holder renews and a waiting replica looks at most. */
  get #every(): number {
    return Math.max(50, (this.#ttl * 1000) / 3);
  }

  hold(handlers: ReceiverHandlers): () => Promise<void> {
    const ended = new AbortController();
    const running = this.#run(handlers, ended.signal).catch((error: unknown) => {
      this.#log.error({ err: error, platform: this.#platform }, `${this.#platform}: the receiver lease loop failed; this replica no longer receives`);
    });
    let released: Promise<void> | null = null;
    return () => {
      released ??= (async () => {
        ended.abort();
        await running;
      })();
      return released;
    };
  }

  /** Waits for the lease, receives while it is held, and waits again after losing it, until `ended`. */
  async #run(handlers: ReceiverHandlers, ended: AbortSignal): Promise<void> {
    while (!ended.aborted) {
      const token = await this.#acquire(ended);
      if (token === null) return;
      // Renewal runs beside the start (a login may take longer than a lease lasts).
      const held = new AbortController();
      const stopHeld = (): void => held.abort();
      ended.addEventListener("abort", stopHeld);
      const kept = this.#keepRenewed(token, held.signal);
      let started = false;
      try {
        await handlers.start();
        started = true;
        this.#log.info({ platform: this.#platform }, `${this.#platform}: this replica receives (it holds the receiver lease)`);
      } catch (error) {
        this.#log.warn(
          { err: error, platform: this.#platform },
          `${this.#platform}: starting to receive failed; the receiver lease is given up and taken again later`,
        );
        held.abort();
      }
      const outcome = await kept;
      ended.removeEventListener("abort", stopHeld);
      if (started) await this.#stop(handlers, outcome === "lost" ? "the receiver lease was lost" : "released");
      if (outcome !== "lost") await this.#release(token);
      if (!started && !ended.aborted) await sleep(this.#every, ended);
    }
  }

  /** Tries for the lease until it is granted (its token) or `ended` (`null`). */
  async #acquire(ended: AbortSignal): Promise<number | null> {
    let waiting = false;
    while (!ended.aborted) {
      const now = this.#clock.now();
      let pause = this.#every;
      try {
        let lease = await this.#store.acquireLease(this.#key, this.#holder, { ttlSeconds: this.#ttl, now });
        // A dead earlier process of this replica (killed, then restarted) holds it: take it over now.
        if (lease === null && (await releaseStaleLease(this.#store, this.#key, this.#stale)))
          lease = await this.#store.acquireLease(this.#key, this.#holder, { ttlSeconds: this.#ttl, now: this.#clock.now() });
        if (lease !== null) {
          if (ended.aborted) {
            await this.#release(lease.token);
            return null;
          }
          return lease.token;
        }
        if (!waiting) {
          waiting = true;
          this.#log.info({ platform: this.#platform }, `${this.#platform}: another replica receives; this one stands by`);
        }
        // Look again when the holder's lease runs out, unless it renews first (a third of the TTL at most).
        const current = await this.#store.getLease(this.#key);
        if (current !== null) pause = Math.min(pause, Math.max(0, (current.expiresAt - this.#clock.now()) * 1000) + 10);
      } catch (error) {
        this.#log.warn({ err: error, platform: this.#platform }, `${this.#platform}: taking the receiver lease failed; trying again`);
      }
      await sleep(pause, ended);
    }
    return null;
  }

  /**
   * Renews the lease every third of the TTL until `held` aborts (`released`) or the lease is
   * lost (`lost`): a renewal refused, or renewals failing until the lease has run out.
   */
  async #keepRenewed(token: number, held: AbortSignal): Promise<"lost" | "released"> {
    let expiresAt = this.#clock.now() + this.#ttl;
    while (true) {
      await sleep(Math.min(this.#every, Math.max(0, (expiresAt - this.#clock.now()) * 1000)), held);
      if (held.aborted) return "released";
      try {
        const renewed = await this.#store.renewLease(this.#key, this.#holder, token, { ttlSeconds: this.#ttl, now: this.#clock.now() });
        if (renewed === null) {
          this.#log.warn({ platform: this.#platform }, `${this.#platform}: another replica took the receiver lease; this one stops receiving`);
          return "lost";
        }
        expiresAt = renewed.expiresAt;
      } catch (error) {
        if (this.#clock.now() >= expiresAt) {
          this.#log.warn(
            { err: error, platform: this.#platform },
            `${this.#platform}: the receiver lease ran out while it could not be renewed; this replica stops receiving`,
          );
          return "lost";
        }
        this.#log.warn({ err: error, platform: this.#platform }, `${this.#platform}: renewing the receiver lease failed; trying again`);
      }
    }
  }

  async #stop(handlers: ReceiverHandlers, why: string): Promise<void> {
    try {
      await handlers.stop();
      this.#log.info({ platform: this.#platform }, `${this.#platform}: this replica stopped receiving (${why})`);
    } catch (error) {
      this.#log.warn({ err: error, platform: this.#platform }, `${this.#platform}: stopping the receiver failed`);
    }
  }

  async #release(token: number): Promise<void> {
    await this.#store.releaseLease(this.#key, this.#holder, token).catch((error: unknown) => {
      this.#log.warn({ err: error, platform: this.#platform }, `${this.#platform}: releasing the receiver lease failed (it runs out by itself)`);
    });
  }
}

/**
 * The `AdapterEvents.receiverLease` of a runner with leases: one {@link StoreReceiverLease}
 * per platform name.
 */
export function storeReceiverLeases(store: LeaseStore, options: StoreReceiverLeaseOptions): (platform: string) => ReceiverLease {
  return (platform) => new StoreReceiverLease(store, platform, options);
}

/** Resolves after `ms`, or at once when `signal` aborts. Never rejects. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
