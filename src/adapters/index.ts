/**
 * The shipped platform adapters: `local` (in-process), `api-server` (OpenAI-compatible
 * HTTP), `webhook` (signed JSON in, signed callbacks out) and `cli` (the terminal of
 * `threadline chat`).
 *
 * @module
 */
export * from "./local-adapter.js";
export * from "./cli-adapter.js";
export * from "./api-server-adapter.js";
export * from "./webhook-adapter.js";
export * from "./http-auth.js";
