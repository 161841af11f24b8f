/**
 * The Signal mapping (received message → SessionSource, answer facts, media) and the outbound
 * formatting (Markdown → the REST API's styled text, split at 2,000 bytes), as plain
 * functions over the documented payloads of test/fakes/signal/fixtures.
 */
import { describe, expect, it } from "vitest";
import {
  SIGNAL_MESSAGE_LIMIT_BYTES,
  learnSignalSelfUuid,
  mapSignalMessage,
  markdownToSignalStyled,
  parseSignalStyledText,
  signalGroupId,
  signalInternalGroupId,
  signalMessageBodies,
  signalMessageKey,
  signalPlainText,
  type SignalReceived,
} from "../../../src/adapters/signal/index.js";
import { buildSessionKey } from "../../../src/gateway/index.js";
import { SIGNAL_IDS, signalFixture, signalMessage } from "../../fakes/signal/fake-signal-server.js";

const self = { number: SIGNAL_IDS.bot, uuid: null };
const map = (received: unknown, me: { number: string; uuid: string | null } = self) => mapSignalMessage(received as SignalReceived, me);

describe("mapSignalMessage", () => {
  it("a DM: chat and user are the sender's number, the UUID is userIdAlt; the message id is its timestamp", () => {
    const mapped = map(signalFixture("receive-dm"))!;
    expect(mapped.inbound).toEqual({
      source: {
        platform: "signal",
        chatType: "dm",
        chatId: SIGNAL_IDS.alice,
        chatName: "Alice",
        userId: SIGNAL_IDS.alice,
        userIdAlt: SIGNAL_IDS.aliceUuid,
        userName: "Alice",
        threadId: null,
        isBot: false,
        messageId: "1767225600000",
      },
      text: "hello",
      messageId: "1767225600000",
    });
    expect(mapped.candidate).toMatchObject({ chatType: "dm", fromSelf: false, fromBot: false, mentionsBot: false, repliesToBot: false });
    expect(mapped).toMatchObject({ author: SIGNAL_IDS.alice, authorUuid: SIGNAL_IDS.aliceUuid, timestamp: 1767225600000 });
    expect(buildSessionKey(mapped.inbound.source)).toBe(`agent:main:signal:dm:${SIGNAL_IDS.alice}`);
  });

  it("a sender whose number is hidden is addressed by UUID", () => {
    const mapped = map(signalFixture("receive-dm-hidden-number"))!;
    expect(mapped.inbound.source).toMatchObject({ chatId: SIGNAL_IDS.aliceUuid, userId: SIGNAL_IDS.aliceUuid, userIdAlt: SIGNAL_IDS.aliceUuid });
    expect(mapped.author).toBe(SIGNAL_IDS.aliceUuid);
  });

  it("a group: chatId is the sendable group.<base64> id computed from the internal id, chatIdAlt the internal id, one session per person", () => {
    expect(signalGroupId(SIGNAL_IDS.groupInternalId)).toBe(SIGNAL_IDS.group);
    expect(signalGroupId(SIGNAL_IDS.groupInternalId)).toBe(signalFixture<Array<{ id: string }>>("groups")[0]!.id);
    expect(signalInternalGroupId(SIGNAL_IDS.group)).toBe(SIGNAL_IDS.groupInternalId);
    expect(signalInternalGroupId("+4915100000001")).toBeNull();
    const mapped = map(signalFixture("receive-group-text"))!;
    expect(mapped.inbound.source).toMatchObject({
      chatType: "group",
      chatId: SIGNAL_IDS.group,
      chatIdAlt: SIGNAL_IDS.groupInternalId,
      chatName: "Book club",
      userId: SIGNAL_IDS.alice,
    });
    expect(mapped.candidate).toMatchObject({ chatType: "group", mentionsBot: false, repliesToBot: false });
    expect(buildSessionKey(mapped.inbound.source)).toBe(`agent:main:signal:group:${SIGNAL_IDS.group}:${SIGNAL_IDS.aliceUuid}`);
    const unnamed = signalMessage("receive-group-text", { data: { groupInfo: { groupId: SIGNAL_IDS.groupInternalId, revision: 3, type: "DELIVER" } } });
    expect(
      mapSignalMessage(unnamed as SignalReceived, self, { groupName: (id) => (id === SIGNAL_IDS.groupInternalId ? "From the list" : null) })!.inbound.source
        .chatName,
    ).toBe("From the list");
  });

  it("a leading mention of the bot addresses it and is dropped; other mentions become @name; quotes of the bot are replies to it", () => {
    const mention = map(signalFixture("receive-group-mention"))!;
    expect(mention.inbound.text).toBe("what do you think?");
    expect(mention.candidate.mentionsBot).toBe(true);
    const byUuid = signalMessage("receive-group-mention", {
      message: "ask \uFFFC and \uFFFC",
      data: {
        mentions: [
          { name: "Bob", number: SIGNAL_IDS.bob, uuid: SIGNAL_IDS.bobUuid, start: 4, length: 1 },
          { name: "Threadline", number: null, uuid: SIGNAL_IDS.botUuid, start: 10, length: 1 },
        ],
      },
    });
    expect(map(byUuid)!.candidate.mentionsBot).toBe(false);
    const known = map(byUuid, { number: SIGNAL_IDS.bot, uuid: SIGNAL_IDS.botUuid })!;
    expect(known.inbound.text).toBe("ask @Bob and @Threadline");
    expect(known.candidate.mentionsBot).toBe(true);
    const quote = map(signalFixture("receive-group-quote"))!;
    expect(quote.candidate).toMatchObject({ repliesToBot: true, mentionsBot: false });
    expect(learnSignalSelfUuid(signalFixture("receive-group-mention"), SIGNAL_IDS.bot)).toBe(SIGNAL_IDS.botUuid);
    expect(learnSignalSelfUuid(signalFixture("receive-group-quote"), SIGNAL_IDS.bot)).toBe(SIGNAL_IDS.botUuid);
    expect(learnSignalSelfUuid(signalFixture("receive-dm"), SIGNAL_IDS.bot)).toBeNull();
  });

  it("attachments are media of one message with their id (never a URL), size and type; an audio recording is a voice note; an edit is a new message with editOf", () => {
    const mapped = map(signalFixture("receive-attachments"))!;
    expect(mapped.inbound.albumId).toBeUndefined();
    expect(mapped.inbound.media).toEqual([
      {
        kind: "image",
        url: null,
        fileId: "P0xLq3sEXAMPLEid.jpg",
        mimeType: "image/jpeg",
        fileName: "photo.jpg",
        caption: null,
        size: 48213,
        meta: { width: 1024, height: 768 },
      },
      { kind: "audio", url: null, fileId: "VNaud1oEXAMPLEid.aac", mimeType: "audio/aac", fileName: null, caption: null, size: 9120, voice: true },
    ]);
    // An audio file someone shared keeps its name and is no voice note, unless signal-cli says it is one.
    const attachment = (fields: Record<string, unknown>) =>
      map(signalMessage("receive-dm", { data: { attachments: [{ contentType: "audio/mpeg", id: "AuD10.mp3", size: 10, ...fields }] } }))!.inbound.media![0]!;
    expect(attachment({ filename: "song.mp3" }).voice).toBeUndefined();
    expect(attachment({ filename: "note.m4a", voiceNote: true }).voice).toBe(true);
    expect(attachment({ filename: null, voiceNote: false }).voice).toBeUndefined();
    const edit = map(signalFixture("receive-edit"))!;
    expect(edit.inbound).toMatchObject({ text: "hello, edited", messageId: "1767226260000", editOf: "1767225600000" });
  });

  it("maps nothing for sync messages, receipts, typing notices, reactions; marks the bot's own messages", () => {
    for (const fixture of ["receive-sync-sent", "receive-receipt", "receive-typing", "receive-reaction"])
      expect(map(signalFixture(fixture)), fixture).toBeNull();
    expect(map({})).toBeNull();
    const own = signalMessage("receive-dm", { sender: { number: SIGNAL_IDS.bot, uuid: SIGNAL_IDS.botUuid } });
    expect(map(own)!.candidate.fromSelf).toBe(true);
  });

  it("the de-duplication key is the sender's UUID and the timestamp", () => {
    expect(signalMessageKey(signalFixture<SignalReceived>("receive-dm").envelope!)).toBe(`${SIGNAL_IDS.aliceUuid}:1767225600000`);
  });
});

describe("Signal formatting", () => {
  it("the ported styled parser matches the REST API's own test cases", () => {
    expect(parseSignalStyledText("This is a **bold** and *italic* message")).toEqual({
      text: "This is a bold and italic message",
      styles: ["10:4:BOLD", "19:6:ITALIC"],
    });
    expect(parseSignalStyledText("👋🏾**abcdefg**")).toEqual({ text: "👋🏾abcdefg", styles: ["4:7:BOLD"] });
    expect(parseSignalStyledText("||**this is a bold text inside a spoiler**||")).toEqual({
      text: "this is a bold text inside a spoiler",
      styles: ["0:36:BOLD", "0:36:SPOILER"],
    });
    expect(parseSignalStyledText("\\**escaped text\\**")).toEqual({ text: "**escaped text**", styles: [] });
    expect(parseSignalStyledText("***both***")).toEqual({ text: "both", styles: ["0:4:BOLD", "0:4:ITALIC"] });
    // A stray marker is swallowed: why every literal one is escaped.
    expect(parseSignalStyledText("5 * 3")).toEqual({ text: "5  3", styles: [] });
  });

  it("Markdown becomes styled text whose parse gives exactly the shown text and styles", () => {
    const cases: Array<[string, string, string[]]> = [
      ["**Note:** use `a*b`", "Note: use a*b", ["0:5:BOLD", "10:3:MONOSPACE"]],
      [
        "# Title\n\n*it* ~~gone~~ ||secret|| ***both***",
        "Title\n\nit gone secret both",
        ["0:5:BOLD", "7:2:ITALIC", "10:4:STRIKETHROUGH", "15:6:SPOILER", "22:4:BOLD", "22:4:ITALIC"],
      ],
      ["5 * 3 = 15, a~b, x || y and **b**", "5 * 3 = 15, a~b, x || y and b", ["28:1:BOLD"]],
      ["- one\n- **two**\n\n1. first", "• one\n• two\n\n1. first", ["8:3:BOLD"]],
      ["```ts\nconst a = `x` * 2;\n```", "const a = `x` * 2;", ["0:18:MONOSPACE"]],
      ["[docs](https://example.com) **x**", "docs (https://example.com) x", ["27:1:BOLD"]],
    ];
    for (const [md, shown, styles] of cases) {
      const styled = markdownToSignalStyled(md);
      expect(styled, md).not.toBeNull();
      expect(parseSignalStyledText(styled!), md).toEqual({ text: shown, styles });
      expect(signalPlainText(md), md).toBe(shown);
    }
  });

  it("markers that would run together are kept apart by an invisible word joiner", () => {
    const joined = markdownToSignalStyled("*a***b**")!;
    expect(parseSignalStyledText(joined)).toEqual({ text: "a\u2060b", styles: ["0:1:ITALIC", "2:1:BOLD"] });
    const path = markdownToSignalStyled("dir `C:\\tmp\\`")!;
    expect(parseSignalStyledText(path).text).toBe("dir C:\\tmp\\\u2060");
  });

  it("bodies: plain replies go as normal text, styled ones as styled; notices as written; long replies split within 2,000 bytes", () => {
    expect(signalMessageBodies("Reply to: 5 * 3", { styled: true })).toEqual([{ message: "Reply to: 5 * 3", text_mode: "normal" }]);
    expect(signalMessageBodies("a **b**", { styled: true })).toEqual([{ message: "a **b**", text_mode: "styled" }]);
    expect(signalMessageBodies("Started a **new** session", { styled: false })).toEqual([{ message: "Started a **new** session", text_mode: "normal" }]);
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: **ünïcödé** ${"wörds ".repeat(20).trim()}.`);
    const bodies = signalMessageBodies(paragraphs.join("\n\n"), { styled: true });
    expect(bodies.length).toBeGreaterThan(2);
    for (const body of bodies) {
      expect(body.text_mode).toBe("styled");
      expect(Buffer.byteLength(parseSignalStyledText(body.message).text, "utf8")).toBeLessThanOrEqual(SIGNAL_MESSAGE_LIMIT_BYTES);
    }
    expect(bodies.map((b) => parseSignalStyledText(b.message).text).join("\n\n")).toBe(paragraphs.map((p) => p.replace(/\*\*/gu, "")).join("\n\n"));
  });
});
