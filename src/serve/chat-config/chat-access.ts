/**
 * The access keys every `adapters.<platform>` section shares (`enabled`, `allowedUsers`,
 * `allowedChats`, `groupReply`, `answerBots`): their zod shape ({@link chatAccessShape}),
 * their `EXPECTED` lines ({@link chatAccessExpected}) and their resolution into
 * {@link AnswerRules} ({@link resolveChatAccess}). Each platform's config module spreads
 * them into its own section.
 *
 * @module
 */
import { z } from "zod";
import type { AnswerRules } from "../../adapters/chat/index.js";

/** Zod shape of the access keys every chat platform section has. */
export const chatAccessShape = {
  enabled: z.boolean().optional(),
  allowedUsers: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  allowedChats: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  groupReply: z.enum(["mention", "all"]).optional(),
  answerBots: z.boolean().optional(),
};

/** The `EXPECTED` lines of the access keys of `adapters.<platform>`. */
export function chatAccessExpected(platform: string): Record<string, string> {
  return {
    [`adapters.${platform}.enabled`]: "true or false (default true when the section is present)",
    [`adapters.${platform}.allowedUsers`]: "a list of user ids allowed to talk to the bot (empty or absent: everyone)",
    [`adapters.${platform}.allowedChats`]: "a list of chat ids the bot answers in (empty or absent: every chat)",
    [`adapters.${platform}.groupReply`]: "mention (answer in groups only when mentioned, replied to or in the bot's thread) or all",
    [`adapters.${platform}.answerBots`]: "true or false (answer messages from other bots, default false)",
  };
}

type AccessSection = { allowedUsers?: Array<string | number>; allowedChats?: Array<string | number>; groupReply?: "mention" | "all"; answerBots?: boolean };

/** The resolved access keys of a section. */
export function resolveChatAccess(section: AccessSection): AnswerRules {
  return {
    allowedUsers: (section.allowedUsers ?? []).map(String),
    allowedChats: (section.allowedChats ?? []).map(String),
    groupReply: section.groupReply ?? "mention",
    answerBots: section.answerBots ?? false,
  };
}

