/**
 * The gateway's metrics registry is created after `serve` listens (deferred-metrics.ts): events
 * the runner reports before that are kept and replayed in order, so the first scrape counts
 * them; when more wait than it keeps, it creates the registry then, losing none. Real prom-client.
 */
import { describe, expect, it } from "vitest";
import { deferredGatewayMetrics } from "../../src/serve/deferred-metrics.js";

describe("deferredGatewayMetrics", () => {
  it("replays what happened before the registry existed into it, then forwards directly", async () => {
    const metrics = deferredGatewayMetrics(() => ({ activeTurns: 2, liveAgents: 3 }));
    metrics.hooks.turnFinished("ok", 0.2);
    metrics.hooks.turnFinished("error", 1);
    metrics.hooks.sendFailed("telegram", "reply");
    metrics.hooks.queueDepthChanged("k1", 4);
    const { registry } = metrics.bundle();
    expect(metrics.bundle().registry).toBe(registry);
    metrics.hooks.turnFinished("ok", 0.3);
    const text = await registry.metrics();
    expect(text).toContain('threadline_turns_total{outcome="ok"} 2');
    expect(text).toContain('threadline_turns_total{outcome="error"} 1');
    expect(text).toContain('threadline_send_failures_total{platform="telegram",kind="reply"} 1');
    expect(text).toContain("threadline_queue_depth 4");
    expect(text).toContain("threadline_active_turns 2");
    expect(text).toContain("threadline_turn_seconds_count 3");
  });

  it("loses no event when more wait than it keeps (it creates the registry then)", async () => {
    const metrics = deferredGatewayMetrics(() => ({ activeTurns: 0, liveAgents: 0 }));
    for (let i = 0; i < 1500; i++) metrics.hooks.storeCall("startTurn", 0.001);
    const text = await metrics.bundle().registry.metrics();
    expect(text).toContain('threadline_store_seconds_count{operation="startTurn"} 1500');
  });
});
