/**
 * A least-recently-used cache of live agents, keyed by session key, with an idle
 * time-to-live. Agents in the middle of a turn are never evicted.
 *
 * @module
 */
import { ConflictError, InvalidInputError, NotFoundError } from "../store/index.js";
import { systemClock, type Clock } from "./clock.js";

/** Options of {@link AgentCache}. */
export interface AgentCacheOptions<A> {
  /** How many agents to keep before evicting the least recently used idle one (default 128). */
  maxSize?: number;
  /** Evict (on {@link AgentCache.sweep}) agents unused for longer than this (default 3600). */
  idleTtlSeconds?: number;
  /** The time source (default {@link systemClock}). */
  clock?: Clock;
  /**
   * Called once for each agent that leaves the cache. Without it, the agent's own
   * `dispose()` method is called when it has one.
   */
  dispose?: (agent: A, key: string) => void | Promise<void>;
  /**
   * Called when disposing fails (throws or rejects). Default: a process warning.
   * The cache itself is unaffected.
   */
  onDisposeError?: (error: unknown, key: string) => void;
}

interface Entry<A> {
  agent: A;
  lastUsedAt: number;
  turns: number;
}

function hasDispose(value: unknown): value is { dispose(): unknown } {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { dispose?: unknown }).dispose === "function";
}

function defaultDisposeError(error: unknown, key: string): void {
  const detail = error instanceof Error ? error.message : String(error);
  process.emitWarning(`AgentCache: disposing the agent of ${key} failed: ${detail}`, "ThreadlineWarning");
}

/**
 * LRU cache of agents by session key, with an idle TTL and turn tracking.
 *
 * - `get` marks an agent recently used and restarts its idle time.
 * - Overflow beyond `maxSize` evicts the least recently used agent not mid-turn;
 *   when every agent is mid-turn the cache grows past `maxSize` and shrinks again
 *   as turns end.
 * - `sweep()` evicts agents idle for longer than `idleTtlSeconds` (never one mid-turn).
 * - Every agent that leaves the cache is disposed exactly once.
 *
 * @example
 * ```ts
 * const cache = new AgentCache<Agent>({ maxSize: 32, idleTtlSeconds: 1800 });
 * let agent = cache.get(key);
 * if (!agent) cache.set(key, (agent = createAgent()));
 * cache.beginTurn(key);
 * try {
 *   await agent.run(message);
 * } finally {
 *   cache.endTurn(key);
 * }
 * setInterval(() => cache.sweep(), 60_000);
 * ```
 */
export class AgentCache<A> {
  readonly #entries = new Map<string, Entry<A>>();
  readonly #maxSize: number;
  readonly #idleTtlSeconds: number;
  readonly #clock: Clock;
  readonly #dispose: ((agent: A, key: string) => void | Promise<void>) | undefined;
  readonly #onDisposeError: (error: unknown, key: string) => void;
  readonly #pending = new Set<Promise<void>>();

  constructor({ maxSize = 128, idleTtlSeconds = 3600, clock = systemClock, dispose, onDisposeError = defaultDisposeError }: AgentCacheOptions<A> = {}) {
    if (!Number.isInteger(maxSize) || maxSize < 1) {
      throw new InvalidInputError(`AgentCache: maxSize must be a whole number of at least 1 (got ${maxSize}).`, {
        field: "maxSize",
      });
    }
    if (typeof idleTtlSeconds !== "number" || Number.isNaN(idleTtlSeconds) || idleTtlSeconds <= 0) {
      throw new InvalidInputError(
        `AgentCache: idleTtlSeconds must be a number of seconds greater than 0, or Infinity to disable the TTL (got ${idleTtlSeconds}).`,
        { field: "idleTtlSeconds" },
      );
    }
    this.#maxSize = maxSize;
    this.#idleTtlSeconds = idleTtlSeconds;
    this.#clock = clock;
    this.#dispose = dispose;
    this.#onDisposeError = onDisposeError;
  }

  /** How many agents the cache holds (may exceed `maxSize` while agents are mid-turn). */
  get size(): number {
    return this.#entries.size;
  }

  /** The agent of `key` (marking it most recently used and restarting its idle time), or `undefined`. */
  get(key: string): A | undefined {
    const entry = this.#touch(key);
    return entry?.agent;
  }

  /** Whether the cache holds an agent for `key` (does not count as a use). */
  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** Whether the agent of `key` is mid-turn. */
  isBusy(key: string): boolean {
    return (this.#entries.get(key)?.turns ?? 0) > 0;
  }

  /**
   * Stores `agent` under `key` as the most recently used, then evicts overflow.
   * Replacing a different agent disposes the old one.
   *
   * @throws {ConflictError} when replacing a different agent that is mid-turn.
   */
  set(key: string, agent: A): this {
    const existing = this.#entries.get(key);
    if (existing !== undefined && existing.agent !== agent) {
      if (existing.turns > 0) {
        throw new ConflictError(`AgentCache: the agent of ${key} is mid-turn; call endTurn() before replacing it, or release() it first.`);
      }
      this.#entries.delete(key);
      this.#disposeAgent(existing.agent, key);
    }
    this.#entries.delete(key);
    this.#entries.set(key, { agent, lastUsedAt: this.#clock.now(), turns: existing?.agent === agent ? existing.turns : 0 });
    this.#evictOverflow(key);
    return this;
  }

  /**
   * Marks the agent of `key` as mid-turn (turns nest: each needs its own
   * {@link AgentCache.endTurn}). Counts as a use.
   *
   * @throws {NotFoundError} when no agent is cached for `key`.
   */
  beginTurn(key: string): void {
    const entry = this.#touch(key);
    if (entry === undefined) {
      throw new NotFoundError(`AgentCache: no agent cached for ${key}; set() one before beginTurn().`);
    }
    entry.turns += 1;
  }

  /**
   * Ends one turn of the agent of `key`, marks it most recently used (restarting
   * its idle time) and evicts overflow that was held back by busy agents, other
   * agents first (least recently used first). Returns `false` when there was no
   * turn to end (unknown key, released agent, or no turn in progress).
   */
  endTurn(key: string): boolean {
    const current = this.#entries.get(key);
    if (current === undefined || current.turns === 0) return false;
    const entry = this.#touch(key) ?? current;
    entry.turns -= 1;
    this.#evictOverflow(null);
    return true;
  }

  /** Removes and disposes the agent of `key` (even mid-turn). Returns whether there was one. */
  release(key: string): boolean {
    const entry = this.#entries.get(key);
    if (entry === undefined) return false;
    this.#entries.delete(key);
    this.#disposeAgent(entry.agent, key);
    return true;
  }

  /** Evicts every agent not mid-turn that has been idle longer than `idleTtlSeconds`. Returns how many. */
  sweep(): number {
    const now = this.#clock.now();
    let evicted = 0;
    for (const [key, entry] of [...this.#entries]) {
      if (entry.turns === 0 && now - entry.lastUsedAt > this.#idleTtlSeconds) {
        this.#entries.delete(key);
        this.#disposeAgent(entry.agent, key);
        evicted += 1;
      }
    }
    return evicted;
  }

  /** Removes and disposes every agent, mid-turn or not. */
  clear(): void {
    const entries = [...this.#entries];
    this.#entries.clear();
    for (const [key, entry] of entries) this.#disposeAgent(entry.agent, key);
  }

  /** Resolves once every disposal started so far has settled (for graceful shutdown). */
  async waitForDisposals(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  #touch(key: string): Entry<A> | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    entry.lastUsedAt = this.#clock.now();
    return entry;
  }

  #evictOverflow(keep: string | null): void {
    if (this.#entries.size <= this.#maxSize) return;
    for (const [key, entry] of [...this.#entries]) {
      if (this.#entries.size <= this.#maxSize) return;
      if (entry.turns > 0 || key === keep) continue;
      this.#entries.delete(key);
      this.#disposeAgent(entry.agent, key);
    }
  }

  #disposeAgent(agent: A, key: string): void {
    let result: unknown;
    try {
      if (this.#dispose !== undefined) result = this.#dispose(agent, key);
      else if (hasDispose(agent)) result = agent.dispose();
    } catch (error) {
      this.#onDisposeError(error, key);
      return;
    }
    if (result instanceof Promise) {
      const settled: Promise<void> = result.then(
        () => undefined,
        (error: unknown) => this.#onDisposeError(error, key),
      );
      const tracked = settled.finally(() => this.#pending.delete(tracked));
      this.#pending.add(tracked);
    }
  }
}
