/**
 * The pieces every chat-platform adapter (Telegram, Slack, Discord, …) shares, written
 * once: the inbound flow — de-duplication, the answer rules, "typing…", the hand-off to the
 * gateway and what the chat is told, receiving under a replica's lease ({@link InboundFlow},
 * built from {@link SeenMessageIds}, {@link decideAnswer} and {@link TypingIndicator}); the
 * one back-off of reconnect, poll and send loops ({@link Backoff}, {@link retry},
 * {@link abortableSleep}); the one Markdown → platform-text renderer
 * ({@link createTextRenderer}, with {@link listLines}, {@link tableLines}, {@link wrapMarkers});
 * splitting long replies on boundaries ({@link splitMessage}); tokens kept out of logs and
 * errors ({@link redactError}, {@link PlatformFailures}); lazy SDK loading ({@link loadSdk});
 * a `connect` that does not hold the gateway's start ({@link connectInBackground}); and an
 * attachment's kind from its MIME type ({@link mediaKindOf}), and downloading an attachment from
 * the platform's own file host only ({@link downloadPlatformFile}). None of them imports an SDK.
 * (The no-op logger an adapter falls back on is the gateway's `noopLogger`, beside
 * `GatewayLogger`.)
 *
 * @module
 */
export * from "./inbound-flow.js";
export * from "./backoff.js";
export * from "./text-renderer.js";
export * from "./platform-failures.js";
export * from "./message-splitter.js";
export * from "./typing-indicator.js";
export * from "./seen-message-ids.js";
export * from "./answer-policy.js";
export * from "./secret-redaction.js";
export * from "./load-sdk.js";
export * from "./connect-in-background.js";
export * from "./media-kind.js";
export * from "./media-download.js";
