/**
 * What the API needs to know about a running gateway to serve `GET /gateway/live`: a
 * read-only source of {@link GatewayLiveSnapshot}s. `threadline serve` implements it over its
 * runner; `threadline api` (no gateway) has none. The server never imports the gateway: the
 * serve layer hands this in.
 *
 * @module
 */

/** A session with a turn running in the gateway process. */
export interface LiveRunningSession {
  /** The session key (`agent:main:telegram:dm:…`). */
  key: string;
  /** The session the key routes to, or `null` when unknown. */
  sessionId: string | null;
  platform: string;
  /** `turn`: the model is working; `between`: the worker is taking the next queued message. */
  phase: "turn" | "between";
}

/** The gateway's state at one moment. */
export interface GatewayLiveSnapshot {
  /** Epoch seconds when the snapshot was taken. */
  at: number;
  /** False while draining for shutdown. */
  accepting: boolean;
  /** Turns running now. */
  activeTurns: number;
  /** Sessions with a live agent in this process (the "active sessions"). */
  liveAgents: number;
  /** Turns completed since start. */
  turnsCompleted: number;
  /** At most {@link MAX_LIVE_ROWS} running sessions. */
  runningSessions: LiveRunningSession[];
  /** Queued messages per key (at most {@link MAX_LIVE_ROWS} keys, deepest first). */
  queueDepths: Array<{ key: string; depth: number }>;
  /** Messages waiting in every listed queue together. */
  queuedTotal: number;
  /** The adapters the gateway serves and whether they are connected. */
  adapters: Array<{ platform: string; connected: boolean }>;
}

/** Most rows a snapshot lists per list. */
export const MAX_LIVE_ROWS = 50;

/** A read-only view of a running gateway. */
export interface GatewayLiveSource {
  /** The state now. */
  snapshot(): Promise<GatewayLiveSnapshot>;
}
