/**
 * Inbound mapping for Discord: a gateway `MESSAGE_CREATE` (as plain facts, so the mapping
 * does not depend on discord.js's classes or caches) → the gateway's {@link InboundMessage}
 * and the facts {@link decideAnswer} needs.
 *
 * - a DM channel → `dm` (`agent:main:discord:dm:<dmChannelId>`);
 * - a guild text channel → `group`, an announcement channel → `channel`, each per user by
 *   default (`agent:main:discord:group:<channelId>:<userId>`);
 * - a thread (public, private or announcement thread, forum post) → `thread` with the parent
 *   channel as `chatId` and the thread channel as `threadId`, one shared session by default
 *   (`agent:main:discord:thread:<parentId>:<threadId>`);
 * - the guild id is `scopeId`, the channel topic `chatTopic`, the author's global (display)
 *   name, else username, `userName`; attachments become `InboundMedia` with their CDN URL,
 *   type, name, size and description (a voice message, flag IS_VOICE_MESSAGE or a waveform,
 *   is a voice note: `voice: true`).
 *
 * @module
 */
import type { ChatType, InboundMedia, InboundMessage, SessionSource } from "../../gateway/index.js";
import { mediaKindOf, type AnswerCandidate } from "../chat/index.js";

/** The platform name of Discord sources. */
export const DISCORD_PLATFORM = "discord";

/** Discord channel types the adapter tells apart (Discord's documented numbers). */
export const DISCORD_CHANNEL_TYPES = Object.freeze({
  guildText: 0,
  dm: 1,
  groupDm: 3,
  guildAnnouncement: 5,
  announcementThread: 10,
  publicThread: 11,
  privateThread: 12,
  guildForum: 15,
});

const THREAD_TYPES: ReadonlySet<number> = new Set([
  DISCORD_CHANNEL_TYPES.announcementThread,
  DISCORD_CHANNEL_TYPES.publicThread,
  DISCORD_CHANNEL_TYPES.privateThread,
]);

/** What the mapping needs of the channel a message was posted in. */
export interface DiscordChannelFacts {
  id: string;
  /** Discord's channel type number ({@link DISCORD_CHANNEL_TYPES}). */
  type: number;
  name?: string | null;
  topic?: string | null;
  /** The guild (absent for DMs). */
  guildId?: string | null;
  /** Threads: the channel the thread belongs to. */
  parentId?: string | null;
  parentName?: string | null;
  parentTopic?: string | null;
  /** Threads: who started it. */
  ownerId?: string | null;
  /** Threads: the bot is a member (it joined, was added, or posted). */
  botIsMember?: boolean;
}

/** An attachment of a message (Discord's `attachment` object, the fields used). */
export interface DiscordAttachmentFacts {
  id: string;
  filename: string;
  url: string;
  content_type?: string | null;
  description?: string | null;
  size?: number | null;
  width?: number | null;
  height?: number | null;
  /** Voice messages: the length of the recording. */
  duration_secs?: number | null;
  /** Voice messages: the base64 waveform Discord shows. */
  waveform?: string | null;
}

/** The message flag of a voice message (Discord's IS_VOICE_MESSAGE, 1 << 13). */
export const DISCORD_VOICE_MESSAGE_FLAG = 1 << 13;

/** What the mapping needs of a message (the fields of Discord's `message` object used). */
export interface DiscordMessageFacts {
  id: string;
  channel_id: string;
  guild_id?: string | null;
  content: string;
  author: { id: string; username: string; global_name?: string | null; bot?: boolean };
  /** Users mentioned (`<@id>`). */
  mentions?: ReadonlyArray<{ id: string }>;
  attachments?: readonly DiscordAttachmentFacts[];
  /** The message's flags (IS_VOICE_MESSAGE: {@link DISCORD_VOICE_MESSAGE_FLAG}). */
  flags?: number | null;
  /** The message replied to (`message_reference`, and the referenced message's author when known). */
  referencedAuthorId?: string | null;
}

/** A Discord message mapped for the gateway, with what the answer rules need. */
export interface MappedDiscordMessage {
  inbound: InboundMessage;
  candidate: AnswerCandidate;
}

function mediaOf(message: DiscordMessageFacts): InboundMedia[] {
  const voiceMessage = ((message.flags ?? 0) & DISCORD_VOICE_MESSAGE_FLAG) !== 0;
  return (message.attachments ?? []).map((a) => {
    const mimeType = a.content_type ?? null;
    const meta: Record<string, unknown> = {};
    if (typeof a.duration_secs === "number") meta["durationSeconds"] = a.duration_secs;
    if (typeof a.width === "number") meta["width"] = a.width;
    if (typeof a.height === "number") meta["height"] = a.height;
    const media: InboundMedia = {
      kind: mediaKindOf(mimeType),
      url: a.url,
      fileId: a.id,
      mimeType,
      fileName: a.filename,
      caption: a.description ?? null,
      size: typeof a.size === "number" ? a.size : null,
      meta: Object.keys(meta).length > 0 ? meta : null,
    };
    // A voice message carries one audio attachment with its waveform.
    if (voiceMessage || (typeof a.waveform === "string" && a.waveform !== "")) {
      media.kind = "audio";
      media.voice = true;
    }
    return media;
  });
}

/** The chat type of a channel type. */
export function discordChatType(channelType: number): ChatType {
  if (channelType === DISCORD_CHANNEL_TYPES.dm || channelType === DISCORD_CHANNEL_TYPES.groupDm) return "dm";
  if (THREAD_TYPES.has(channelType)) return "thread";
  if (channelType === DISCORD_CHANNEL_TYPES.guildAnnouncement) return "channel";
  return "group";
}

/**
 * Maps one message. Returns `null` when there is nothing to answer: no text and no
 * attachments (a system message, or a guild message whose content the Message Content
 * intent would have carried).
 *
 * @param botId the bot's user id: its mentions, replies and threads address it.
 * @param botThreads thread ids the bot created or posted in during this run.
 */
export function mapDiscordMessage(
  message: DiscordMessageFacts,
  channel: DiscordChannelFacts,
  botId: string,
  options: { botThreads?: ReadonlySet<string> } = {},
): MappedDiscordMessage | null {
  const media = mediaOf(message);
  const mentionPattern = new RegExp(`<@!?${botId}>`, "gu");
  const mentionsBot = (message.mentions ?? []).some((u) => u.id === botId) || mentionPattern.test(message.content);
  // A leading `<@bot>` is an address, not part of what the user says.
  const text = message.content.replace(new RegExp(`^\\s*<@!?${botId}>[\\s,:]*`, "u"), "");
  if (text.trim() === "" && media.length === 0) return null;

  const guildId = message.guild_id ?? channel.guildId ?? null;
  const chatType = guildId === null ? "dm" : discordChatType(channel.type);
  const thread = chatType === "thread";
  const chatId = thread ? (channel.parentId ?? channel.id) : message.channel_id;
  const author = message.author;
  const source: SessionSource = {
    platform: DISCORD_PLATFORM,
    chatType,
    chatId,
    chatName: thread ? (channel.parentName ?? channel.name ?? null) : chatType === "dm" ? (author.global_name ?? author.username) : (channel.name ?? null),
    chatTopic: (thread ? channel.parentTopic : channel.topic) ?? null,
    userId: author.id,
    userName: author.global_name ?? author.username,
    threadId: thread ? channel.id : null,
    isBot: author.bot === true,
    scopeId: guildId,
    messageId: message.id,
  };
  if (thread) source.parentChatId = chatId;
  const inbound: InboundMessage = { source, text, messageId: message.id };
  if (media.length > 0) inbound.media = media;
  const inBotThread = thread && (channel.ownerId === botId || channel.botIsMember === true || (options.botThreads?.has(channel.id) ?? false));
  return {
    inbound,
    candidate: {
      chatType,
      // Allowlists name the channel people see: a thread's parent (or the thread itself, see the adapter).
      chatId,
      userId: author.id,
      fromSelf: author.id === botId,
      fromBot: author.bot === true,
      mentionsBot,
      repliesToBot: message.referencedAuthorId === botId,
      inBotThread,
    },
  };
}
