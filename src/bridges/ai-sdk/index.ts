/**
 * `threadline/ai-sdk`: Vercel AI SDK chats (UI messages and model messages) kept in
 * Threadline sessions. `ai` (6.x) is an optional peer dependency, used for its types only:
 * this entry point loads nothing of it.
 *
 * The list is explicit; docs/api.md lists every export.
 *
 * @example
 * import { openSessionDB } from "threadline";
 * import { AiSdkChatStore } from "threadline/ai-sdk";
 * const chats = new AiSdkChatStore(await openSessionDB("chats.db"));
 * const messages = await chats.loadUIMessages("chat-42");
 *
 * @module
 */
export {
  AiSdkChatStore,
  type AiSdkChatStoreOptions,
  type AiSdkChatWriteOptions,
  type AiSdkFinishEvent,
  type AiSdkOnFinishOptions,
  type SaveUIMessagesResult,
} from "./ai-sdk-chat-store.js";
