/**
 * Inbound mapping for Slack: an Events API `message` or `app_mention` event → the
 * gateway's {@link InboundMessage} and the facts {@link decideAnswer} needs.
 *
 * - conversation kind (`channel_type`, else what `conversations.info` said, else the id's
 *   first letter): `im` → `dm`; `mpim` and private channels (`group`) → `group`; public
 *   channels → `channel`.
 * - a message in a thread (`thread_ts` other than its own `ts`) takes `thread_ts` as
 *   `threadId`, so a thread is one shared session
 *   (`agent:main:slack:channel:<channelId>:<thread_ts>`); top-level channel messages are
 *   per user (`agent:main:slack:channel:<channelId>:<userId>`); DMs per conversation
 *   (`agent:main:slack:dm:<D…>`), under the default key settings.
 * - the workspace (`team`) is the source's `scopeId` (the guildId); the message's
 *   `ts` is its `messageId` (unique within its channel, and what Slack resends on retries).
 * - a leading mention of the bot (`<@U_BOT> /new`) is dropped from the text, so slash
 *   commands work after a mention (Slack's client takes a message starting with `/` for
 *   one of its own commands).
 * - shared files become `InboundMedia`: kind from the MIME type, name, size, the Slack file id
 *   and its `url_private_download` (else `url_private`), which only opens with the bot token
 *   (the adapter's `fetchMedia` sends it, and only to Slack's file host); an audio clip recorded
 *   in Slack (`subtype: "slack_audio"`) is a voice note (`voice: true`).
 *
 * @module
 */
import type { InboundMedia, InboundMessage, SessionSource } from "../../gateway/index.js";
import { mediaKindOf, type AnswerCandidate } from "../chat/index.js";

/** The platform name of Slack sources. */
export const SLACK_PLATFORM = "slack";

/** A file shared in a message (the fields the adapter reads). */
export interface SlackFile {
  id?: string;
  name?: string;
  title?: string;
  mimetype?: string;
  /** `slack_audio` for an audio clip recorded in Slack (a voice note), `slack_video` for a video clip. */
  subtype?: string;
  size?: number;
  url_private?: string;
  url_private_download?: string;
  duration_ms?: number;
  original_w?: number;
  original_h?: number;
}

/** A `message` or `app_mention` event (the fields the adapter reads). */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel?: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts?: string;
  thread_ts?: string;
  parent_user_id?: string;
  team?: string;
  files?: SlackFile[];
}

/** Who the bot is (from `auth.test`). */
export interface SlackBotIdentity {
  /** The bot user's id (`U…`): mentions are `<@userId>`. */
  userId: string;
  /** The bot's id (`B…`): `bot_id` of its own messages. */
  botId: string | null;
  teamId: string | null;
}

/** What `users.info` and `conversations.info` told about the sender and the conversation (all optional). */
export interface SlackLookups {
  userName?: string | null;
  chatName?: string | null;
  /** The channel's purpose (else its topic). */
  chatTopic?: string | null;
  /** `im`, `mpim`, `group` (private channel) or `channel`. */
  chatKind?: string | null;
}

/** A Slack message mapped for the gateway, with what the answer rules need. */
export interface MappedSlackMessage {
  inbound: InboundMessage;
  candidate: AnswerCandidate;
}

/** Message subtypes that carry something a person said (others: joins, edits, deletions, topic changes, …). */
const SPOKEN_SUBTYPES = new Set(["", "file_share", "thread_broadcast", "bot_message", "me_message"]);

/** The conversation kind of an event: `channel_type`, else the lookup, else the id's first letter. */
export function slackChatKind(event: SlackMessageEvent, lookups: SlackLookups = {}): string {
  if (event.channel_type !== undefined && event.channel_type !== "") return event.channel_type;
  if (lookups.chatKind) return lookups.chatKind;
  const first = (event.channel ?? "").charAt(0);
  return first === "D" ? "im" : first === "G" ? "group" : "channel";
}

/** Whether the event is one the adapter may map (a person or bot said something). */
export function isSpokenSlackMessage(event: SlackMessageEvent): boolean {
  return (
    (event.type === "message" || event.type === "app_mention") &&
    SPOKEN_SUBTYPES.has(event.subtype ?? "") &&
    typeof event.channel === "string" &&
    typeof event.ts === "string"
  );
}

/** `{ durationSeconds, width, height }` of what Slack told about a file, without the absent ones. */
function slackMeta(file: SlackFile): Record<string, unknown> | null {
  const meta: Record<string, unknown> = {};
  if (typeof file.duration_ms === "number") meta["durationSeconds"] = Math.round(file.duration_ms / 100) / 10;
  if (typeof file.original_w === "number") meta["width"] = file.original_w;
  if (typeof file.original_h === "number") meta["height"] = file.original_h;
  return Object.keys(meta).length > 0 ? meta : null;
}

/**
 * A shared file as an attachment: its Slack id and private download URL (opened only with the
 * bot token, on Slack's file host), the declared type, name and size; a Slack audio clip is a
 * voice note.
 */
export function slackMedia(file: SlackFile, caption: string | null): InboundMedia {
  const media: InboundMedia = {
    kind: mediaKindOf(file.mimetype),
    url: file.url_private_download ?? file.url_private ?? null,
    fileId: file.id ?? null,
    mimeType: file.mimetype ?? null,
    fileName: file.name ?? file.title ?? null,
    caption,
    size: typeof file.size === "number" ? file.size : null,
    meta: slackMeta(file),
  };
  if (file.subtype === "slack_audio") {
    media.kind = "audio";
    media.voice = true;
  }
  return media;
}

/**
 * Maps one event. Returns `null` for events that are not a message someone said (edits,
 * deletions, joins, …) or that carry neither text nor files.
 *
 * @param me the bot (from `auth.test`): its ids decide mentions and own messages.
 * @param botThreads `<channel>:<thread_ts>` of threads the bot started or posted in.
 */
export function mapSlackEvent(
  event: SlackMessageEvent,
  me: SlackBotIdentity,
  lookups: SlackLookups = {},
  options: { botThreads?: ReadonlySet<string>; teamId?: string | null } = {},
): MappedSlackMessage | null {
  if (!isSpokenSlackMessage(event)) return null;
  const rawText = event.text ?? "";
  const media = (event.files ?? []).map((file) => slackMedia(file, rawText === "" ? null : rawText));
  if (rawText.trim() === "" && media.length === 0) return null;

  const chatId = event.channel!;
  const kind = slackChatKind(event, lookups);
  const chatType = kind === "im" ? "dm" : kind === "channel" ? "channel" : "group";
  const threadId = event.thread_ts !== undefined && event.thread_ts !== "" && event.thread_ts !== event.ts ? event.thread_ts : null;
  const fromBot = event.bot_id !== undefined || event.subtype === "bot_message";
  const fromSelf = (event.user !== undefined && event.user === me.userId) || (me.botId !== null && event.bot_id === me.botId);
  const userId = event.user ?? event.bot_id ?? "";
  const mention = `<@${me.userId}>`;
  const mentionsBot = event.type === "app_mention" || rawText.includes(mention);
  const inBotThread = threadId !== null && (event.parent_user_id === me.userId || (options.botThreads?.has(`${chatId}:${threadId}`) ?? false));
  // A leading mention is an address, not part of what the user says: `<@U_BOT> /new` is the command /new.
  const text = rawText.startsWith(mention) ? rawText.slice(mention.length).replace(/^[\s,:]+/u, "") : rawText.trimStart();

  const source: SessionSource = {
    platform: SLACK_PLATFORM,
    chatType,
    chatId,
    chatName: lookups.chatName ?? null,
    chatTopic: lookups.chatTopic ?? null,
    userId: userId === "" ? null : userId,
    userName: lookups.userName ?? null,
    threadId,
    scopeId: event.team ?? options.teamId ?? me.teamId ?? null,
    isBot: fromBot,
    messageId: event.ts!,
  };
  const inbound: InboundMessage = { source, text, messageId: event.ts! };
  if (media.length > 0) inbound.media = media;
  return {
    inbound,
    candidate: { chatType, chatId, userId, fromSelf, fromBot, mentionsBot, repliesToBot: false, inBotThread },
  };
}
