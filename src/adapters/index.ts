/**
 * The shipped platform adapters: `local` (in-process), `api-server` (OpenAI-compatible
 * HTTP) and `webhook` (signed JSON in, signed callbacks out).
 *
 * @module
 */
export * from "./local-adapter.js";
export * from "./api-server-adapter.js";
export * from "./webhook-adapter.js";
export * from "./http-auth.js";
