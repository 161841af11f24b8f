/**
 * The `threadline serve` composition root: config file, metrics, and starting/stopping a
 * complete gateway.
 *
 * @module
 */
export * from "./serve-config.js";
export * from "./config-keys.js";
export * from "./gateway-metrics.js";
export * from "./start-gateway.js";
export * from "./agent-choice.js";
export * from "./chat-config/index.js";
export * from "./chat-adapters.js";
