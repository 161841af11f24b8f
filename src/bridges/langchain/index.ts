/**
 * `threadline/langchain`: a LangChain JS chat message history kept in Threadline sessions.
 * `@langchain/core` (1.x) is an optional peer dependency, loaded by this entry point only
 * (never by `threadline` itself).
 *
 * The list is explicit; docs/api.md lists every export.
 *
 * @example
 * import { ThreadlineChatMessageHistory } from "threadline/langchain";
 * const history = new ThreadlineChatMessageHistory({ db, sessionId: "user-42" });
 *
 * @module
 */
export { ThreadlineChatMessageHistory, type ThreadlineChatMessageHistoryOptions } from "./threadline-chat-message-history.js";
