/**
 * Where a message came from: the platform, chat and user a gateway session is
 * bound to. Parsed from untrusted JSON with {@link parseSessionSource} and
 * described for people and models with {@link describeSessionSource}.
 *
 * @module
 */
import { z } from "zod";
import { InvalidInputError } from "../store/index.js";

/** The kinds of chat a session can belong to. */
export const CHAT_TYPES = ["dm", "group", "channel", "thread"] as const;

/** The kind of chat: a direct message, a group, a channel, or a thread inside one. */
export type ChatType = (typeof CHAT_TYPES)[number];

/**
 * Platform names Threadline knows about. The set is open: a source with any other
 * platform name is accepted and kept as given.
 */
export const KNOWN_PLATFORMS: readonly string[] = Object.freeze([
  "telegram",
  "discord",
  "slack",
  "whatsapp",
  "signal",
  "matrix",
  "mattermost",
  "email",
  "sms",
  "webhook",
  "api-server",
  "cli",
  "local",
  "cron",
]);

/**
 * The origin of a gateway message. `platform` and `chatType` are required; every
 * other field is optional. Parsed sources also keep any extra keys they came with.
 */
export interface SessionSource {
  /** Platform name (`telegram`, `discord`, …); unknown names are allowed. */
  platform: string;
  /** The kind of chat. */
  chatType: ChatType;
  /** The platform's id of the chat (group, channel, DM conversation). */
  chatId?: string | null;
  /** The chat's display name. */
  chatName?: string | null;
  /** The sender's platform id. */
  userId?: string | null;
  /** The sender's display name. */
  userName?: string | null;
  /** The thread or topic id inside the chat. */
  threadId?: string | null;
  /** The chat's topic or description. */
  chatTopic?: string | null;
  /** An alternative id of the sender (e.g. a WhatsApp LID); preferred over `userId` for keys. */
  userIdAlt?: string | null;
  /** An alternative id of the chat. */
  chatIdAlt?: string | null;
  /** Whether the sender is a bot. */
  isBot?: boolean;
  /** The guild, workspace or server the chat belongs to. */
  scopeId?: string | null;
  /** The parent chat of a thread. */
  parentChatId?: string | null;
  /** The platform's id of the message that started this turn. */
  messageId?: string | null;
  /** Whether the sender holds a role that authorises them. */
  roleAuthorized?: boolean;
  /** The agent profile handling this chat (`default` or absent → `main`). */
  profile?: string | null;
}

const TEXT_FIELDS = [
  "chatId",
  "chatName",
  "userId",
  "userName",
  "threadId",
  "chatTopic",
  "userIdAlt",
  "chatIdAlt",
  "scopeId",
  "parentChatId",
  "messageId",
  "profile",
] as const;
const BOOLEAN_FIELDS = ["isBot", "roleAuthorized"] as const;

const nullableText = z.string().nullable().optional();
const optionalBoolean = z.boolean().optional();

const sourceSchema = z.looseObject({
  platform: z.string().min(1),
  chatType: z.enum(CHAT_TYPES),
  ...Object.fromEntries(TEXT_FIELDS.map((f) => [f, nullableText])),
  ...Object.fromEntries(BOOLEAN_FIELDS.map((f) => [f, optionalBoolean])),
});

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  let text: string;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function expectation(field: string): string {
  if (field === "platform") return 'must be a non-empty platform name such as "telegram"';
  if (field === "chatType") return `must be one of ${CHAT_TYPES.join(", ")}`;
  if ((BOOLEAN_FIELDS as readonly string[]).includes(field)) return "must be true or false";
  return "must be a string or null";
}

/**
 * Validates an untrusted value (typically parsed JSON) as a {@link SessionSource}.
 * Unknown platforms and extra keys are kept, so a stringify → parse → stringify
 * round trip is lossless; the result is a shallow copy of the input.
 *
 * @throws {InvalidInputError} naming the first wrong field and what it must be.
 * @example
 * ```ts
 * const source = parseSessionSource(JSON.parse('{"platform":"telegram","chatType":"dm","userId":"42"}'));
 * source.chatType; // "dm"
 * parseSessionSource({ platform: "telegram", chatType: "room" });
 * // throws: session source: chatType must be one of dm, group, channel, thread (got "room")
 * ```
 */
export function parseSessionSource(value: unknown): SessionSource {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidInputError(`session source: must be an object with at least platform and chatType (got ${describeValue(value)})`);
  }
  const result = sourceSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = String(issue?.path[0] ?? "");
    const got = (value as Record<string, unknown>)[field];
    throw new InvalidInputError(`session source: ${field} ${expectation(field)} (got ${describeValue(got)})`, {
      field,
    });
  }
  return { ...(value as SessionSource) };
}

function present(value: string | null | undefined): value is string {
  return typeof value === "string" && value.length > 0;
}

/**
 * A short human description of where a session lives, e.g. `DM with Alice`,
 * `group: Dev Chat, thread: 42`, `channel: #general`, `CLI terminal`. Uses names
 * when present, ids otherwise; the text is not sanitised (see `sanitizeUntrustedText`).
 *
 * @example
 * ```ts
 * describeSessionSource({ platform: "telegram", chatType: "group", chatName: "Dev Chat", threadId: "42" });
 * // "group: Dev Chat, thread: 42"
 * ```
 */
export function describeSessionSource(source: SessionSource): string {
  if (source.platform === "cli" || source.platform === "local") return "CLI terminal";
  const thread = present(source.threadId) ? `, thread: ${source.threadId}` : "";
  switch (source.chatType) {
    case "dm": {
      const who = present(source.userName) ? source.userName : present(source.userId) ? source.userId : "unknown user";
      return `DM with ${who}${thread}`;
    }
    case "group":
    case "channel": {
      const name = present(source.chatName) ? source.chatName : present(source.chatId) ? source.chatId : "unknown";
      return `${source.chatType}: ${name}${thread}`;
    }
    case "thread": {
      const name = present(source.chatName) ? source.chatName : present(source.threadId) ? source.threadId : present(source.chatId) ? source.chatId : "unknown";
      const parent = present(source.parentChatId) ? source.parentChatId : present(source.chatId) && source.chatId !== name ? source.chatId : null;
      return parent === null ? `thread: ${name}` : `thread: ${name} in ${parent}`;
    }
    default:
      return `${String(source.chatType)} chat`;
  }
}
