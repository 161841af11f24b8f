/**
 * Prometheus metrics of a running gateway (prom-client): turns by outcome, turn latency,
 * store call latency, queue depth, running turns and live sessions, messages to platforms that
 * failed when sent (`threadline_send_failures_total`) or were reported undelivered afterwards
 * (`threadline_delivery_failures_total`).
 *
 * prom-client (and the OpenTelemetry API it loads) is required when metrics are first created,
 * not when this module loads: `threadline serve` creates them after it listens.
 *
 * @module
 */
import { createRequire } from "node:module";
import type { Registry } from "prom-client";
import type { GatewayMetrics } from "../gateway/index.js";

type PromClient = typeof import("prom-client");
let promClient: PromClient | null = null;
/** prom-client, loaded on first use. */
function loadPromClient(): PromClient {
  promClient ??= createRequire(import.meta.url)("prom-client") as PromClient;
  return promClient;
}

/** The registry and the hooks the runner calls. */
export interface GatewayMetricsBundle {
  registry: Registry;
  hooks: GatewayMetrics;
}

/**
 * Creates the gateway's metrics. `live` is read at scrape time.
 *
 * @example
 * const { registry, hooks } = createGatewayMetrics(() => ({ activeTurns: runner.activeTurns, liveAgents: runner.agents.size }));
 */
export function createGatewayMetrics(live: () => { activeTurns: number; liveAgents: number }): GatewayMetricsBundle {
  const { Counter, Gauge, Histogram, Registry } = loadPromClient();
  const registry = new Registry();
  const turns = new Counter({ name: "threadline_turns_total", help: "Turns finished, by outcome.", labelNames: ["outcome"], registers: [registry] });
  const turnSeconds = new Histogram({
    name: "threadline_turn_seconds",
    help: "Turn latency from the message to the committed reply (agent time included).",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const storeSeconds = new Histogram({
    name: "threadline_store_seconds",
    help: "Latency of store calls made by the gateway, by operation.",
    labelNames: ["operation"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
    registers: [registry],
  });
  const sendFailures = new Counter({
    name: "threadline_send_failures_total",
    help: "Messages to platforms that failed for good (the reply stays stored), by platform and kind.",
    labelNames: ["platform", "kind"],
    registers: [registry],
  });
  const deliveryFailures = new Counter({
    name: "threadline_delivery_failures_total",
    help: "Messages a platform accepted but later reported as not delivered (e.g. WhatsApp failed statuses), by platform and reason (the platform's error code).",
    labelNames: ["platform", "reason"],
    registers: [registry],
  });
  const depths = new Map<string, number>();
  new Gauge({
    name: "threadline_queue_depth",
    help: "Messages waiting in session queues (last known, all sessions).",
    registers: [registry],
    collect() {
      let sum = 0;
      for (const depth of depths.values()) sum += depth;
      this.set(sum);
    },
  });
  new Gauge({
    name: "threadline_active_turns",
    help: "Turns running now.",
    registers: [registry],
    collect() {
      this.set(live().activeTurns);
    },
  });
  new Gauge({
    name: "threadline_active_sessions",
    help: "Sessions with a live agent in the cache.",
    registers: [registry],
    collect() {
      this.set(live().liveAgents);
    },
  });
  for (const outcome of ["ok", "error", "interrupted"]) turns.inc({ outcome }, 0);
  return {
    registry,
    hooks: {
      turnFinished(outcome, seconds) {
        turns.inc({ outcome });
        turnSeconds.observe(seconds);
      },
      storeCall(operation, seconds) {
        storeSeconds.observe({ operation }, seconds);
      },
      sendFailed(platform, kind) {
        sendFailures.inc({ platform, kind });
      },
      deliveryFailed(platform, reason) {
        deliveryFailures.inc({ platform, reason });
      },
      queueDepthChanged(key, depth) {
        if (depth === 0) depths.delete(key);
        else depths.set(key, depth);
        if (depths.size > 10_000) depths.delete(depths.keys().next().value!);
      },
    },
  };
}
