/**
 * The Slack adapter (Bolt and the Web API). Import it with `import()` only when
 * `adapters.slack` is configured: this folder loads the SDK.
 *
 * @module
 */
export * from "./slack-adapter.js";
export * from "./slack-events-route.js";
export * from "./slack-source.js";
export * from "./slack-format.js";
