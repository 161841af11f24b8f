/**
 * What the parts of a `GatewayRunner` share: the store, the durable queue, the adapters,
 * the logger and metrics, the lease settings, whether the gateway accepts messages, and
 * the way out to a platform. The runner builds one and hands it to its admission, its
 * session workers and its turn runner.
 *
 * @module
 */
import type { MediaSettings } from "../media/index.js";
import type { Lease } from "../store/index.js";
import type { Adapter, OutboundMessage } from "./adapter.js";
import type { GatewayLogger } from "./gateway-logger.js";
import type { SessionQueue } from "./session-queue.js";
import type { SessionSource } from "./session-source.js";
import type { StaleHolderTest } from "./stale-leases.js";
import type { GatewayDB, SessionRouter } from "./session-router.js";

/** Hooks for metrics (the `serve` command feeds Prometheus from them). */
export interface GatewayMetrics {
  turnFinished?(outcome: "ok" | "error" | "interrupted", seconds: number): void;
  storeCall?(operation: string, seconds: number): void;
  queueDepthChanged?(key: string, depth: number): void;
  /** A message to a platform failed for good (after the adapter's own retries). */
  sendFailed?(platform: string, kind: OutboundMessage["kind"]): void;
  /** A platform reported a message it had accepted as not delivered (e.g. a WhatsApp `failed` status). */
  deliveryFailed?(platform: string, reason: string): void;
}

/** Per-session leases of a runner on a database shared by several replicas (`holder` names this replica). */
export interface RunnerLeases {
  holder: string;
  ttlSeconds: number;
  /** Holders that are dead earlier processes of this replica (their leases are taken over at once). */
  stale: StaleHolderTest;
}

/** What a running session is doing. */
export interface Running {
  /** `turn` while a turn is being run; `between` while the worker looks for the next queued message. */
  phase: "turn" | "between";
  /** A message was queued for the key since the worker last looked at the queue. */
  more: boolean;
  controller: AbortController | null;
  /** Why the running turn was aborted. */
  abortReason: "stop" | "shutdown" | null;
  lease: Lease | null;
  renewTimer: NodeJS.Timeout | null;
  done: Promise<void>;
  source: SessionSource;
}

/** What the admission, the session workers and the turn runner of one `GatewayRunner` share. */
export interface RunnerContext {
  readonly store: SessionRouter;
  readonly db: GatewayDB;
  readonly queue: SessionQueue;
  readonly log: GatewayLogger;
  readonly metrics: GatewayMetrics;
  readonly leases: RunnerLeases | null;
  /** The adapters by platform. */
  readonly adapters: ReadonlyMap<string, Adapter>;
  /**
   * The `media.*` settings: the size limit and download timeout of inbound attachments (the
   * turn's media step) and `maxImagesInContext` (how many of a request's newest images go to
   * the model as images).
   */
  readonly mediaSettings: MediaSettings;
  /** Whether the gateway accepts messages. */
  isAccepting(): boolean;
  /** Sends to the platform of `source`; a failure is logged and counted, never thrown. */
  send(source: SessionSource, message: OutboundMessage): Promise<void>;
  /** Sends a notice or error to the chat of `source`. */
  notify(source: SessionSource, text: string, inReplyTo: string[], kind?: OutboundMessage["kind"], extra?: Pick<OutboundMessage, "refused">): Promise<void>;
}

/** Whether replies to a platform can be delivered here (an adapter for it was added). */
export function serves(context: RunnerContext, platform: string): boolean {
  return context.adapters.has(platform);
}

/** Runs a store call, timed for the `storeCall` metric. */
export async function timed<T>(context: RunnerContext, operation: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await run();
  } finally {
    context.metrics.storeCall?.(operation, (performance.now() - started) / 1000);
  }
}

/** The lease fence of a worker's writes (`undefined` without a lease). */
export function fenceOf(key: string, state: Running): { fence: { key: string; token: number } } | undefined {
  return state.lease === null ? undefined : { fence: { key, token: state.lease.token } };
}

/** The origin of a stored entry as a source (a DM of an unknown platform when none is stored). */
export function sourceOfEntry(entry: { origin: Record<string, unknown> | null; platform: string | null }): SessionSource {
  return (entry.origin as SessionSource | null) ?? { platform: entry.platform ?? "unknown", chatType: "dm" };
}
