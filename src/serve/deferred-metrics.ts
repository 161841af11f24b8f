/**
 * The gateway's metrics, created after it listens: {@link deferredGatewayMetrics} gives the
 * runner its hooks at once and creates the prom-client registry (which loads prom-client) only
 * when asked to, on the first scrape of `/metrics`, or when too many events wait. Events before
 * that are kept and replayed into the registry in order, so nothing counted is lost.
 *
 * @module
 */
import type { GatewayMetrics } from "../gateway/index.js";
import { createGatewayMetrics, type GatewayMetricsBundle } from "./gateway-metrics.js";

/** Events kept before the registry exists; one more creates it. */
const MAX_WAITING = 1000;

/** Metrics whose registry is created on demand (see the module comment). */
export interface DeferredGatewayMetrics {
  /** The hooks the runner calls (any time). */
  hooks: Required<GatewayMetrics>;
  /** The registry and its hooks, created now if they do not exist yet. */
  bundle(): GatewayMetricsBundle;
}

/** Metrics of a gateway whose registry is created when {@link DeferredGatewayMetrics.bundle} is first called. `live` is read at scrape time. */
export function deferredGatewayMetrics(live: () => { activeTurns: number; liveAgents: number }): DeferredGatewayMetrics {
  let created: GatewayMetricsBundle | null = null;
  const waiting: Array<(hooks: GatewayMetrics) => void> = [];
  const bundle = (): GatewayMetricsBundle => {
    if (created === null) {
      created = createGatewayMetrics(live);
      for (const call of waiting.splice(0)) call(created.hooks);
    }
    return created;
  };
  const forward = (call: (hooks: GatewayMetrics) => void): void => {
    if (created !== null) call(created.hooks);
    else if (waiting.push(call) > MAX_WAITING) bundle();
  };
  return {
    bundle,
    hooks: {
      turnFinished: (outcome, seconds) => forward((h) => h.turnFinished?.(outcome, seconds)),
      storeCall: (operation, seconds) => forward((h) => h.storeCall?.(operation, seconds)),
      queueDepthChanged: (key, depth) => forward((h) => h.queueDepthChanged?.(key, depth)),
      sendFailed: (platform, kind) => forward((h) => h.sendFailed?.(platform, kind)),
      deliveryFailed: (platform, reason) => forward((h) => h.deliveryFailed?.(platform, reason)),
    },
  };
}
