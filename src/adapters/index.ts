/**
 * The shipped platform adapters: `local` (in-process), `api-server` (OpenAI-compatible
 * HTTP), `webhook` (signed JSON in, signed callbacks out) and `cli` (the terminal of
 * `threadline chat`), and the pieces every chat-platform adapter shares (`chat/`). The
 * platform adapters themselves (`telegram/`, …) are not re-exported here: they load their SDK,
 * so `threadline serve` imports them with `import()` only when configured.
 *
 * @module
 */
export * from "./local-adapter.js";
export * from "./cli-adapter.js";
export * from "./api-server-adapter.js";
export * from "./webhook-adapter.js";
export * from "./http-auth.js";
export * from "./chat/index.js";
