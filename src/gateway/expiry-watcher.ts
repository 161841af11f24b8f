/**
 * The expiry watcher: every few minutes, finalises sessions whose reset policy says
 * they have expired — once each, after giving their agent a turn to save what matters
 * ({@link Agent.beforeReset}) — and, hourly, prunes old routing entries.
 *
 * @module
 */
import type { Agent, TurnSpeaker } from "../agents/index.js";
import { InvalidInputError, ThreadlineError } from "../store/index.js";
import { evaluateReset, resolveResetPolicy } from "./reset-policy.js";
import { toSessionEntry, type SessionEntry } from "./session-entry.js";
import { chatTypeOf } from "./reset-decision.js";
import type { SessionRouter } from "./session-router.js";
import { closeOpenToolCalls } from "./turn-messages.js";
import { TurnContexts, type ContextWindowResolver } from "./turn-context.js";
import { speakerOfExpiringSession } from "./turn-speaker.js";

/** A hook run once when a session expires (summarise it, flush memory, …). A throw is retried on later passes. */
export type SessionFinalizeHook = (entry: SessionEntry) => unknown;

/** Default pass interval (seconds). */
export const DEFAULT_EXPIRY_INTERVAL_SECONDS = 300;
/** Failed passes after which a session is finalised anyway. */
export const MAX_FINALIZE_FAILURES = 3;
const PRUNE_INTERVAL_SECONDS = 3600;
/** Default time an agent's before-reset turn may take (seconds). */
export const DEFAULT_BEFORE_RESET_TIMEOUT_SECONDS = 60;

/** Tokens kept free for the instruction an agent adds to its before-reset turn. */
const BEFORE_RESET_INSTRUCTION_TOKENS = 512;

/** How the watcher gives an expiring session's agent its {@link Agent.beforeReset} turn. */
export interface BeforeResetOptions {
  /** The agent of an expiring session (e.g. the gateway's cached agent of the key, else a new one). */
  agentFor(entry: SessionEntry): Agent | Promise<Agent>;
  /** Seconds the hook may take before it is aborted and the reset goes ahead without it (> 0; default 60). */
  timeoutSeconds?: number;
  /**
   * The context window of the agent's model: the hook is given the newest whole turns of the
   * expiring transcript that fit it (default: 8,192 tokens).
   */
  contextWindow?: ContextWindowResolver;
  /** An extra cap on the messages of the expiring transcript the hook is given (`gateway.historyLimit`; default none). */
  historyLimit?: number;
  /** Told when a hook fails, times out or its output cannot be stored (the reset happens anyway). */
  onError?: (error: unknown, entry: SessionEntry) => void;
  /**
   * The memory section of the expiring session's person (see `GatewayRunnerOptions.memoryFor`),
   * given to the turn as its context so it updates what is saved instead of repeating it.
   */
  memoryFor?: ((speaker: TurnSpeaker) => Promise<string | null>) | null;
}

/** Options of an {@link ExpiryWatcher}. */
export interface ExpiryWatcherOptions {
  store: SessionRouter;
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
  /**
   * Before finalising an expired session (once, on the first pass that finds it expired),
   * give its agent a turn to save what matters; its output is stored in that session
   * (default: none).
   */
  beforeReset?: BeforeResetOptions | null;
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
  readonly #store: SessionRouter;
  readonly #hooks: SessionFinalizeHook[];
  readonly #cache: { release(key: string): unknown } | null;
  readonly #maxAgeDays: number;
  readonly #onError: NonNullable<ExpiryWatcherOptions["onError"]>;
  readonly #beforeReset:
    | (Required<Omit<BeforeResetOptions, "historyLimit" | "contextWindow">> & { historyLimit: number | undefined; contexts: TurnContexts })
    | null;
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
    const flush = options.beforeReset ?? null;
    this.#beforeReset =
      flush === null
        ? null
        : {
            agentFor: flush.agentFor,
            timeoutSeconds: flush.timeoutSeconds ?? DEFAULT_BEFORE_RESET_TIMEOUT_SECONDS,
            historyLimit: flush.historyLimit,
            onError: flush.onError ?? (() => {}),
            contexts: new TurnContexts(options.store.db, {
              ...(flush.contextWindow === undefined ? {} : { windowFor: flush.contextWindow }),
              ...(flush.historyLimit === undefined ? {} : { historyLimit: flush.historyLimit }),
            }),
            memoryFor: flush.memoryFor ?? null,
          };
    if (this.#beforeReset !== null) {
      const { timeoutSeconds, historyLimit } = this.#beforeReset;
      if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) {
        throw new InvalidInputError("beforeReset.timeoutSeconds must be a number of seconds > 0.", { field: "beforeReset.timeoutSeconds" });
      }
      if (historyLimit !== undefined && (!Number.isInteger(historyLimit) || historyLimit < 1)) {
        throw new InvalidInputError("beforeReset.historyLimit must be a whole number of messages ≥ 1.", { field: "beforeReset.historyLimit" });
      }
    }
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
      const decision = evaluateReset(policy, route.updatedAt, now);
      if (!decision.reset) continue;
      const entry = toSessionEntry(route, await store.db.getSession(route.sessionId));
      // Once per session: later passes only retry failed finalize hooks.
      if (route.finalizeFailures === 0) await this.#giveTurnBeforeReset(entry, decision.reason);
      let failure: unknown;
      for (const hook of this.#hooks) {
        try {
          await hook(entry);
        } catch (error) {
          failure =
            error ??
            new ThreadlineError(
              "TL_ERR_INTERNAL",
              "A session finalize hook failed without an error (it threw undefined or null); make the hook throw an Error that says what went wrong.",
            );
          break;
        }
      }
      const attempt = route.finalizeFailures + 1;
      if (failure !== undefined) this.#onError(failure, entry, attempt);
      const force = failure !== undefined && attempt >= MAX_FINALIZE_FAILURES;
      if (failure !== undefined && !force) {
        const written = await store.patchEntry(route.key, (current) => (current.sessionId === route.sessionId ? { finalizeFailures: attempt } : null));
        if (written !== null) result.failed.push(route.key);
        continue;
      }
      const written = await store.patchEntry(route.key, (current) =>
        current.sessionId === route.sessionId && !current.expiryFinalized ? { expiryFinalized: true, finalizeFailures: 0 } : null,
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

  /**
   * Runs the agent's {@link Agent.beforeReset} on the expiring session, bounded by the
   * timeout, and stores its output in that session. Never throws: a failure, a timeout or
   * output that cannot be stored is reported to `onError` and the reset goes ahead.
   */
  async #giveTurnBeforeReset(entry: SessionEntry, reason: "idle" | "daily"): Promise<void> {
    const options = this.#beforeReset;
    if (options === null || entry.messageCount === 0) return;
    const db = this.#store.db;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    try {
      const agent = await options.agentFor(entry);
      if (agent.beforeReset === undefined) return;
      // The newest whole turns that fit the model's window, with room for the agent's own instruction.
      const transcript = (
        await options.contexts.assemble({ sessionId: entry.sessionId, agent, contextPrompt: "", extraTokens: BEFORE_RESET_INSTRUCTION_TOKENS })
      ).messages;
      if (transcript.length === 0) return;
      const seconds = options.timeoutSeconds;
      const timedOut = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(
            new ThreadlineError(
              "TL_ERR_TIMEOUT",
              `The agent's before-reset turn took longer than ${seconds} s; the session is reset without it (raise gateway.beforeResetTimeoutSeconds to allow more time).`,
            ),
          );
        }, seconds * 1000);
      });
      // The turn saves for the session's person (nobody in a shared group session).
      const speaker = await speakerOfExpiringSession(this.#store.aliases, db, entry.origin, this.#store.keySettings);
      const memory = speaker === null || speaker.userId === null || options.memoryFor === null ? null : await options.memoryFor(speaker).catch(() => null);
      const running = agent.beforeReset({
        sessionId: entry.sessionId,
        transcript,
        reason,
        signal: controller.signal,
        ...(speaker === null ? {} : { speaker }),
        ...(memory === null ? {} : { contextPrompt: memory }),
      });
      running.catch(() => {}); // a late failure after the timeout is not unhandled
      const result = await Promise.race([running, timedOut]);
      clearTimeout(timer);
      if (result === null || result === undefined) return;
      const messages = closeOpenToolCalls(result.messages ?? []);
      if (messages.length > 0) await db.appendTurn(entry.sessionId, messages);
      if (result.usage !== undefined) await db.recordUsage(entry.sessionId, result.usage);
    } catch (error) {
      controller.abort();
      options.onError(error, entry);
    } finally {
      clearTimeout(timer);
    }
  }
}
