/**
 * The Signal adapter (a bot account on the signal-cli REST API, bbernhard/signal-cli-rest-api).
 * Import it with `import()` only when `adapters.signal` is configured: this folder loads `ws`.
 *
 * @module
 */
export * from "./signal-adapter.js";
export * from "./signal-source.js";
export * from "./signal-format.js";
export * from "./signal-rest-client.js";
