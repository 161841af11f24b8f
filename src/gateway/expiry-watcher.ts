/**
 * The expiry watcher: every few minutes, finalises sessions whose reset policy says
 * they have expired — once each — and, hourly, prunes old routing entries.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";
import { evaluateReset, resolveResetPolicy } from "./reset-policy.js";
import { toSessionEntry, type SessionEntry } from "./session-entry.js";
import { chatTypeOf, type SessionStore } from "./session-store.js";

/** A hook run once when a session expires (summarise it, flush memory, …). A throw is retried on later passes. */
export type SessionFinalizeHook = (entry: SessionEntry) => unknown;

/** Default pass interval (seconds). */
export const DEFAULT_EXPIRY_INTERVAL_SECONDS = 300;
/** Failed passes after which a session is finalised anyway. */
export const MAX_FINALIZE_FAILURES = 3;
const PRUNE_INTERVAL_SECONDS = 3600;

/** Options of an {@link ExpiryWatcher}. */
export interface ExpiryWatcherOptions {
  store: SessionStore;
  /** Seconds between passes (default 300). */
  intervalSeconds?: number;
  /** Run for every expiring session, in order. */
  onSessionFinalize?: SessionFinalizeHook[];
  /** Releases the cached agent of a key (an `AgentCache`). */
  agentCache?: { release(key: string): unknown };
  /** Routing entries idle this many days are pruned hourly (0 = never; default 0). */
  sessionStoreMaxAgeDays?: number;
  /** Told about hook failures (default: nothing). */
  onError?: (error: unknown, entry: SessionEntry, attempt: number) => void;
}

/** What one pass did. */
export interface ExpiryPass {
  /** Keys finalised after every hook succeeded. */
  finalized: string[];
  /** Keys whose hooks failed this pass (to be retried). */
  failed: string[];
  /** Keys finalised despite failing hooks ({@link MAX_FINALIZE_FAILURES} reached). */
  forced: string[];
  /** Routing entries pruned (0 when the hourly prune did not run). */
  pruned: number;
}

/**
 * Finalises expired sessions.
 *
 * @example
 * const watcher = new ExpiryWatcher({ store, agentCache, onSessionFinalize: [summarise] });
 * watcher.start();      // every 300 s
 * // …
 * watcher.stop();
 */
export class ExpiryWatcher {
  readonly #store: SessionStore;
  readonly #hooks: SessionFinalizeHook[];
  readonly #cache: { release(key: string): unknown } | null;
  readonly #maxAgeDays: number;
  readonly #onError: NonNullable<ExpiryWatcherOptions["onError"]>;
  readonly intervalSeconds: number;
  #timer: NodeJS.Timeout | null = null;
  #lastPruneAt: number | null = null;
  #running: Promise<ExpiryPass> | null = null;

  constructor(options: ExpiryWatcherOptions) {
    this.#store = options.store;
    this.#hooks = [...(options.onSessionFinalize ?? [])];
    this.#cache = options.agentCache ?? null;
    this.#maxAgeDays = options.sessionStoreMaxAgeDays ?? 0;
    this.#onError = options.onError ?? (() => {});
    this.intervalSeconds = options.intervalSeconds ?? DEFAULT_EXPIRY_INTERVAL_SECONDS;
    if (!Number.isFinite(this.intervalSeconds) || this.intervalSeconds <= 0) {
      throw new InvalidInputError("intervalSeconds must be a number of seconds > 0.", { field: "intervalSeconds" });
    }
    if (!Number.isFinite(this.#maxAgeDays) || this.#maxAgeDays < 0) {
      throw new InvalidInputError("sessionStoreMaxAgeDays must be a number of days ≥ 0 (0 turns pruning off).", {
        field: "sessionStoreMaxAgeDays",
      });
    }
  }

  /** Adds a finalisation hook. */
  addHook(hook: SessionFinalizeHook): void {
    this.#hooks.push(hook);
  }

  /** Starts passes every `intervalSeconds` (the timer does not keep the process alive). */
  start(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => {
      void this.runOnce().catch(() => {});
    }, this.intervalSeconds * 1000);
    this.#timer.unref();
  }

  /** Stops the passes; resolves when a pass in progress has finished. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    if (this.#running !== null) await this.#running.catch(() => {});
  }

  /** Whether passes are scheduled. */
  get running(): boolean {
    return this.#timer !== null;
  }

  /** Runs one pass now (passes never overlap: a call during a pass waits for it). */
  runOnce(): Promise<ExpiryPass> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #pass(): Promise<ExpiryPass> {
    const store = this.#store;
    const now = store.clock.now();
    const result: ExpiryPass = { finalized: [], failed: [], forced: [], pruned: 0 };
    for await (const route of store.routes({ expiryFinalized: false, turnInProgress: false })) {
      if (store.hasActiveProcesses(route.key)) continue;
      const policy = resolveResetPolicy(store.reset, route.platform ?? "", chatTypeOf(route.chatType));
      if (!evaluateReset(policy, route.updatedAt, now).reset) continue;
      const entry = toSessionEntry(route, await store.db.getSession(route.sessionId));
      let failure: unknown = undefined;
      for (const hook of this.#hooks) {
        try {
          await hook(entry);
        } catch (error) {
          failure = error ?? new Error("finalize hook failed");
          break;
        }
      }
      const attempt = route.finalizeFailures + 1;
      if (failure !== undefined) this.#onError(failure, entry, attempt);
      const force = failure !== undefined && attempt >= MAX_FINALIZE_FAILURES;
      if (failure !== undefined && !force) {
        const written = await store.patchEntry(route.key, (current) =>
          current.sessionId === route.sessionId ? { finalizeFailures: attempt } : null,
        );
        if (written !== null) result.failed.push(route.key);
        continue;
      }
      const written = await store.patchEntry(route.key, (current) =>
        current.sessionId === route.sessionId && !current.expiryFinalized
          ? { expiryFinalized: true, finalizeFailures: 0 }
          : null,
      );
      if (written === null) continue;
      await this.#cache?.release(route.key);
      (force ? result.forced : result.finalized).push(route.key);
    }
    if (this.#maxAgeDays > 0 && (this.#lastPruneAt === null || now - this.#lastPruneAt >= PRUNE_INTERVAL_SECONDS)) {
      this.#lastPruneAt = now;
      result.pruned = await store.pruneOldEntries(this.#maxAgeDays);
    }
    return result;
  }
}
