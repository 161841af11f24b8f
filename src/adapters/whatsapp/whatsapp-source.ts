/**
 * Inbound mapping for WhatsApp (Cloud API): a `messages` webhook's message → the gateway's
 * {@link InboundMessage} and the facts {@link decideAnswer} needs; where a reply goes
 * ({@link whatsappRecipientOf}); what a failed status means ({@link explainWhatsAppError}).
 *
 * Identity. A sender is known by their phone number (`messages[].from`, `contacts[].wa_id`)
 * and, since 2026, by their business-scoped user id (BSUID: `messages[].from_user_id`,
 * `contacts[].user_id`, e.g. `DE.1502576394655843`); users with a WhatsApp username may
 * come with the BSUID alone. The phone is the source's `userId` (and a DM's `chatId`), the
 * BSUID its `userIdAlt`; with only a BSUID, the BSUID is `userId` and `chatId`. The gateway
 * records a phone + BSUID pair as one person and canonicalises ids
 * ({@link normalizeIdentity}: `+49 151 2345 6789`, `4915123456789@s.whatsapp.net` and
 * `4915123456789` are one id), so every spelling lands in one session.
 *
 * - a message with `group_id` (the Groups API) → chatType `group`, chatId = the group id as
 *   given, one session per person (`agent:main:whatsapp:group:<groupId>:<phone>`); others →
 *   `dm` (`agent:main:whatsapp:dm:<phone>`), under the default key settings.
 * - text, captions, button and list replies, locations and shared contacts become text;
 *   image/audio/video/document/sticker become `InboundMedia` with the media id as `fileId`
 *   (its download URL needs the access token, so none is passed on; the `url` a webhook may
 *   carry is never used), `voice: true` for a voice note (`audio.voice`), the caption, the
 *   document's file name, and `meta: { sticker, animated }` for a sticker. WhatsApp has no
 *   albums: each photo of a burst is its own message.
 * - a reply (`context.id`) is a reply to the bot when `context.from` is the business number
 *   or the id is one of the bot's own messages.
 * - in a group, the bot is mentioned by `@<its phone number>` in the text (how WhatsApp writes a
 *   mention into the body; the Cloud API's group webhooks carry no mention list).
 * - reactions, system notices (number or BSUID changes), unsupported types and messages with
 *   errors are not user messages: `null`.
 *
 * @module
 */
import type { InboundMedia, InboundMessage, SessionSource } from "../../gateway/index.js";
import { normalizeIdentity } from "../../gateway/index.js";
import type { AnswerCandidate } from "../chat/index.js";

/** The platform name of WhatsApp sources. */
export const WHATSAPP_PLATFORM = "whatsapp";

/** A media object of an inbound message. */
export interface WhatsAppMedia {
  id?: string;
  mime_type?: string;
  sha256?: string;
  caption?: string;
  filename?: string;
  voice?: boolean;
  animated?: boolean;
}

/** An error object of the Cloud API (in statuses, messages and webhook values). */
export interface WhatsAppError {
  code?: number;
  title?: string;
  message?: string;
  error_data?: { details?: string };
  href?: string;
}

/** One entry of `value.contacts`: who sent the message. */
export interface WhatsAppContact {
  profile?: { name?: string; username?: string };
  /** The phone number (absent for username users who do not share it). */
  wa_id?: string;
  /** The business-scoped user id (BSUID). */
  user_id?: string;
  parent_user_id?: string;
}

/** One entry of `value.messages` (the fields the adapter reads). */
export interface WhatsAppMessage {
  /** The sender's phone number (absent for username users who do not share it). */
  from?: string;
  /** The sender's BSUID. */
  from_user_id?: string;
  from_parent_user_id?: string;
  /** The message id, `wamid.…`. */
  id?: string;
  /** Set for messages in a group (the Groups API). */
  group_id?: string;
  timestamp?: string;
  type?: string;
  context?: { from?: string; id?: string; forwarded?: boolean; frequently_forwarded?: boolean };
  text?: { body?: string };
  image?: WhatsAppMedia;
  video?: WhatsAppMedia;
  audio?: WhatsAppMedia;
  document?: WhatsAppMedia;
  sticker?: WhatsAppMedia;
  location?: { latitude?: number | string; longitude?: number | string; name?: string; address?: string };
  contacts?: Array<{ name?: { formatted_name?: string }; phones?: Array<{ phone?: string; wa_id?: string }> }>;
  button?: { text?: string; payload?: string };
  interactive?: { type?: string; button_reply?: { id?: string; title?: string }; list_reply?: { id?: string; title?: string; description?: string } };
  errors?: WhatsAppError[];
}

/** One entry of `value.statuses`: what became of a message the business sent. */
export interface WhatsAppStatus {
  id?: string;
  /** `sent`, `delivered`, `read`, `played` or `failed`. */
  status?: string;
  timestamp?: string;
  /** The phone number or group id it was sent to (absent when it was sent to a BSUID). */
  recipient_id?: string;
  recipient_type?: string;
  recipient_user_id?: string;
  errors?: WhatsAppError[];
}

/** `entry[].changes[].value` of a `messages` webhook. */
export interface WhatsAppChangeValue {
  messaging_product?: string;
  metadata?: { display_phone_number?: string; phone_number_id?: string };
  contacts?: WhatsAppContact[];
  messages?: WhatsAppMessage[];
  statuses?: WhatsAppStatus[];
  errors?: WhatsAppError[];
}

/** A webhook POST body. */
export interface WhatsAppWebhookPayload {
  object?: string;
  entry?: Array<{ id?: string; changes?: Array<{ field?: string; value?: WhatsAppChangeValue }> }>;
}

/** A WhatsApp message mapped for the gateway, with what the answer rules need. */
export interface MappedWhatsAppMessage {
  inbound: InboundMessage;
  candidate: AnswerCandidate;
  /** The sender's ids in canonical form (phone digits, BSUID), for `allowedUsers`. */
  senderIds: string[];
}

/** Options of {@link mapWhatsAppMessage}. */
export interface MapWhatsAppOptions {
  /** The business's phone number (any spelling) when the webhook's metadata lacks it. */
  businessPhone?: string | null;
  /** Whether a message id is one the bot sent (replies to it are replies to the bot). */
  sentByBot?: (messageId: string) => boolean;
}

/** Whether an id is a business-scoped user id (`<country code>.<letters and digits>`, also parent BSUIDs `HK.ENT.…`). */
export function isBusinessScopedUserId(id: string): boolean {
  return /^[A-Z]{2}(?:\.[A-Za-z0-9]+)+$/u.test(id.trim());
}

/** The digits of a phone number as written (`+1 555-078-3881` → `15550783881`), or null. */
function digitsOf(phone: string | null | undefined): string | null {
  if (!phone) return null;
  const canonical = normalizeIdentity(WHATSAPP_PLATFORM, phone);
  return /^\d+$/u.test(canonical) ? canonical : null;
}

function present(value: string | null | undefined): value is string {
  return typeof value === "string" && value.trim() !== "";
}

function mediaOf(message: WhatsAppMessage): InboundMedia[] {
  const out: InboundMedia[] = [];
  const add = (kind: string, media: WhatsAppMedia | undefined, fallbackMime: string | null, meta: Record<string, unknown> | null = null): void => {
    if (media === undefined) return;
    const item: InboundMedia = {
      kind,
      // The webhook's `url` (Meta's media host) is never taken: the file is fetched by its id.
      url: null,
      fileId: media.id ?? null,
      mimeType: media.mime_type ?? fallbackMime,
      fileName: media.filename ?? null,
      caption: media.caption ?? null,
    };
    if (media.voice === true) item.voice = true;
    if (meta !== null) item.meta = meta;
    out.push(item);
  };
  add("image", message.image, "image/jpeg");
  add("video", message.video, null);
  add("audio", message.audio, null);
  add("file", message.document, null);
  add("image", message.sticker, "image/webp", { sticker: true, animated: message.sticker?.animated === true });
  return out;
}

/** The text a message carries: its body, a caption, a tapped button or list item, a location or shared contacts. */
function textOf(message: WhatsAppMessage): string {
  if (message.text?.body !== undefined) return message.text.body;
  const caption = message.image?.caption ?? message.video?.caption ?? message.document?.caption;
  if (caption !== undefined) return caption;
  if (message.button?.text !== undefined) return message.button.text;
  const choice = message.interactive?.button_reply ?? message.interactive?.list_reply;
  if (choice?.title !== undefined) return choice.title;
  if (message.location !== undefined) {
    const { latitude, longitude, name, address } = message.location;
    const label = [name, address].filter(present).join(", ");
    return `[location] ${label === "" ? "" : `${label} `}(${latitude}, ${longitude})`.replace(/\s+\(/u, " (");
  }
  if (message.contacts !== undefined && message.contacts.length > 0) {
    const cards = message.contacts.map((c) => [c.name?.formatted_name, ...(c.phones ?? []).map((p) => p.phone ?? p.wa_id)].filter(present).join(" "));
    return `[contact] ${cards.join("; ")}`;
  }
  return "";
}

/** The `contacts` entry of the sender of `message`. */
function contactOf(message: WhatsAppMessage, contacts: readonly WhatsAppContact[]): WhatsAppContact | undefined {
  const phone = digitsOf(message.from);
  const found = contacts.find((c) => (phone !== null && digitsOf(c.wa_id) === phone) || (present(message.from_user_id) && c.user_id === message.from_user_id));
  return found ?? (contacts.length === 1 ? contacts[0] : undefined);
}

/**
 * Maps one message of a `messages` webhook. Returns `null` for what is not something a
 * user said (reactions, system notices, unsupported types, errors) or has no sender.
 *
 * @param value the change value it came in (its `contacts` and `metadata`).
 */
export function mapWhatsAppMessage(message: WhatsAppMessage, value: WhatsAppChangeValue, options: MapWhatsAppOptions = {}): MappedWhatsAppMessage | null {
  if (!present(message.id)) return null;
  if (message.type === "reaction" || message.type === "system" || message.type === "unsupported" || message.type === "unknown") return null;
  if (message.errors !== undefined && message.errors.length > 0) return null;
  const media = mediaOf(message);
  const rawText = textOf(message);
  if (rawText.trim() === "" && media.length === 0) return null;

  const contact = contactOf(message, value.contacts ?? []);
  const phone = present(message.from) ? message.from : present(contact?.wa_id) ? contact.wa_id : null;
  const bsuid = present(message.from_user_id) ? message.from_user_id : present(contact?.user_id) ? contact.user_id : null;
  if (phone === null && bsuid === null) return null;
  const userId = (phone ?? bsuid)!;
  const userName = contact?.profile?.name ?? contact?.profile?.username ?? null;

  const group = present(message.group_id) ? message.group_id : null;
  const chatType = group !== null ? "group" : "dm";
  const chatId = group ?? userId;

  const business = digitsOf(value.metadata?.display_phone_number) ?? digitsOf(options.businessPhone);
  const fromSelf = business !== null && digitsOf(phone) === business;
  let text = rawText;
  let mentionsBot = false;
  if (group !== null && business !== null) {
    const mention = new RegExp(`@\\+?${business}(?!\\d)`, "u");
    mentionsBot = mention.test(rawText);
    // A leading mention is an address, not part of what the user says: `@15550783881 /new` is /new.
    text = rawText.replace(new RegExp(`^\\s*@\\+?${business}(?!\\d)[\\s,:]*`, "u"), "");
  }
  const context = message.context;
  const repliesToBot = present(context?.id) && ((business !== null && digitsOf(context.from) === business) || (options.sentByBot?.(context.id) ?? false));

  const source: SessionSource = {
    platform: WHATSAPP_PLATFORM,
    chatType,
    chatId,
    chatName: group !== null ? null : userName,
    userId,
    userIdAlt: phone !== null && bsuid !== null ? bsuid : null,
    userName,
    threadId: null,
    isBot: false,
    messageId: message.id,
  };
  const inbound: InboundMessage = { source, text, messageId: message.id };
  if (media.length > 0) inbound.media = media;
  const senderIds = [phone, bsuid].filter(present).map((id) => normalizeIdentity(WHATSAPP_PLATFORM, id));
  return {
    inbound,
    senderIds,
    candidate: {
      chatType,
      chatId: group ?? normalizeIdentity(WHATSAPP_PLATFORM, chatId),
      userId: senderIds[0]!,
      fromSelf,
      fromBot: false,
      mentionsBot,
      repliesToBot,
      inBotThread: false,
    },
  };
}

/** Where a message to a source goes: the Cloud API's `recipient_type` and `to` or `recipient`. */
export type WhatsAppRecipient =
  | { recipient_type: "individual"; to: string }
  | { recipient_type: "individual"; recipient: string }
  | { recipient_type: "group"; to: string };

/**
 * The recipient of a reply to `source`: a group by its id; a person by their phone number
 * (`to`, digits only, whatever spelling the source has) or, when only their BSUID is known,
 * by the BSUID (`recipient`). A `channel` source (a handoff's home channel) is a person when
 * its chat id is a number or a BSUID, else a group. `null` when the source names nobody.
 *
 * @example
 * ```ts
 * whatsappRecipientOf({ platform: "whatsapp", chatType: "dm", chatId: "+49 151 2345 6789" }); // { recipient_type: "individual", to: "4915123456789" }
 * whatsappRecipientOf({ platform: "whatsapp", chatType: "dm", chatId: "DE.1502576394655843" }); // { recipient_type: "individual", recipient: "DE.1502576394655843" }
 * ```
 */
export function whatsappRecipientOf(source: SessionSource): WhatsAppRecipient | null {
  if (source.chatType !== "dm" && present(source.chatId)) {
    // WhatsApp has no channels: a `channel` source is a home channel a handoff targets, which
    // may be a person (a number or a BSUID, from /sethome in a DM) or a group.
    const chatId = source.chatId.trim();
    if (source.chatType === "group" || (digitsOf(chatId) === null && !isBusinessScopedUserId(chatId))) return { recipient_type: "group", to: chatId };
  }
  const id = [source.chatId, source.userId, source.userIdAlt].find(present);
  if (id === undefined) return null;
  const phone = digitsOf(id);
  if (phone !== null) return { recipient_type: "individual", to: phone };
  return { recipient_type: "individual", recipient: id.trim() };
}

/** Plain words for the Cloud API errors a gateway meets (message statuses and send errors). */
const EXPLANATIONS: Record<number, string> = {
  131047: "the customer has not written in 24 hours; only a template message can reach them",
  131026: "the message could not be delivered (the number may not be on WhatsApp, may have blocked the business, or runs an old WhatsApp version)",
  131030: "the recipient is not on the test number's list of allowed recipients (add it under WhatsApp → API Setup, or use a live number)",
  131049: "Meta chose not to deliver the message to keep engagement healthy; try again later",
  131050: "the user has stopped marketing messages from this business",
  131051: "the message type is not supported",
  131056: "too many messages to this recipient in a short time; they are retried after a pause",
  130429: "the number's message throughput was exceeded; sends are retried after a pause",
  131048: "messages were limited because too many were marked as spam",
  131000: "something went wrong on Meta's side",
  131005: "the access token lacks the whatsapp_business_messaging permission",
  131008: "a required parameter is missing",
  131009: "a parameter value is not valid",
  131021: "the recipient is the business number itself",
  131031: "the business account is locked or restricted",
  131042: "the business has a payment problem",
  368: "the business number is temporarily blocked for policy violations",
  190: "the access token expired or was revoked; generate a new one",
  10: "the access token lacks a permission this needs",
};

/**
 * What a Cloud API error code means, in a sentence (the API's own title and details
 * when the code is not one the gateway knows).
 *
 * @example
 * ```ts
 * explainWhatsAppError(131047); // "the customer has not written in 24 hours; only a template message can reach them"
 * ```
 */
export function explainWhatsAppError(code: number | null | undefined, title?: string | null, details?: string | null): string {
  const known = code === null || code === undefined ? undefined : EXPLANATIONS[code];
  if (known !== undefined) return known;
  const parts = [title, details].filter((t): t is string => typeof t === "string" && t.trim() !== "");
  const told = [...new Set(parts)].join(": ");
  return told !== "" ? told : "no reason given";
}
