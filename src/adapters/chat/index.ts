/**
 * The pieces every chat-platform adapter (Telegram, Slack, Discord, …) shares, written
 * once: splitting long replies on boundaries ({@link splitMessage}), the typing indicator
 * renewed while a turn runs ({@link TypingIndicator}), de-duplication of redelivered events
 * ({@link SeenMessageIds}), who is answered ({@link decideAnswer}), tokens kept out of logs
 * ({@link redactError}) and lazy SDK loading ({@link loadSdk}). None of them imports an SDK.
 *
 * @module
 */
export * from "./message-splitter.js";
export * from "./typing-indicator.js";
export * from "./seen-message-ids.js";
export * from "./answer-policy.js";
export * from "./secret-redaction.js";
export * from "./load-sdk.js";
