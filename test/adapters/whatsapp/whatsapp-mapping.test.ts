/** The pure parts of the WhatsApp adapter: webhook message → source, recipients, error words, Markdown → WhatsApp, the signature check. */
import { expect, it } from "vitest";
import { splitMessage } from "../../../src/adapters/chat/index.js";
import {
  explainWhatsAppError,
  isBusinessScopedUserId,
  mapWhatsAppMessage,
  markdownToWhatsApp,
  verifyWhatsAppSignature,
  whatsappRecipientOf,
  type WhatsAppChangeValue,
  type WhatsAppMessage,
} from "../../../src/adapters/whatsapp/index.js";
import { buildSessionKey, normalizeIdentity } from "../../../src/gateway/index.js";
import { whatsappFixture } from "../../fakes/whatsapp/fake-whatsapp-server.js";
import { whatsappSignature } from "../../fakes/whatsapp/whatsapp-webhooks.js";

const BSUID = "US.13491208655302741918";
const GROUP = "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD";

function changeValueOf(fixture: string): WhatsAppChangeValue {
  const payload = whatsappFixture<{ entry: Array<{ changes: Array<{ value: WhatsAppChangeValue }> }> }>(fixture);
  return payload.entry[0]!.changes[0]!.value;
}

function map(fixture: string, edit: Partial<WhatsAppMessage> = {}, options: Parameters<typeof mapWhatsAppMessage>[2] = {}) {
  const value = changeValueOf(fixture);
  const message = { ...value.messages![0]!, ...edit };
  return mapWhatsAppMessage(message, value, options);
}

it("a text DM maps to a dm source keyed by the phone number, named from contacts", () => {
  const mapped = map("webhook-text")!;
  expect(mapped.inbound).toEqual({
    text: "Does it come in another color?",
    messageId: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=",
    source: {
      platform: "whatsapp",
      chatType: "dm",
      chatId: "16505551234",
      chatName: "Sheena Nelson",
      userId: "16505551234",
      userIdAlt: null,
      userName: "Sheena Nelson",
      threadId: null,
      isBot: false,
      messageId: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=",
    },
  });
  expect(mapped.candidate).toMatchObject({ chatType: "dm", chatId: "16505551234", userId: "16505551234", fromSelf: false, fromBot: false });
  expect(buildSessionKey(mapped.inbound.source)).toBe("agent:main:whatsapp:dm:16505551234");
});

it("the 2026 identities: phone + BSUID → userId + userIdAlt; a username user with the BSUID alone → the BSUID is userId and chatId", () => {
  const both = map("webhook-text-bsuid")!;
  expect(both.inbound.source).toMatchObject({ chatId: "16505551234", userId: "16505551234", userIdAlt: BSUID });
  expect(both.senderIds).toEqual(["16505551234", BSUID]);
  const only = map("webhook-text-username")!;
  expect(only.inbound.source).toMatchObject({ chatType: "dm", chatId: BSUID, userId: BSUID, userIdAlt: null, userName: "Sheena Nelson" });
  expect(only.senderIds).toEqual([BSUID]);
  // The phone may also come from contacts alone; nothing at all → not mappable.
  expect(map("webhook-text", { from: undefined })!.inbound.source.userId).toBe("16505551234");
  const value = changeValueOf("webhook-text-username");
  expect(mapWhatsAppMessage({ ...value.messages![0]!, from_user_id: undefined }, { ...value, contacts: [] })).toBeNull();
});

it("spellings of one number normalise alike; BSUIDs are told apart from phone numbers", () => {
  for (const spelling of ["+49 151 2345 6789", "4915123456789@s.whatsapp.net", "4915123456789:12@s.whatsapp.net", "+49-151-2345-6789", "4915123456789"]) {
    expect(normalizeIdentity("whatsapp", spelling)).toBe("4915123456789");
  }
  expect(normalizeIdentity("whatsapp", "DE.1502576394655843")).toBe("DE.1502576394655843");
  expect(isBusinessScopedUserId("DE.1502576394655843")).toBe(true);
  expect(isBusinessScopedUserId("HK.ENT.1234567890")).toBe(true);
  expect(isBusinessScopedUserId("4915123456789")).toBe(false);
});

it("media: image, document, voice, video and sticker become InboundMedia with the media id; the caption is the text", () => {
  const image = map("webhook-image")!;
  expect(image.inbound.text).toBe("Is this the right one?");
  expect(image.inbound.media).toEqual([
    { kind: "image", url: null, fileId: "1003383421387256", mimeType: "image/jpeg", fileName: null, caption: "Is this the right one?" },
  ]);
  expect(map("webhook-document")!.inbound.media).toEqual([
    { kind: "file", url: null, fileId: "1210318813984137", mimeType: "application/pdf", fileName: "invoice-2026-04.pdf", caption: "The invoice" },
  ]);
  const voice = map("webhook-audio")!;
  expect(voice.inbound.text).toBe("");
  expect(voice.inbound.media).toEqual([
    { kind: "audio", url: null, fileId: "1047268730519838", mimeType: "audio/ogg; codecs=opus", fileName: null, caption: null, voice: true },
  ]);
  expect(map("webhook-video")!.inbound.media![0]).toMatchObject({ kind: "video", fileId: "1526419358412771", mimeType: "video/mp4" });
  expect(map("webhook-sticker")!.inbound.media![0]).toMatchObject({
    kind: "image",
    fileId: "1209839467426785",
    mimeType: "image/webp",
    meta: { sticker: true, animated: false },
  });
  // An audio file someone sent (not recorded in the chat) is no voice note.
  expect(map("webhook-audio", { audio: { id: "1", mime_type: "audio/mpeg", voice: false } })!.inbound.media![0]!.voice).toBeUndefined();
});

it("locations and button taps become text; reactions, system notices and errored or unsupported messages are not user messages", () => {
  expect(map("webhook-location")!.inbound.text).toBe("[location] Meta Headquarters, 1 Hacker Way, Menlo Park, CA 94025 (37.483872693672, -122.14900441942)");
  const button = map("webhook-button")!;
  expect(button.inbound.text).toBe("Unsubscribe from Promos");
  expect(button.candidate.repliesToBot).toBe(true);
  expect(map("webhook-reaction")).toBeNull();
  expect(map("webhook-system")).toBeNull();
  expect(map("webhook-text", { type: "unsupported", text: undefined })).toBeNull();
  expect(map("webhook-text", { errors: [{ code: 131051, title: "Message type unknown" }] })).toBeNull();
});

it("replies: to the business number (context.from) or to a message the bot sent are replies to the bot; others are not", () => {
  expect(map("webhook-reply")!.candidate.repliesToBot).toBe(true);
  const other = { context: { from: "16505550000", id: "wamid.OTHER" } };
  expect(map("webhook-reply", other)!.candidate.repliesToBot).toBe(false);
  expect(map("webhook-reply", other, { sentByBot: (id) => id === "wamid.OTHER" })!.candidate.repliesToBot).toBe(true);
  expect(map("webhook-text")!.candidate.repliesToBot).toBe(false);
});

it("groups: chatId is the group id as given, one key per person; @<business number> is a mention and a leading one is dropped; the business itself is fromSelf", () => {
  const plain = map("webhook-group-text")!;
  expect(plain.inbound.source).toMatchObject({ chatType: "group", chatId: GROUP, chatName: null, userId: "16505551234" });
  expect(plain.candidate).toMatchObject({ chatType: "group", chatId: GROUP, mentionsBot: false });
  expect(buildSessionKey(plain.inbound.source)).toBe(`agent:main:whatsapp:group:${GROUP}:16505551234`);
  const mention = map("webhook-group-text", { text: { body: "@15550783881 /new" } })!;
  expect(mention.candidate.mentionsBot).toBe(true);
  expect(mention.inbound.text).toBe("/new");
  expect(map("webhook-group-text", { text: { body: "ask @+15550783881 please" } })!.candidate.mentionsBot).toBe(true);
  expect(map("webhook-group-text", { text: { body: "ask @155507838810" } })!.candidate.mentionsBot).toBe(false);
  // Without metadata, the business number from the phone-number look-up is used.
  const value = changeValueOf("webhook-group-text");
  const bare = mapWhatsAppMessage(
    { ...value.messages![0]!, text: { body: "@15550783881 hi" } },
    { ...value, metadata: {} },
    { businessPhone: "+1 555-078-3881" },
  )!;
  expect(bare.candidate.mentionsBot).toBe(true);
  expect(map("webhook-group-text", { from: "15550783881" })!.candidate.fromSelf).toBe(true);
});

it("recipients: a group by id; a person by phone digits whatever the spelling; a BSUID-only person by recipient", () => {
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "group", chatId: GROUP, userId: "16505551234" })).toEqual({
    recipient_type: "group",
    to: GROUP,
  });
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "dm", chatId: "+49 151 2345 6789" })).toEqual({
    recipient_type: "individual",
    to: "4915123456789",
  });
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "dm", chatId: "4915123456789@s.whatsapp.net" })).toEqual({
    recipient_type: "individual",
    to: "4915123456789",
  });
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "dm", chatId: BSUID })).toEqual({ recipient_type: "individual", recipient: BSUID });
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "dm", userId: "16505551234" })).toEqual({ recipient_type: "individual", to: "16505551234" });
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "dm" })).toBeNull();
  // A handoff's home channel comes as chatType channel: a person or a group by the id's shape.
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "channel", chatId: "4915123456789" })).toEqual({
    recipient_type: "individual",
    to: "4915123456789",
  });
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "channel", chatId: BSUID })).toEqual({ recipient_type: "individual", recipient: BSUID });
  expect(whatsappRecipientOf({ platform: "whatsapp", chatType: "channel", chatId: GROUP })).toEqual({ recipient_type: "group", to: GROUP });
});

it("error codes in plain words: 131047 names the 24-hour window; unknown codes keep Meta's title and details", () => {
  expect(explainWhatsAppError(131047)).toBe("the customer has not written in 24 hours; only a template message can reach them");
  expect(explainWhatsAppError(131026)).toMatch(/could not be delivered/);
  expect(explainWhatsAppError(135000, "Generic user error", "Something about it")).toBe("Generic user error: Something about it");
  expect(explainWhatsAppError(null)).toBe("no reason given");
});

it("Markdown → WhatsApp: bold, italic, strike, code, monospace blocks, links, headings, lists, quotes; text as written", () => {
  expect(markdownToWhatsApp("**bold** _it_ ~~gone~~ `a<b`")).toBe("*bold* _it_ ~gone~ `a<b`");
  expect(markdownToWhatsApp("[docs](https://x.dev/a?b=1&c=2) and https://y.dev")).toBe("docs (https://x.dev/a?b=1&c=2) and https://y.dev");
  expect(markdownToWhatsApp("# Title\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted")).toBe("*Title*\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted");
  expect(markdownToWhatsApp("```ts\nif (a < b && c) {}\nreturn;\n```")).toBe("```if (a < b && c) {}\nreturn;```");
  expect(markdownToWhatsApp('Tom & Jerry\'s "show" <b>')).toBe('Tom & Jerry\'s "show" <b>');
  expect(markdownToWhatsApp("| a | b |\n|---|---|\n| 1 | 2 |")).toBe("*a | b*\n1 | 2");
  expect(markdownToWhatsApp("[x](javascript:alert(1))")).toBe("x");
});

it("chunks measured in WhatsApp formatting stay within 4,096 characters", () => {
  const text = Array.from({ length: 60 }, (_, i) => `**Paragraph ${i}**: ${"word ".repeat(30)}`).join("\n\n");
  const chunks = splitMessage(text, 4096, { measure: (t) => markdownToWhatsApp(t).length });
  expect(chunks.length).toBeGreaterThan(1);
  for (const chunk of chunks) expect(markdownToWhatsApp(chunk).length).toBeLessThanOrEqual(4096);
});

it("X-Hub-Signature-256: the HMAC-SHA256 of the raw body with the app secret; anything else is refused", () => {
  const secret = "0123456789abcdef0123456789abcdef";
  const body = JSON.stringify(whatsappFixture("webhook-text"));
  const raw = Buffer.from(body, "utf8");
  expect(verifyWhatsAppSignature(secret, raw, whatsappSignature(secret, body))).toBe(true);
  expect(verifyWhatsAppSignature(secret, raw, whatsappSignature(secret, body).toUpperCase().replace("SHA256", "sha256"))).toBe(true);
  expect(verifyWhatsAppSignature(secret, raw, whatsappSignature("another-secret-of-some-length", body))).toBe(false);
  expect(verifyWhatsAppSignature(secret, Buffer.from(`${body} `), whatsappSignature(secret, body))).toBe(false);
  expect(verifyWhatsAppSignature(secret, raw, undefined)).toBe(false);
  expect(verifyWhatsAppSignature(secret, raw, "sha1=abc")).toBe(false);
});
