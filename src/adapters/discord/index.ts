/**
 * The Discord adapter (discord.js). Import it with `import()` only when `adapters.discord`
 * is configured: this folder loads the SDK.
 *
 * @module
 */
export * from "./discord-adapter.js";
export * from "./discord-source.js";
export * from "./discord-format.js";
