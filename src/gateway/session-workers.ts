/**
 * The session workers of a `GatewayRunner`: one worker per session key runs its turns one
 * after the other (the first message, then the queue head, promoted turn by turn), while
 * sessions run concurrently. With several replicas on one database a worker holds the
 * key's lease while it runs, renews it, and fences every transcript write with its token;
 * a key whose lease holder died is resumed by the sweep.
 *
 * @module
 */
import type { InboundClaim, Lease } from "../store/index.js";
import type { InboundMessage } from "./adapter.js";
import { serves, sourceOfEntry, type RunnerContext, type Running } from "./runner-context.js";
import type { SessionEntry } from "./session-entry.js";
import type { SessionSource } from "./session-source.js";
import { releaseStaleLease } from "./stale-leases.js";
import type { TurnRunner } from "./turn-runner.js";

/** What a new worker does first, before it looks at the key's queue. */
export type FirstWork =
  | { messages: InboundMessage[]; durable: () => void; failed: (e: unknown) => void; claims?: InboundClaim[] | undefined }
  | { resume: SessionEntry }
  | { rerun: SessionEntry; ids: string[]; model?: string | undefined }
  | null;

/** The session workers of one gateway, and the session leases they hold. */
export class SessionWorkers {
  /** The keys with a worker in this process, and what each is doing. */
  readonly running = new Map<string, Running>();
  readonly #ctx: RunnerContext;
  readonly #turns: TurnRunner;
  /** The tail of each key's lease acquires and releases in this process (see #leaseOp). */
  readonly #leaseOps = new Map<string, Promise<void>>();

  constructor(context: RunnerContext, turns: TurnRunner) {
    this.#ctx = context;
    this.#turns = turns;
  }

  /** Whether a turn runs for the key in this process (a worker between turns does not count). */
  isBusy(key: string): boolean {
    return this.running.get(key)?.phase === "turn";
  }

  /** Aborts the running turn of a key (`stop`: the turn ends; `shutdown`: it is left for resume). Resolves when it has stopped. */
  async interrupt(key: string, reason: "stop" | "shutdown"): Promise<boolean> {
    const state = this.running.get(key);
    if (state === undefined) return false;
    state.abortReason = reason;
    state.controller?.abort();
    await state.done;
    return true;
  }

  /** Resolves once no worker runs for the key in this process (its running and queued turns are done). */
  async whenIdle(key: string): Promise<void> {
    for (let state = this.running.get(key); state !== undefined; state = this.running.get(key)) await state.done;
  }

  /** Starts a worker for a key with queued messages when none runs here and the lease (if any) is free. */
  async kick(key: string, source: SessionSource): Promise<void> {
    if (this.running.has(key) || !this.#ctx.isAccepting()) return;
    const lease = await this.acquire(key);
    if (lease === false) return;
    if (this.running.has(key)) {
      if (lease !== null) await this.dropUnused(key, lease);
      return;
    }
    this.startWorker(key, source, lease, null);
  }

  /**
   * Runs queued messages of every key (after a restart, or a sweep for keys whose lease
   * holder died). Keys of platforms without an adapter here (a terminal session's queue)
   * are left queued: their replies could not be delivered.
   */
  async replayQueues(): Promise<number> {
    let started = 0;
    for (const key of await this.#ctx.queue.pendingKeys()) {
      const items = await this.#ctx.db.listQueue(key);
      const first = items[0]?.payloads[0] as InboundMessage | undefined;
      if (first?.source === undefined) continue;
      if (!serves(this.#ctx, first.source.platform)) continue;
      if (!this.running.has(key)) started += 1;
      await this.kick(key, first.source);
    }
    return started;
  }

  /**
   * With leases: resumes turns another replica left unfinished (it died mid-turn; its
   * lease expired), then runs queued messages whose lease is free. `serve` calls this every
   * lease TTL. Returns how many sessions it started.
   */
  async sweep(): Promise<number> {
    let started = 0;
    if (this.#ctx.leases !== null && this.#ctx.isAccepting()) {
      for await (const route of this.#ctx.store.routes({ turnInProgress: true, suspended: false })) {
        if (this.running.has(route.key)) continue;
        const lease = await this.acquire(route.key);
        if (lease === false) continue;
        if (this.running.has(route.key)) {
          if (lease !== null) await this.dropUnused(route.key, lease);
          continue;
        }
        const entry = await this.#ctx.store.getEntry(route.key);
        if (entry === null || entry.turnStartedAt === null) {
          if (lease !== null) await this.dropUnused(route.key, lease);
          continue;
        }
        const source = sourceOfEntry(entry);
        if (!serves(this.#ctx, source.platform)) {
          if (lease !== null) await this.dropUnused(route.key, lease);
          continue;
        }
        this.#ctx.log.info({ key: route.key }, "resuming a turn another replica left unfinished");
        this.startWorker(route.key, source, lease, { resume: entry });
        started += 1;
      }
    }
    return started + (await this.replayQueues());
  }

  /**
   * Resumes interrupted sessions (from `GatewayRecovery.startup().autoResume`), only those
   * of platforms this gateway has an adapter for. Returns how many it started.
   */
  async resume(entries: SessionEntry[]): Promise<number> {
    let started = 0;
    for (const entry of entries) {
      if (this.running.has(entry.key)) continue;
      const source = sourceOfEntry(entry);
      if (!serves(this.#ctx, source.platform)) {
        this.#ctx.log.info({ key: entry.key, platform: source.platform }, "not resuming: this gateway has no adapter for the session's platform");
        continue;
      }
      const lease = await this.acquire(entry.key);
      if (lease === false) continue;
      this.startWorker(entry.key, source, lease, { resume: entry });
      started += 1;
    }
    return started;
  }

  /** Starts the worker of a key: its first work, then the key's queue, turn by turn, while the gateway accepts messages. */
  startWorker(key: string, source: SessionSource, lease: Lease | null, first: FirstWork): void {
    const { db, queue, log, metrics } = this.#ctx;
    const leases = this.#ctx.leases;
    const state: Running = { phase: "between", more: false, controller: null, abortReason: null, lease, renewTimer: null, done: Promise.resolve(), source };
    this.running.set(key, state);
    if (lease !== null && leases !== null) {
      const every = Math.max(1, (leases.ttlSeconds * 1000) / 3);
      state.renewTimer = setInterval(() => void this.#renew(key, state), every);
      state.renewTimer.unref();
    }
    state.done = (async () => {
      try {
        // A freshly acquired lease on a key whose turn is still marked as running: the replica
        // that held it died mid-turn. That turn is resumed first, so a message that reached this
        // replica before the sweep did never overtakes it.
        if (lease !== null && (first === null || "messages" in first)) await this.#resumeOrphanedTurn(key, state);
        if (first !== null && "messages" in first) {
          await this.#turns.turn(key, state, first.messages, { durable: first.durable, failed: first.failed, claims: first.claims });
        } else if (first !== null && "resume" in first) {
          await this.#turns.resumeTurn(key, state, first.resume);
        } else if (first !== null && "rerun" in first) {
          await this.#turns.rerunTurn(key, state, first.rerun, first.ids, source, first.model);
        }
        // An interrupted worker stops (`/stop`, `/new`, `/resume` decide what happens to the queue).
        while (this.#ctx.isAccepting() && state.abortReason === null) {
          state.more = false;
          const item = await queue.promote(key);
          if (item === null) {
            // A message queued while the claim ran sets `more`: look again. Deciding to stop
            // and leaving `running` happen in one synchronous step, so no queued message is
            // left without a worker (and no later message overtakes it).
            if (state.more) continue;
            break;
          }
          // Interrupted while claiming (`/new`, `/stop` between two turns): the claimed message's
          // turn never started. A stop drops it with the rest of the queue; a shutdown leaves it
          // claimed, to be replayed after the restart.
          if (state.abortReason !== null) {
            if (state.abortReason === "stop") await queue.complete(key, item.id);
            break;
          }
          if (metrics.queueDepthChanged !== undefined) metrics.queueDepthChanged(key, await queue.depth(key));
          const messages = item.payloads as InboundMessage[];
          let completed = false;
          const complete = async (): Promise<void> => {
            if (!completed) {
              completed = true;
              await queue.complete(key, item.id);
            }
          };
          await this.#turns.turn(key, state, messages, { durable: () => void complete(), failed: () => {} });
          await complete();
        }
      } catch (error) {
        log.error({ err: error, key }, "session worker failed");
      } finally {
        if (state.renewTimer !== null) clearInterval(state.renewTimer);
        if (state.lease === null) this.running.delete(key);
        else {
          // The worker leaves `running` only once its release is through. This process holds
          // the key under one holder name, so acquiring it again meanwhile would get this very
          // lease (same token), which the release then drops: the next turn's fenced writes
          // would fail. A message that arrives meanwhile is queued, and run below.
          await this.#release(key, state.lease);
          this.running.delete(key);
          try {
            // A message another replica queued while this one held the lease must not wait.
            if (this.#ctx.isAccepting() && (await db.listQueue(key)).length > 0) await this.kick(key, source);
          } catch (error) {
            log.warn({ err: error, key }, "checking the queue after releasing the lease failed");
          }
        }
      }
    })();
  }

  /** Resumes the turn another holder of this key's lease left unfinished, if there is one (see {@link SessionWorkers.sweep}). */
  async #resumeOrphanedTurn(key: string, state: Running): Promise<void> {
    // The route alone tells whether a turn is marked (one read; the entry adds the session's).
    const route = await this.#ctx.db.getRoute(key);
    if (route === null || route.turnStartedAt === null || route.suspended) return;
    const entry = await this.#ctx.store.getEntry(key);
    if (entry === null || entry.turnStartedAt === null || entry.suspended) return;
    const source = sourceOfEntry(entry);
    if (!serves(this.#ctx, source.platform)) return;
    this.#ctx.log.info({ key }, "resuming a turn another replica left unfinished");
    try {
      await this.#turns.resumeTurn(key, state, entry);
    } catch (error) {
      // The turn stays marked; the next sweep tries again. The new message still runs.
      this.#ctx.log.error({ err: error, key }, "resuming a turn another replica left unfinished failed");
    }
  }

  /** The key's lease for a new worker: `null` without leases, `false` when another holder has it. */
  async acquire(key: string): Promise<Lease | null | false> {
    const leases = this.#ctx.leases;
    if (leases === null) return null;
    const take = (): Promise<Lease | null> =>
      this.#ctx.db.acquireLease(key, leases.holder, { ttlSeconds: leases.ttlSeconds, now: this.#ctx.store.clock.now() });
    const lease = await this.#leaseOp(key, async () => {
      const granted = await take();
      // A dead earlier process of this replica (killed, then restarted) holds it: take it over now.
      if (granted === null && (await releaseStaleLease(this.#ctx.db, key, leases.stale))) return take();
      return granted;
    });
    return lease ?? false;
  }

  /**
   * Runs this process's acquires and releases of one key one after the other. Every worker
   * here holds a key under the same holder name, so an acquire that overtook a release (or
   * a release that overtook an acquire) would hand out the token the other then drops.
   */
  #leaseOp<T>(key: string, op: () => Promise<T>): Promise<T> {
    const result = (this.#leaseOps.get(key) ?? Promise.resolve()).then(op);
    const tail = result.then(
      () => {},
      () => {},
    );
    this.#leaseOps.set(key, tail);
    void tail.then(() => {
      if (this.#leaseOps.get(key) === tail) this.#leaseOps.delete(key);
    });
    return result;
  }

  /**
   * Gives back a lease acquired for a worker that did not start (one already runs here).
   * That worker holds the same lease (same holder, same token): it is not released then.
   */
  async dropUnused(key: string, lease: Lease): Promise<void> {
    if (this.running.get(key)?.lease?.token === lease.token) return;
    await this.#release(key, lease);
  }

  async #renew(key: string, state: Running): Promise<void> {
    const leases = this.#ctx.leases;
    if (state.lease === null || leases === null) return;
    try {
      const renewed = await this.#ctx.db.renewLease(key, leases.holder, state.lease.token, {
        ttlSeconds: leases.ttlSeconds,
        now: this.#ctx.store.clock.now(),
      });
      if (renewed === null) {
        this.#ctx.log.warn({ key }, "lost the session lease; stopping the turn");
        state.abortReason ??= "shutdown";
        state.controller?.abort();
      } else {
        state.lease = renewed;
      }
    } catch (error) {
      this.#ctx.log.warn({ err: error, key }, "lease renewal failed");
    }
  }

  async #release(key: string, lease: Lease): Promise<void> {
    const leases = this.#ctx.leases;
    if (leases === null) return;
    await this.#leaseOp(key, () => this.#ctx.db.releaseLease(key, leases.holder, lease.token)).catch((error: unknown) => {
      this.#ctx.log.warn({ err: error, key }, "lease release failed");
    });
  }
}
