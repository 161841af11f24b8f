/**
 * The access keys every `adapters.<platform>` section shares (`enabled`, `access`,
 * `allowedUsers`, `allowedChats`, `admins`, `groupReply`, `answerBots`): their zod shape
 * ({@link chatAccessShape}), their `EXPECTED` lines ({@link CHAT_ACCESS_EXPECTED}), their
 * resolution ({@link resolveChatAccess}) and the rules the platform's adapter applies itself
 * ({@link adapterAnswerRules}). Each platform's descriptor (`<platform>/<platform>-platform.ts`)
 * spreads them into its own section.
 *
 * Who may talk to the agent (`access`):
 * - `pairing` (the default without `allowedUsers`): listed users and admins are answered; an
 *   unknown sender in a DM gets a one-time code the owner approves (`threadline pairing
 *   approve`); in groups only listed, approved or admin senders, or chats in `allowedChats`.
 *   The gateway decides (`AccessGate`), so the adapter passes every addressed message on.
 * - `allowlist` (the default with a non-empty `allowedUsers`, as before): the adapter drops
 *   everyone not in `allowedUsers` (plus admins), and chats not in `allowedChats`.
 * - `open`: everyone is answered (`allowedChats`, when set, still limits the chats).
 *
 * @module
 */
import { z } from "zod";
import type { AccessMode } from "../gateway/index.js";
import type { AnswerRules } from "./chat/index.js";

/** Zod shape of the access keys every chat platform section has. */
export const chatAccessShape = {
  enabled: z.boolean().optional(),
  access: z.enum(["pairing", "allowlist", "open"]).optional(),
  admins: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  allowedUsers: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  allowedChats: z.array(z.union([z.string().min(1), z.number().int()])).optional(),
  groupReply: z.enum(["mention", "all"]).optional(),
  answerBots: z.boolean().optional(),
};

/** The `EXPECTED` lines of the access keys, by key of `adapters.<platform>` (the descriptor adds the prefix). */
export const CHAT_ACCESS_EXPECTED: Readonly<Record<string, string>> = {
  enabled: "true or false (default true when the section is present)",
  access:
    "pairing (unknown senders get a code the owner approves), allowlist (only allowedUsers) or open (everyone); default: allowlist when allowedUsers is set, else pairing",
  admins: "a list of user ids who may /sethome, /pair approve <code> and /resume a session handed off to their chat (always allowed to talk to the bot)",
  allowedUsers: "a list of user ids always allowed to talk to the bot (no pairing needed)",
  allowedChats: "a list of chat ids the bot answers in (empty or absent: every chat)",
  groupReply: "mention (answer in groups only when mentioned, replied to or in the bot's thread) or all",
  answerBots: "true or false (answer messages from other bots, default false)",
};

type AccessSection = {
  access?: AccessMode;
  admins?: Array<string | number>;
  allowedUsers?: Array<string | number>;
  allowedChats?: Array<string | number>;
  groupReply?: "mention" | "all";
  answerBots?: boolean;
};

/** The resolved access keys of a chat platform section. */
export interface ChatAccess extends AnswerRules {
  /** Who may talk to the agent (see the module's description). */
  access: AccessMode;
  /** `access` was not in the file and `pairing` was picked (the startup log says so once). */
  accessDefaulted: boolean;
  /** `adapters.<platform>.admins` (the gateway adds `gateway.admins.<platform>`). */
  admins: string[];
}

/**
 * The resolved access keys of a section: `access` defaults to `allowlist` when the section
 * lists `allowedUsers` (old configs behave as before), else to `pairing`.
 */
export function resolveChatAccess(section: AccessSection): ChatAccess {
  const allowedUsers = (section.allowedUsers ?? []).map(String);
  const access = section.access ?? (allowedUsers.length > 0 ? "allowlist" : "pairing");
  return {
    access,
    accessDefaulted: section.access === undefined && access === "pairing",
    admins: (section.admins ?? []).map(String),
    allowedUsers,
    allowedChats: (section.allowedChats ?? []).map(String),
    groupReply: section.groupReply ?? "mention",
    answerBots: section.answerBots ?? false,
  };
}

/**
 * The rules the platform's adapter applies itself (its self, bot and mention rules always):
 * `allowlist` keeps `allowedUsers` (with the admins) and `allowedChats`; `pairing` passes
 * every user and chat on to the gateway's access gate; `open` passes every user and keeps
 * `allowedChats`.
 */
export function adapterAnswerRules(access: ChatAccess, extraAdmins: readonly string[] = []): AnswerRules {
  const base = { groupReply: access.groupReply, answerBots: access.answerBots };
  switch (access.access) {
    case "allowlist":
      return { ...base, allowedUsers: [...new Set([...access.allowedUsers, ...access.admins, ...extraAdmins])], allowedChats: access.allowedChats };
    case "open":
      return { ...base, allowedUsers: [], allowedChats: access.allowedChats };
    case "pairing":
      return { ...base, allowedUsers: [], allowedChats: [] };
  }
}
