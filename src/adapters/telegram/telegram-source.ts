/**
 * Inbound mapping for Telegram: a Bot API `Message` → the gateway's {@link InboundMessage}
 * (source, text, media, album) and the facts {@link decideAnswer} needs.
 *
 * - chat type `private` → `dm`; `group`/`supergroup` → `group`; `channel` → `channel`.
 * - a forum topic message (`is_topic_message` with `message_thread_id`) keeps the group's
 *   chat id and takes the topic as `threadId`, so a topic is one shared session
 *   (`agent:main:telegram:group:<chatId>:<topicId>`), while plain group messages are per
 *   user (`agent:main:telegram:group:<chatId>:<userId>`) and DMs per chat
 *   (`agent:main:telegram:dm:<chatId>`), under the default key settings.
 * - photos (the largest size a bot may download), voice notes (`voice: true`), audio, video,
 *   video notes, animations, stickers and documents become `InboundMedia` with the Telegram
 *   `file_id`, the declared type, name and size (`meta`: duration, width, height; never a URL:
 *   Telegram's file URLs carry the bot token); `media_group_id` is the album.
 *
 * @module
 */
import type { Message, MessageEntity, UserFromGetMe } from "grammy/types";
import type { InboundMedia, InboundMessage, SessionSource } from "../../gateway/index.js";
import type { AnswerCandidate } from "../chat/index.js";

/** The platform name of Telegram sources. */
export const TELEGRAM_PLATFORM = "telegram";

/** A Telegram message mapped for the gateway, with what the answer rules need. */
export interface MappedTelegramMessage {
  inbound: InboundMessage;
  candidate: AnswerCandidate;
}

function fullName(user: { first_name: string; last_name?: string; username?: string }): string {
  const name = [user.first_name, user.last_name].filter((p) => p !== undefined && p !== "").join(" ");
  return name !== "" ? name : (user.username ?? "");
}

function entityText(text: string, entity: MessageEntity): string {
  return text.slice(entity.offset, entity.offset + entity.length);
}

/** The most a bot may download from the Bot API (`getFile`): 20 MB. */
export const TELEGRAM_DOWNLOAD_LIMIT = 20 * 1024 * 1024;

/** `{ durationSeconds, width, height }` of what Telegram told, without the absent ones. */
function metaOf(facts: { duration?: number; width?: number; height?: number }): Record<string, unknown> | null {
  const meta: Record<string, unknown> = {};
  if (facts.duration !== undefined) meta["durationSeconds"] = facts.duration;
  if (facts.width !== undefined) meta["width"] = facts.width;
  if (facts.height !== undefined) meta["height"] = facts.height;
  return Object.keys(meta).length > 0 ? meta : null;
}

/** The largest size of a photo that a bot may download (else the smallest one, which is then refused with the reason). */
function photoSize<T extends { file_size?: number; width: number; height: number }>(sizes: readonly T[]): T {
  const fitting = sizes.filter((s) => s.file_size === undefined || s.file_size <= TELEGRAM_DOWNLOAD_LIMIT);
  const pool = fitting.length > 0 ? fitting : [...sizes].sort((a, b) => (a.file_size ?? 0) - (b.file_size ?? 0)).slice(0, 1);
  return pool.reduce((best, s) => (s.width * s.height > best.width * best.height ? s : best));
}

function mediaOf(message: Message): InboundMedia[] {
  const caption = message.caption ?? null;
  const out: InboundMedia[] = [];
  const add = (
    kind: string,
    file: { file_id: string; file_size?: number; duration?: number; width?: number; height?: number },
    facts: { mimeType: string | null; fileName?: string | null; voice?: boolean; caption?: string | null },
  ): void => {
    const media: InboundMedia = {
      kind,
      fileId: file.file_id,
      mimeType: facts.mimeType,
      fileName: facts.fileName ?? null,
      caption: facts.caption === undefined ? caption : facts.caption,
      size: file.file_size ?? null,
      meta: metaOf(file),
    };
    if (facts.voice === true) media.voice = true;
    out.push(media);
  };
  if (message.photo !== undefined && message.photo.length > 0) add("image", photoSize(message.photo), { mimeType: "image/jpeg" });
  if (message.voice !== undefined) add("audio", message.voice, { mimeType: message.voice.mime_type ?? "audio/ogg", voice: true });
  if (message.audio !== undefined) add("audio", message.audio, { mimeType: message.audio.mime_type ?? null, fileName: message.audio.file_name ?? null });
  if (message.video !== undefined) add("video", message.video, { mimeType: message.video.mime_type ?? null, fileName: message.video.file_name ?? null });
  if (message.video_note !== undefined)
    add("video", { ...message.video_note, width: message.video_note.length, height: message.video_note.length }, { mimeType: "video/mp4" });
  if (message.animation !== undefined) {
    add("video", message.animation, { mimeType: message.animation.mime_type ?? null, fileName: message.animation.file_name ?? null });
  } else if (message.document !== undefined) {
    add("file", message.document, { mimeType: message.document.mime_type ?? null, fileName: message.document.file_name ?? null });
  }
  if (message.sticker !== undefined) {
    const sticker = message.sticker;
    add("image", sticker, {
      mimeType: sticker.is_animated ? "application/x-tgsticker" : sticker.is_video ? "video/webm" : "image/webp",
      caption: sticker.emoji ?? null,
    });
  }
  return out;
}

/**
 * Maps one message (a `message`, `edited_message`, `channel_post` or `edited_channel_post`).
 * Returns `null` for service messages (members joining, topics created, pins, …), which
 * carry neither text nor media.
 *
 * @param me the bot (from `getMe`): its id and username decide mentions and replies.
 * @param botTopics `<chatId>:<threadId>` of forum topics the bot opened or posted in.
 */
export function mapTelegramMessage(
  message: Message,
  me: UserFromGetMe,
  options: { edited?: boolean; botTopics?: ReadonlySet<string> } = {},
): MappedTelegramMessage | null {
  const rawText = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities ?? [];
  const media = mediaOf(message);
  if (rawText === "" && media.length === 0) return null;

  const chat = message.chat;
  const chatId = String(chat.id);
  const chatType = chat.type === "private" ? "dm" : chat.type === "channel" ? "channel" : "group";
  const topic = chat.type === "supergroup" && chat.is_forum === true && message.is_topic_message === true && message.message_thread_id !== undefined;
  const threadId = topic ? String(message.message_thread_id) : null;
  const from = message.from;
  const senderChat = message.sender_chat;
  const userId = from !== undefined ? String(from.id) : senderChat !== undefined ? String(senderChat.id) : "";
  const userName = from !== undefined ? fullName(from) : senderChat !== undefined && "title" in senderChat ? senderChat.title : null;
  const chatName = chat.type === "private" ? fullName(chat) : chat.title;

  const username = me.username.toLowerCase();
  let mentionsBot = false;
  let addressedCommand = false;
  for (const entity of entities) {
    const value = entityText(rawText, entity);
    if (entity.type === "mention" && value.slice(1).toLowerCase() === username) mentionsBot = true;
    if (entity.type === "text_mention" && entity.user?.id === me.id) mentionsBot = true;
    if (entity.type === "bot_command" && entity.offset === 0) {
      const at = value.indexOf("@");
      // `/new` in a group goes to every bot; `/new@otherbot` is not ours.
      if (at < 0 || value.slice(at + 1).toLowerCase() === username) addressedCommand = true;
    }
  }
  const replied = message.reply_to_message;
  const topicCreatedByBot = replied?.forum_topic_created !== undefined && replied.from?.id === me.id;
  const repliesToBot = replied !== undefined && replied.forum_topic_created === undefined && replied.from?.id === me.id;
  const inBotThread = threadId !== null && (topicCreatedByBot || (options.botTopics?.has(`${chatId}:${threadId}`) ?? false));

  // A leading `@botname` is an address, not part of what the user says.
  const text = rawText.replace(new RegExp(`^@${me.username.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&")}\\b[\\s,:]*`, "iu"), "");

  const source: SessionSource = {
    platform: TELEGRAM_PLATFORM,
    chatType,
    chatId,
    chatName: chatName ?? null,
    userId: userId === "" ? null : userId,
    userName: userName ?? null,
    threadId,
    isBot: from?.is_bot ?? false,
    messageId: String(message.message_id),
  };
  // An edit is a new message in this release: it gets its own id (the edit time), so it is not taken for a repeat.
  const messageId = options.edited === true ? `${message.message_id}:edited:${message.edit_date ?? 0}` : String(message.message_id);
  const inbound: InboundMessage = { source, text, messageId };
  if (media.length > 0) inbound.media = media;
  if (message.media_group_id !== undefined) inbound.albumId = message.media_group_id;
  if (options.edited === true) inbound.editOf = String(message.message_id);
  return {
    inbound,
    candidate: {
      chatType,
      chatId,
      userId,
      fromSelf: from?.id === me.id,
      fromBot: from?.is_bot ?? false,
      mentionsBot: mentionsBot || addressedCommand,
      repliesToBot,
      inBotThread,
    },
  };
}
