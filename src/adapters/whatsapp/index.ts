/**
 * The WhatsApp (Cloud API) adapter: Meta's documented HTTP API through Node's `fetch`, no
 * SDK. Import it with `import()` only when `adapters.whatsapp` is configured, like the other
 * chat platforms.
 *
 * @module
 */
export * from "./whatsapp-adapter.js";
export * from "./whatsapp-graph-api.js";
export * from "./whatsapp-webhook-route.js";
export * from "./whatsapp-source.js";
export * from "./whatsapp-format.js";
