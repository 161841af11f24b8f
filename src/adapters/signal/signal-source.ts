/**
 * Inbound mapping for Signal: a message of the signal-cli REST API
 * (bbernhard/signal-cli-rest-api; `{ envelope, account }` as its receive WebSocket and
 * its receive endpoint deliver them, the envelope being signal-cli's JSON output) → the
 * gateway's {@link InboundMessage} and the facts {@link decideAnswer} needs.
 *
 * - a message without `groupInfo` → `dm`: `chatId` is the sender's number (what replies go
 *   to), or the sender's UUID when the number is hidden; `userId` the same, `userIdAlt` the
 *   UUID (the gateway records number ↔ UUID as one person, so a sender whose number becomes
 *   hidden keeps their session): `agent:main:signal:dm:<number>`;
 * - a group (V2) message → `group`: `chatId` is the sendable `group.<base64>` id, computed as
 *   the REST API does (`"group." + base64(internal id)`), `chatIdAlt` the internal id of the
 *   envelope's `groupInfo.groupId`; one session per person by default
 *   (`agent:main:signal:group:group.<base64>:<number>`);
 * - the message id is the message's timestamp (Signal's id of a message, with its author);
 *   attachments become `InboundMedia` with the attachment id as `fileId` (no URL: the adapter
 *   fetches it from the configured REST API, `SignalAdapter.fetchMedia`), the declared
 *   size, type, file name, caption and `{ width, height }`; a voice note gets `voice: true`
 *   (`voiceNote`, which older signal-cli releases write; else an audio attachment without a
 *   file name, which is how Signal apps send a recording made in the chat). Several
 *   attachments of one message (an album) stay one message; mentions (U+FFFC in the text)
 *   become `@name`, a leading mention of the bot is dropped; an edit is a new message with
 *   `editOf` = the edited message's timestamp.
 * - sync messages (what the account's other devices sent), receipts, typing notices,
 *   reactions, deletions, calls and stories map to nothing.
 *
 * @module
 */
import type { InboundMedia, InboundMessage, SessionSource } from "../../gateway/index.js";
import { mediaKindOf, type AnswerCandidate } from "../chat/index.js";

/** The platform name of Signal sources. */
export const SIGNAL_PLATFORM = "signal";

/** The prefix of the group ids the REST API sends to (`group.<base64 of the internal id>`). */
export const SIGNAL_GROUP_PREFIX = "group.";

/** The MIME type of the attachment Signal clients put the full text of a long message in. */
export const SIGNAL_LONG_TEXT_TYPE = "text/x-signal-plain";

/** The placeholder signal-cli leaves in the text where a mention is. */
const MENTION_PLACEHOLDER = "\uFFFC";

/** An attachment of a data message (signal-cli's JSON). */
export interface SignalAttachment {
  contentType?: string | null;
  filename?: string | null;
  /** The REST API serves it at `GET /v1/attachments/{id}`. */
  id?: string | null;
  size?: number | null;
  caption?: string | null;
  width?: number | null;
  height?: number | null;
  /** A voice note recorded in the chat (written by older signal-cli releases). */
  voiceNote?: boolean | null;
}

/** A mention in a data message: the range (UTF-16 offsets) holds U+FFFC. */
export interface SignalMention {
  name?: string | null;
  number?: string | null;
  uuid?: string | null;
  start: number;
  length: number;
}

/** The message a data message quotes (a reply). `id` is the quoted message's timestamp. */
export interface SignalQuote {
  id: number;
  author?: string | null;
  authorNumber?: string | null;
  authorUuid?: string | null;
  text?: string | null;
}

/** The content of a message (signal-cli's `dataMessage`), the fields used. */
export interface SignalDataMessage {
  timestamp?: number;
  message?: string | null;
  groupInfo?: { groupId?: string | null; groupName?: string | null; revision?: number; type?: string | null } | null;
  attachments?: SignalAttachment[] | null;
  mentions?: SignalMention[] | null;
  quote?: SignalQuote | null;
  reaction?: unknown;
  remoteDelete?: unknown;
  sticker?: unknown;
  [field: string]: unknown;
}

/** signal-cli's message envelope (the REST API passes it through). */
export interface SignalEnvelope {
  source?: string | null;
  sourceNumber?: string | null;
  sourceUuid?: string | null;
  sourceName?: string | null;
  sourceDevice?: number | null;
  timestamp: number;
  dataMessage?: SignalDataMessage | null;
  editMessage?: { targetSentTimestamp: number; dataMessage?: SignalDataMessage | null } | null;
  syncMessage?: unknown;
  receiptMessage?: unknown;
  typingMessage?: unknown;
  callMessage?: unknown;
  storyMessage?: unknown;
  [field: string]: unknown;
}

/** One message of the receive WebSocket or receive endpoint. */
export interface SignalReceived {
  envelope?: SignalEnvelope | null;
  /** The bot's number the message came to. */
  account?: string | null;
}

/** Who the bot is: its number, and its UUID once known (learned from mentions and quotes). */
export interface SignalSelf {
  number: string;
  uuid?: string | null;
}

/** A Signal message mapped for the gateway, with what the answer rules need. */
export interface MappedSignalMessage {
  inbound: InboundMessage;
  candidate: AnswerCandidate;
  /** The sender as replies quote them (`quote_author`) and receipts address them: number, else UUID. */
  author: string;
  /** The sender's UUID (answer rules may list it instead of the number). */
  authorUuid: string | null;
  /** The message's timestamp (its Signal id with the author). */
  timestamp: number;
}

/**
 * The sendable id of a group from the internal id in envelopes, as the REST API computes it
 * (`convertInternalGroupIdToGroupId`: `"group." + base64(internal id)`).
 *
 * @example
 * ```ts
 * signalGroupId("AAEC"); // "group.QUFFQw=="
 * ```
 */
export function signalGroupId(internalId: string): string {
  return `${SIGNAL_GROUP_PREFIX}${Buffer.from(internalId, "utf8").toString("base64")}`;
}

/** The internal id of a `group.<base64>` id (`null` when it is not one). */
export function signalInternalGroupId(groupId: string): string | null {
  if (!groupId.startsWith(SIGNAL_GROUP_PREFIX)) return null;
  const decoded = Buffer.from(groupId.slice(SIGNAL_GROUP_PREFIX.length), "base64").toString("utf8");
  return signalGroupId(decoded) === groupId ? decoded : null;
}

/** The de-duplication key of an envelope: `<sender uuid, else source>:<timestamp>` (Signal's message identity). */
export function signalMessageKey(envelope: SignalEnvelope): string {
  return `${envelope.sourceUuid || envelope.source || envelope.sourceNumber || ""}:${envelope.timestamp}`;
}

/** Whether an address (number or UUID) is the bot. */
export function isSignalSelf(self: SignalSelf, ...ids: Array<string | null | undefined>): boolean {
  return ids.some(
    (id) => typeof id === "string" && id !== "" && (id === self.number || (typeof self.uuid === "string" && self.uuid !== "" && id === self.uuid)),
  );
}

/**
 * Media of a message: every attachment by its REST API id (`fileId`), never a URL (the REST
 * API has no authentication and belongs on a private network: only the adapter fetches from it).
 */
function mediaOf(data: SignalDataMessage): InboundMedia[] {
  return (data.attachments ?? []).map((a) => {
    const mimeType = a.contentType ?? null;
    const kind = mediaKindOf(mimeType);
    const fileName = a.filename ?? null;
    const media: InboundMedia = { kind, url: null, fileId: a.id ?? null, mimeType, fileName, caption: a.caption ?? null };
    if (typeof a.size === "number" && Number.isSafeInteger(a.size) && a.size >= 0) media.size = a.size;
    if (kind === "audio" && (a.voiceNote === true || (a.voiceNote !== false && (fileName === null || fileName === "")))) media.voice = true;
    if (typeof a.width === "number" && typeof a.height === "number") media.meta = { width: a.width, height: a.height };
    return media;
  });
}

/**
 * The text with mentions written out: each U+FFFC range becomes `@name` (the mentioned
 * person's profile name, else number, else UUID); a mention of the bot at the very start
 * (the address) is dropped with the spaces and punctuation after it.
 */
function textWithMentions(text: string, mentions: readonly SignalMention[], self: SignalSelf): { text: string; mentionsBot: boolean } {
  let out = text;
  let mentionsBot = false;
  let leadingBot = false;
  const sorted = [...mentions].filter((m) => Number.isInteger(m.start) && Number.isInteger(m.length) && m.length > 0).sort((a, b) => b.start - a.start);
  for (const mention of sorted) {
    const isBot = isSignalSelf(self, mention.number, mention.uuid);
    if (isBot) mentionsBot = true;
    if (out.slice(mention.start, mention.start + mention.length) !== MENTION_PLACEHOLDER.repeat(mention.length)) continue;
    if (isBot && mention.start === 0) {
      leadingBot = true;
      out = out.slice(mention.length);
      continue;
    }
    const name = mention.name || mention.number || mention.uuid || "someone";
    out = `${out.slice(0, mention.start)}@${name}${out.slice(mention.start + mention.length)}`;
  }
  if (leadingBot) out = out.replace(/^[\s,:]+/u, "");
  return { text: out, mentionsBot };
}

/**
 * Maps one received message. Returns `null` when there is nothing to answer: no data
 * message (sync messages, receipts, typing notices, calls, stories), or one with neither
 * text nor attachments (reactions, deletions, group updates, stickers).
 *
 * @param self the bot: its number (and UUID once known) decide what is its own, and which
 *   mentions and quotes address it.
 * @param options.groupName a group's name when the envelope does not carry it.
 */
export function mapSignalMessage(
  received: SignalReceived,
  self: SignalSelf,
  options: { groupName?: (internalId: string) => string | null } = {},
): MappedSignalMessage | null {
  const envelope = received.envelope;
  if (envelope === null || envelope === undefined || typeof envelope !== "object") return null;
  const edit = envelope.editMessage ?? null;
  const data = edit?.dataMessage ?? envelope.dataMessage ?? null;
  if (data === null || typeof data !== "object") return null;
  const media = mediaOf(data);
  const { text, mentionsBot } = textWithMentions(data.message ?? "", data.mentions ?? [], self);
  if (text.trim() === "" && media.length === 0) return null;

  const number = envelope.sourceNumber || (envelope.source?.startsWith("+") ? envelope.source : null);
  const uuid = envelope.sourceUuid || null;
  const author = number ?? uuid ?? envelope.source ?? "";
  if (author === "") return null;
  const internalGroupId = data.groupInfo?.groupId ?? null;
  const group = typeof internalGroupId === "string" && internalGroupId !== "";
  const timestamp = Number(data.timestamp ?? envelope.timestamp);
  const messageId = String(timestamp);
  const userName = envelope.sourceName || null;
  const chatId = group ? signalGroupId(internalGroupId) : author;
  const source: SessionSource = {
    platform: SIGNAL_PLATFORM,
    chatType: group ? "group" : "dm",
    chatId,
    chatName: group ? data.groupInfo?.groupName || options.groupName?.(internalGroupId) || null : userName,
    userId: author,
    userIdAlt: uuid,
    userName,
    threadId: null,
    isBot: false,
    messageId,
  };
  if (group) source.chatIdAlt = internalGroupId;
  const inbound: InboundMessage = { source, text, messageId };
  if (media.length > 0) inbound.media = media;
  if (edit !== null) inbound.editOf = String(edit.targetSentTimestamp);
  const quote = data.quote ?? null;
  return {
    inbound,
    candidate: {
      chatType: source.chatType,
      chatId,
      userId: author,
      fromSelf: isSignalSelf(self, envelope.sourceNumber, envelope.source, uuid),
      fromBot: false,
      mentionsBot,
      repliesToBot: quote !== null && isSignalSelf(self, quote.authorNumber, quote.author, quote.authorUuid),
      inBotThread: false,
    },
    author,
    authorUuid: uuid,
    timestamp,
  };
}

/**
 * The bot's UUID when a message reveals it: signal-cli resolves every address it knows, its
 * own included, so a mention or quote of the bot carries both its number and UUID.
 */
export function learnSignalSelfUuid(received: SignalReceived, number: string): string | null {
  const envelope = received.envelope;
  if (!envelope) return null;
  if (envelope.sourceNumber === number && envelope.sourceUuid) return envelope.sourceUuid;
  const data = envelope.editMessage?.dataMessage ?? envelope.dataMessage;
  for (const mention of data?.mentions ?? []) if (mention.number === number && mention.uuid) return mention.uuid;
  const quote = data?.quote;
  if (quote && quote.authorNumber === number && quote.authorUuid) return quote.authorUuid;
  return null;
}
