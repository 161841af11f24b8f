/**
 * Who a chat bot answers — the same rules on every platform:
 *
 * 1. never its own messages; never other bots unless `answerBots`;
 * 2. with allowlists, only the listed users and chats (a DM's chat is the user's DM chat);
 * 3. DMs always; in groups and channels only when mentioned, replied to, or in a thread the
 *    bot takes part in, unless `groupReply` is `all`.
 *
 * A refused message gets no reply and is not stored: the adapter drops it before it
 * reaches the gateway.
 *
 * @module
 */
import type { ChatType } from "../../gateway/index.js";

/** The `adapters.<platform>` settings that decide who is answered. */
export interface AnswerRules {
  /** Only these user ids are answered (empty: everyone). */
  allowedUsers: readonly string[];
  /** Only in these chat ids (empty: every chat). */
  allowedChats: readonly string[];
  /** Groups and channels: `mention` (mentioned, replied to, or a thread the bot is in) or `all`. */
  groupReply: "mention" | "all";
  /** Answer messages sent by other bots (default false). */
  answerBots: boolean;
}

/** The defaults of {@link AnswerRules}. */
export const DEFAULT_ANSWER_RULES: AnswerRules = Object.freeze({ allowedUsers: [], allowedChats: [], groupReply: "mention", answerBots: false });

/** What the adapter knows about one inbound message. */
export interface AnswerCandidate {
  chatType: ChatType;
  chatId: string;
  userId: string;
  /** The sender is this bot. */
  fromSelf: boolean;
  /** The sender is a bot. */
  fromBot: boolean;
  /** The message mentions the bot (by @name, or the platform's mention entity). */
  mentionsBot: boolean;
  /** The message replies to one of the bot's messages. */
  repliesToBot: boolean;
  /** The message is in a thread the bot started or has posted in. */
  inBotThread: boolean;
}

/** Why a message is (not) answered. */
export type AnswerDecision =
  | { answer: true; reason: "dm" | "mention" | "reply" | "thread" | "all" }
  | { answer: false; reason: "self" | "bot" | "user-not-allowed" | "chat-not-allowed" | "not-addressed" };

/**
 * Applies the rules to one message.
 *
 * @example
 * ```ts
 * decideAnswer({ chatType: "group", chatId: "-1", userId: "7", fromSelf: false, fromBot: false,
 *   mentionsBot: false, repliesToBot: false, inBotThread: false }, DEFAULT_ANSWER_RULES);
 * // { answer: false, reason: "not-addressed" }
 * ```
 */
export function decideAnswer(candidate: AnswerCandidate, rules: AnswerRules): AnswerDecision {
  if (candidate.fromSelf) return { answer: false, reason: "self" };
  if (candidate.fromBot && !rules.answerBots) return { answer: false, reason: "bot" };
  if (rules.allowedUsers.length > 0 && !rules.allowedUsers.includes(candidate.userId)) return { answer: false, reason: "user-not-allowed" };
  if (rules.allowedChats.length > 0 && !rules.allowedChats.includes(candidate.chatId)) return { answer: false, reason: "chat-not-allowed" };
  if (candidate.chatType === "dm") return { answer: true, reason: "dm" };
  if (rules.groupReply === "all") return { answer: true, reason: "all" };
  if (candidate.mentionsBot) return { answer: true, reason: "mention" };
  if (candidate.repliesToBot) return { answer: true, reason: "reply" };
  if (candidate.inBotThread) return { answer: true, reason: "thread" };
  return { answer: false, reason: "not-addressed" };
}
