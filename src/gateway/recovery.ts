/**
 * Restart recovery: the clean-shutdown marker, the stuck-loop guard (a per-key count
 * of restarts that caught the session mid-turn, kept in the database, so it survives
 * the restarts it counts), the restart-loop breaker and the list of sessions to resume.
 *
 * @module
 */
import { InvalidInputError } from "../store/index.js";
import { InboundBuffer } from "./inbound-buffer.js";
import type { SessionEntry } from "./session-entry.js";
import { toSessionEntry } from "./session-entry.js";
import type { SessionRouter } from "./session-router.js";

/** Resume reasons that allow an automatic resume at startup. */
export const RESUMABLE_REASONS: readonly string[] = ["restart_interrupted", "restart_timeout", "shutdown_timeout"];
/** Restarts that catch a key mid-turn, in a row, before it is suspended. */
export const STUCK_LOOP_THRESHOLD = 3;
/** Boots within {@link BOOT_LOOP_WINDOW_SECONDS} that skip auto-resume. */
export const BOOT_LOOP_COUNT = 3;
/** The window of the restart-loop breaker. */
export const BOOT_LOOP_WINDOW_SECONDS = 60;
/** After a crash, sessions active this recently are marked for resume. */
export const RECENT_ACTIVITY_SECONDS = 120;

/** What {@link GatewayRecovery.startup} found and did. */
export interface StartupReport<T> {
  /** The previous run shut down cleanly (its marker was there). */
  cleanShutdown: boolean;
  /** This is the {@link BOOT_LOOP_COUNT}th boot within the window: auto-resume is skipped. */
  bootLoop: boolean;
  /** Keys a restart caught mid-turn (their stuck-loop counts went up). */
  interrupted: string[];
  /** Keys suspended by the stuck-loop guard on this start. */
  suspended: string[];
  /** After a crash: recently active keys marked `restart_interrupted`. */
  markedForResume: string[];
  /** Sessions to resume now (resume pending, fresh, with a resumable reason), oldest key first. */
  autoResume: SessionEntry[];
  /** Holds messages arriving while the restore runs; `release()` delivers them in order. */
  inbound: InboundBuffer<T>;
}

/** Options of {@link GatewayRecovery}. */
export interface GatewayRecoveryOptions {
  /** Names this gateway's marker and boot log in the database (default `main`). */
  gatewayId?: string;
}

/**
 * Startup and shutdown bookkeeping of a gateway process.
 *
 * @example
 * const recovery = new GatewayRecovery(store);
 * const report = await recovery.startup<InboundMessage>();
 * for (const entry of report.autoResume) resume(entry);
 * await report.inbound.release();
 * // … on SIGTERM, after draining (the marker is written only when no turn was cut off):
 * await recovery.shutdown({ restarting: false });
 */
export class GatewayRecovery {
  readonly #store: SessionRouter;
  readonly #id: string;

  constructor(store: SessionRouter, options: GatewayRecoveryOptions = {}) {
    this.#store = store;
    this.#id = options.gatewayId ?? "main";
    if (!/^[A-Za-z0-9_-]{1,64}$/u.test(this.#id)) {
      throw new InvalidInputError("gatewayId must be 1–64 letters, digits, '-' or '_'.", { field: "gatewayId" });
    }
  }

  get #markerKey(): string {
    return `gateway.${this.#id}.clean_shutdown`;
  }

  get #bootsKey(): string {
    return `gateway.${this.#id}.boots`;
  }

  /**
   * Runs the startup checks (once per process start). `skipKey` leaves keys alone that
   * another live replica is running (their lease is held elsewhere).
   */
  async startup<T = unknown>(options: { skipKey?: (key: string) => Promise<boolean> } = {}): Promise<StartupReport<T>> {
    const skip = options.skipKey ?? (async () => false);
    const store = this.#store;
    const db = store.db;
    const now = store.clock.now();

    const boots = parseTimes(await db.getMeta(this.#bootsKey)).filter((t) => now - t < BOOT_LOOP_WINDOW_SECONDS && t <= now);
    boots.push(now);
    await db.setMeta(this.#bootsKey, JSON.stringify(boots.slice(-10)));
    const bootLoop = boots.length >= BOOT_LOOP_COUNT;

    const cleanShutdown = (await db.getMeta(this.#markerKey)) !== null;
    if (cleanShutdown) await db.deleteMeta(this.#markerKey);

    const interrupted: string[] = [];
    const suspended: string[] = [];
    for await (const route of store.routes({ turnInProgress: true })) {
      if (await skip(route.key)) continue;
      const written = await store.patchEntry(route.key, (current) => {
        if (current.turnStartedAt === null) return null;
        const count = current.interruptedRestarts + 1;
        if (count >= STUCK_LOOP_THRESHOLD) {
          return { turnStartedAt: null, interruptedRestarts: count, suspended: true, resumePending: false, resumeReason: null };
        }
        const marked = current.resumePending && current.resumeReason !== null;
        return {
          turnStartedAt: null,
          interruptedRestarts: count,
          resumePending: true,
          resumeReason: marked ? current.resumeReason : "restart_interrupted",
          lastResumeMarkedAt: marked ? (current.lastResumeMarkedAt ?? now) : now,
        };
      });
      if (written === null) continue;
      interrupted.push(route.key);
      if (written.suspended) suspended.push(route.key);
    }

    const markedForResume: string[] = [];
    if (!cleanShutdown) {
      for await (const route of store.routes({ updatedSince: now - RECENT_ACTIVITY_SECONDS, suspended: false, resumePending: false })) {
        if (await skip(route.key)) continue;
        if (await store.markResumePending(route.key, "restart_interrupted")) markedForResume.push(route.key);
      }
    }

    const autoResume: SessionEntry[] = [];
    if (!bootLoop) {
      for await (const route of store.routes({ resumePending: true, suspended: false })) {
        if (route.resumeReason === null || !RESUMABLE_REASONS.includes(route.resumeReason)) continue;
        if (await skip(route.key)) continue;
        const marked = route.lastResumeMarkedAt ?? route.updatedAt;
        if (store.resumeFreshnessSeconds > 0 && now - marked > store.resumeFreshnessSeconds) continue;
        const session = await db.getSession(route.sessionId);
        if (session === null || session.endedAt !== null) continue;
        autoResume.push(toSessionEntry(route, session));
      }
    }

    return { cleanShutdown, bootLoop, interrupted, suspended, markedForResume, autoResume, inbound: new InboundBuffer<T>() };
  }

  /**
   * Marks a key still mid-turn when the drain timeout fires: resume pending with
   * `restart_timeout` (restarting) or `shutdown_timeout`. The turn marker stays, so the
   * next start counts the interruption.
   */
  async markDrainTimeout(key: string, restarting: boolean): Promise<boolean> {
    const now = this.#store.clock.now();
    const reason = restarting ? "restart_timeout" : "shutdown_timeout";
    const written = await this.#store.patchEntry(key, (route) =>
      route.suspended ? null : { resumePending: true, resumeReason: reason, lastResumeMarkedAt: now },
    );
    return written !== null;
  }

  /**
   * The last step of a shutdown (after the drain). Keys still mid-turn (the drain timeout
   * cut their turns off) are marked ({@link markDrainTimeout}) and the clean-shutdown marker
   * is NOT written, so the next start handles the stop as an interruption (it counts the
   * cut-off turns and resumes them). With no key mid-turn the marker is written. Returns
   * the keys that were still mid-turn. `skipKey` leaves keys alone that another live
   * replica is running.
   */
  async shutdown(options: { restarting?: boolean; skipKey?: (key: string) => Promise<boolean> } = {}): Promise<string[]> {
    const stillRunning: string[] = [];
    for await (const route of this.#store.routes({ turnInProgress: true })) {
      if (options.skipKey !== undefined && (await options.skipKey(route.key))) continue;
      await this.markDrainTimeout(route.key, options.restarting ?? false);
      stillRunning.push(route.key);
    }
    if (stillRunning.length === 0) await this.#store.db.setMeta(this.#markerKey, JSON.stringify({ at: this.#store.clock.now() }));
    return stillRunning;
  }
}

function parseTimes(value: string | null): number[] {
  if (value === null) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed.filter((t): t is number => typeof t === "number" && Number.isFinite(t)) : [];
  } catch {
    return [];
  }
}
