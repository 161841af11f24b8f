/**
 * The Telegram adapter (grammY). Import it with `import()` only when `adapters.telegram`
 * is configured: this folder loads the SDK.
 *
 * @module
 */
export * from "./telegram-adapter.js";
export * from "./telegram-source.js";
export * from "./telegram-format.js";
