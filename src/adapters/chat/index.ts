/**
 * The pieces every chat-platform adapter (Telegram, Slack, Discord, …) shares, written
 * once: splitting long replies on boundaries ({@link splitMessage}), the typing indicator
 * renewed while a turn runs ({@link TypingIndicator}), de-duplication of redelivered events
 * ({@link SeenMessageIds}), who is answered ({@link decideAnswer}), tokens kept out of logs
 * ({@link redactError}), lazy SDK loading ({@link loadSdk}), a `connect` that does not hold
 * the gateway's start ({@link connectInBackground}), back-off pauses cut short by a stop
 * ({@link abortableSleep}), Markdown lists and tables as text lines for platforms that have
 * neither ({@link listLines}, {@link tableLines}, {@link wrapMarkers}) and an attachment's
 * kind from its MIME type ({@link mediaKindOf}). None of them imports an SDK. (The no-op
 * logger an adapter falls back on is the gateway's `noopLogger`, beside `GatewayLogger`.)
 *
 * @module
 */
export * from "./message-splitter.js";
export * from "./typing-indicator.js";
export * from "./seen-message-ids.js";
export * from "./answer-policy.js";
export * from "./secret-redaction.js";
export * from "./load-sdk.js";
export * from "./connect-in-background.js";
export * from "./abortable-sleep.js";
export * from "./markdown-text-blocks.js";
export * from "./media-kind.js";
