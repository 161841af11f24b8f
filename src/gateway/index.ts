/**
 * `threadline/gateway`: the gateway session lifecycle — message origins, session keys,
 * routing entries and their reset policies, restart recovery, durable per-session
 * queues, the model's session context (with PII redaction), the expiry watcher and
 * the agent cache. Works on any {@link SessionDB} backend.
 *
 * @module
 */
export * from "./clock.js";
export * from "./session-source.js";
export * from "./session-key.js";
export * from "./reset-policy.js";
export * from "./session-context.js";
export * from "./agent-cache.js";
export * from "./session-entry.js";
export * from "./identity-aliases.js";
export * from "./session-store.js";
export * from "./session-queue.js";
export * from "./inbound-buffer.js";
export * from "./recovery.js";
export * from "./expiry-watcher.js";
export * from "./lifecycle-config.js";
export * from "./adapter.js";
export * from "./adapter-state.js";
export * from "./turn-messages.js";
export * from "./slash-commands.js";
export * from "./gateway-logger.js";
export * from "./gateway-runner.js";
export * from "./handoff.js";
export * from "./handoff-worker.js";
export * from "./home-channels.js";
