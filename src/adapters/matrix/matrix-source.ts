/**
 * Inbound mapping for Matrix: an `m.room.message` event (the raw JSON of the Client-Server
 * API, so the mapping depends on none of matrix-js-sdk's classes) and what the adapter knows
 * of its room → the gateway's {@link InboundMessage} and the facts {@link decideAnswer} needs.
 *
 * - a direct room (listed in the bot's `m.direct` account data, invited with `is_direct`, or
 *   with exactly two joined members) → `dm`, the room id as `chatId`
 *   (`agent:main:matrix:dm:<roomId>`); a room with more than two joined members is never
 *   direct, whatever `m.direct` says (a DM that others joined is a group);
 * - any other room → `group`, one session per user by default
 *   (`agent:main:matrix:group:<roomId>:<userId>`);
 * - a message in a thread (`m.relates_to.rel_type: "m.thread"`) in a group room → `thread`
 *   with the room as `chatId` and the thread root's event id as `threadId`, one shared session
 *   (`agent:main:matrix:thread:<roomId>:<rootEventId>`); in a direct room it stays `dm` with
 *   the `threadId`;
 * - text is the `body` without its reply fallback (the leading `> <@user> …` lines) and
 *   without a leading address to the bot (`Threadline: …`); an edit (`m.replace`) is a new
 *   message with the new text; `m.image`/`m.file`/`m.audio`/`m.video` become
 *   {@link InboundMedia} with the `mxc://` URI (nothing else: an `http(s)` URL in an event is
 *   dropped), MIME type, file name, declared size and `{ width, height, durationSeconds }`; a
 *   caption (spec v1.10: a `filename` and a `body` that differs from it) is the text; a voice
 *   note (`org.matrix.msc3245.voice`, or `m.voice`) gets `voice: true`. Matrix has no albums:
 *   each file is its own event;
 * - `m.notice` is what bots send: its sender counts as a bot (not answered unless `answerBots`).
 *
 * @module
 */
import type { InboundMedia, InboundMessage, SessionSource } from "../../gateway/index.js";
import type { AnswerCandidate } from "../chat/index.js";

/** The platform name of Matrix sources. */
export const MATRIX_PLATFORM = "matrix";

/** A room event as the Client-Server API sends it (the fields used). */
export interface MatrixRawEvent {
  event_id: string;
  type: string;
  sender: string;
  room_id?: string;
  origin_server_ts?: number;
  state_key?: string;
  content: Record<string, unknown>;
  unsigned?: Record<string, unknown>;
}

/** What the mapping needs of the room an event was sent in. */
export interface MatrixRoomFacts {
  roomId: string;
  /** `m.room.name`, else the canonical alias, else null. */
  name: string | null;
  /** `m.room.topic`. */
  topic: string | null;
  /** A direct room (see the module comment): never one with more than two joined members. */
  direct: boolean;
  /** Joined members → display name (null: none set). */
  members: ReadonlyMap<string, string | null>;
}

/** The bot's identity. */
export interface MatrixBotFacts {
  userId: string;
  /** The bot's display name in the room, else its global one (mentions by name), else null. */
  displayName: string | null;
}

/** What the adapter found out about the event's relations (it may have had to look them up). */
export interface MatrixRelationFacts {
  /** The event replied to was sent by the bot. */
  repliesToBot: boolean;
  /** The thread's root was sent by the bot, or the bot has posted in the thread. */
  inBotThread: boolean;
}

/** A Matrix event mapped for the gateway, with what the answer rules need. */
export interface MappedMatrixMessage {
  inbound: InboundMessage;
  candidate: AnswerCandidate;
}

/** The relations of a message: the event it replies to, its thread root, the event it edits. */
export interface MatrixRelations {
  replyTo: string | null;
  threadRoot: string | null;
  /** The thread relation is only a fallback (`is_falling_back`): the message is not a real reply. */
  replyIsFallback: boolean;
  edits: string | null;
}

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** Reads `m.relates_to` of a message's content. */
export function matrixRelations(content: Record<string, unknown>): MatrixRelations {
  const relates = record(content["m.relates_to"]);
  const inReplyTo = text(record(relates?.["m.in_reply_to"])?.["event_id"]);
  const relType = text(relates?.["rel_type"]);
  const target = text(relates?.["event_id"]);
  return {
    replyTo: inReplyTo,
    threadRoot: relType === "m.thread" ? target : null,
    replyIsFallback: relType === "m.thread" && relates?.["is_falling_back"] === true,
    edits: relType === "m.replace" ? target : null,
  };
}

/**
 * Removes a reply fallback from a body: the leading lines quoting the replied-to message
 * (`> <@alice:example.org> what she said`) and the blank line after them.
 *
 * @example
 * ```ts
 * stripReplyFallback("> <@alice:example.org> hi\n\nhello back"); // "hello back"
 * ```
 */
export function stripReplyFallback(body: string): string {
  const lines = body.split("\n");
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith(">")) i += 1;
  if (i === 0 || !lines[0]!.startsWith("> <")) return body;
  if (i < lines.length && lines[i]!.trim() === "") i += 1;
  return lines.slice(i).join("\n");
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
}

/** Whether a message's content addresses the bot (intentional mention, user id, display name or a pill). */
export function mentionsMatrixBot(content: Record<string, unknown>, body: string, bot: MatrixBotFacts): boolean {
  const mentions = record(content["m.mentions"]);
  const userIds = mentions?.["user_ids"];
  if (Array.isArray(userIds) && userIds.includes(bot.userId)) return true;
  const lower = body.toLowerCase();
  if (lower.includes(bot.userId.toLowerCase())) return true;
  const formatted = text(content["formatted_body"]);
  if (formatted !== null) {
    // The reply fallback (<mx-reply>) quotes the replied-to author: not a mention.
    const pill = formatted.replace(/<mx-reply>[\s\S]*?<\/mx-reply>/giu, "").toLowerCase();
    if (pill.includes(`matrix.to/#/${bot.userId.toLowerCase()}`) || pill.includes(`matrix.to/#/${encodeURIComponent(bot.userId).toLowerCase()}`)) return true;
  }
  const name = bot.displayName?.trim() ?? "";
  if (name.length >= 2 && new RegExp(`(^|[^\\p{L}\\p{N}_])${escapeRegExp(name)}($|[^\\p{L}\\p{N}_])`, "iu").test(body)) return true;
  return false;
}

/** The body without a leading address to the bot (`Threadline: `, `@threadline:example.org `). */
function withoutAddress(body: string, bot: MatrixBotFacts): string {
  for (const name of [bot.userId, bot.displayName]) {
    if (!name) continue;
    const match = new RegExp(`^\\s*${escapeRegExp(name)}(?:[:,]\\s*|\\s+)`, "iu").exec(body);
    if (match !== null && match[0].length < body.length) return body.slice(match[0].length);
  }
  return body;
}

/** The kind of attachment of a media `msgtype`, or null for text kinds. */
function mediaKind(msgtype: string): string | null {
  switch (msgtype) {
    case "m.image":
      return "image";
    case "m.audio":
      return "audio";
    case "m.video":
      return "video";
    case "m.file":
      return "file";
    default:
      return null;
  }
}

/** A number the event's `info` declares (a size, a dimension, a duration), when it is one. */
function count(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** The attachment of a media message: the `mxc://` URI only, what `info` declares, the caption, whether it is a voice note. */
function mediaOf(kind: string, content: Record<string, unknown>, body: string): InboundMedia {
  const info = record(content["info"]);
  const fileName = text(content["filename"]) ?? body;
  const caption = text(content["filename"]) !== null && body !== fileName && body.trim() !== "" ? body : null;
  const url = text(content["url"]);
  const media: InboundMedia = { kind, url: url?.startsWith("mxc://") ? url : null, mimeType: text(info?.["mimetype"]), fileName: fileName || null, caption };
  const size = count(info?.["size"]);
  if (size !== null) media.size = size;
  if (kind === "audio" && (content["org.matrix.msc3245.voice"] !== undefined || content["m.voice"] !== undefined)) media.voice = true;
  const meta: Record<string, unknown> = {};
  const width = count(info?.["w"]);
  const height = count(info?.["h"]);
  const duration = count(info?.["duration"]);
  if (width !== null && height !== null) Object.assign(meta, { width, height });
  if (duration !== null) meta["durationSeconds"] = duration / 1000;
  if (Object.keys(meta).length > 0) media.meta = meta;
  return media;
}

/** The localpart of a user id (`@alice:example.org` → `alice`). */
export function matrixLocalpart(userId: string): string {
  const match = /^@([^:]+):/u.exec(userId);
  return match ? match[1]! : userId;
}

/**
 * Maps one `m.room.message` event. Returns `null` for anything else and for a message with
 * no text and no attachment.
 */
export function mapMatrixEvent(event: MatrixRawEvent, room: MatrixRoomFacts, bot: MatrixBotFacts, relations: MatrixRelationFacts): MappedMatrixMessage | null {
  if (event.type !== "m.room.message") return null;
  const rel = matrixRelations(event.content);
  // An edit carries the new text in m.new_content (its relation is the edited event).
  const content = rel.edits !== null ? (record(event.content["m.new_content"]) ?? event.content) : event.content;
  const msgtype = text(content["msgtype"]) ?? "";
  let body = text(content["body"]) ?? "";
  if (rel.replyTo !== null && !rel.replyIsFallback) body = stripReplyFallback(body);
  const media: InboundMedia[] = [];
  const kind = mediaKind(msgtype);
  if (kind !== null) {
    media.push(mediaOf(kind, content, body));
    body = media[0]!.caption ?? "";
  }
  const mentionsBot = mentionsMatrixBot(content, body, bot) || (rel.edits !== null && mentionsMatrixBot(event.content, text(event.content["body"]) ?? "", bot));
  const said = kind === null ? withoutAddress(body, bot) : body;
  if (said.trim() === "" && media.length === 0) return null;

  const threadId = rel.threadRoot;
  const chatType = room.direct ? "dm" : threadId !== null ? "thread" : "group";
  const userName = room.members.get(event.sender) ?? matrixLocalpart(event.sender);
  const source: SessionSource = {
    platform: MATRIX_PLATFORM,
    chatType,
    chatId: room.roomId,
    chatName: room.name ?? (room.direct ? userName : null),
    chatTopic: room.topic,
    userId: event.sender,
    userName,
    threadId,
    isBot: msgtype === "m.notice",
    messageId: event.event_id,
  };
  if (chatType === "thread") source.parentChatId = room.roomId;
  const inbound: InboundMessage = { source, text: said, messageId: event.event_id };
  if (media.length > 0) inbound.media = media;
  if (rel.edits !== null) inbound.editOf = rel.edits;
  return {
    inbound,
    candidate: {
      chatType,
      chatId: room.roomId,
      userId: event.sender,
      fromSelf: event.sender === bot.userId,
      fromBot: msgtype === "m.notice",
      mentionsBot,
      repliesToBot: relations.repliesToBot,
      inBotThread: threadId !== null && relations.inBotThread,
    },
  };
}
