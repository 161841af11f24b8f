/**
 * Threadline: the session layer for AI agents and chat gateways.
 *
 * The storage contract ({@link SessionDB}), its errors and `openSessionDB`, and the
 * gateway lifecycle library (also at `threadline/gateway`), and execution sessions (also at
 * `threadline/executions`). Backends live in subpath
 * exports (`threadline/sqlite`, `threadline/postgres`).
 *
 * @module
 */
export * from "./store/index.js";
export * from "./gateway/index.js";
export * from "./executions/index.js";
