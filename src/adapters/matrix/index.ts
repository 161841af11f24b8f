/**
 * The Matrix adapter (matrix-js-sdk). Import it with `import()` only when `adapters.matrix`
 * is configured: this folder loads the SDK.
 *
 * @module
 */
export * from "./matrix-adapter.js";
export * from "./matrix-source.js";
export * from "./matrix-format.js";
export * from "./matrix-media.js";
export * from "./matrix-sync-store.js";
