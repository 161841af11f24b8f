/**
 * The live view of a running gateway for the HTTP API (`GET /gateway/live`): a
 * {@link GatewayLiveSource} over the runner's in-memory state and the durable queue. Each
 * snapshot reads at most one query for the queued keys plus one per listed key.
 *
 * @module
 */
import type { GatewayRunner } from "../gateway/index.js";
import { MAX_LIVE_ROWS, type GatewayLiveSnapshot, type GatewayLiveSource } from "../http-api/internal.js";

/** A live source over `runner`. */
export function gatewayLiveSource(runner: GatewayRunner): GatewayLiveSource {
  return {
    async snapshot(): Promise<GatewayLiveSnapshot> {
      const running = runner.runningSessions.slice(0, MAX_LIVE_ROWS);
      const runningSessions = [];
      for (const r of running) {
        const route = await runner.db.getRoute(r.key);
        runningSessions.push({ key: r.key, sessionId: route?.sessionId ?? null, platform: r.platform, phase: r.phase });
      }
      const queueDepths: Array<{ key: string; depth: number }> = [];
      for (const key of (await runner.queue.pendingKeys()).slice(0, MAX_LIVE_ROWS)) {
        const depth = await runner.queue.depth(key);
        if (depth > 0) queueDepths.push({ key, depth });
      }
      queueDepths.sort((a, b) => b.depth - a.depth || (a.key < b.key ? -1 : 1));
      return {
        at: Date.now() / 1000,
        accepting: runner.accepting,
        activeTurns: runner.activeTurns,
        liveAgents: runner.agents.size,
        turnsCompleted: runner.turnsCompleted,
        runningSessions: runningSessions.sort((a, b) => (a.key < b.key ? -1 : 1)),
        queueDepths,
        queuedTotal: queueDepths.reduce((n, q) => n + q.depth, 0),
        adapters: runner.platforms.map((platform) => ({ platform, connected: runner.accepting })),
      };
    },
  };
}
