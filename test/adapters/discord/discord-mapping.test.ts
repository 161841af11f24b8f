/**
 * The Discord message → SessionSource mapping and reply bodies, as plain functions.
 */
import { describe, expect, it } from "vitest";
import {
  DISCORD_MESSAGE_LIMIT,
  DISCORD_SUPPRESS_EMBEDS,
  DISCORD_VOICE_MESSAGE_FLAG,
  discordMessageBodies,
  mapDiscordMessage,
  type DiscordChannelFacts,
  type DiscordMessageFacts,
} from "../../../src/adapters/discord/index.js";
import { buildSessionKey } from "../../../src/gateway/index.js";

const BOT = "100";
const author = { id: "7", username: "alice", global_name: "Alice Doe" };
const text = (content: string, extra: Partial<DiscordMessageFacts> = {}): DiscordMessageFacts => ({
  id: "900",
  channel_id: "55",
  guild_id: "1",
  content,
  author,
  ...extra,
});
const general: DiscordChannelFacts = { id: "55", type: 0, name: "general", topic: "the topic", guildId: "1" };
const thread: DiscordChannelFacts = {
  id: "66",
  type: 11,
  name: "planning",
  guildId: "1",
  parentId: "55",
  parentName: "general",
  parentTopic: "the topic",
  ownerId: "7",
};

describe("mapDiscordMessage", () => {
  it("DMs, guild channels, announcement channels and threads get their chat types and keys", () => {
    const dm = mapDiscordMessage({ id: "1", channel_id: "44", content: "hi", author }, { id: "44", type: 1 }, BOT)!;
    expect(dm.inbound.source).toMatchObject({
      platform: "discord",
      chatType: "dm",
      chatId: "44",
      userId: "7",
      userName: "Alice Doe",
      scopeId: null,
      messageId: "1",
    });
    expect(buildSessionKey(dm.inbound.source)).toBe("agent:main:discord:dm:44");
    const group = mapDiscordMessage(text("hi"), general, BOT)!;
    expect(group.inbound.source).toMatchObject({ chatType: "group", chatId: "55", chatName: "general", chatTopic: "the topic", scopeId: "1", threadId: null });
    expect(buildSessionKey(group.inbound.source)).toBe("agent:main:discord:group:55:7");
    expect(mapDiscordMessage(text("hi"), { ...general, type: 5 }, BOT)!.inbound.source.chatType).toBe("channel");
    const inThread = mapDiscordMessage(text("hi", { channel_id: "66" }), thread, BOT)!;
    expect(inThread.inbound.source).toMatchObject({
      chatType: "thread",
      chatId: "55",
      threadId: "66",
      parentChatId: "55",
      chatName: "general",
      chatTopic: "the topic",
    });
    expect(buildSessionKey(inThread.inbound.source)).toBe("agent:main:discord:thread:55:66");
  });

  it("mentions (stripped when leading), replies to the bot, the bot's threads, bots and the bot itself", () => {
    const mentioned = mapDiscordMessage(text(`<@${BOT}> hello`, { mentions: [{ id: BOT }] }), general, BOT)!;
    expect(mentioned.inbound.text).toBe("hello");
    expect(mentioned.candidate).toMatchObject({ mentionsBot: true, repliesToBot: false, inBotThread: false });
    expect(mapDiscordMessage(text(`hey <@!${BOT}>`), general, BOT)!.candidate.mentionsBot).toBe(true);
    expect(mapDiscordMessage(text("and?", { referencedAuthorId: BOT }), general, BOT)!.candidate.repliesToBot).toBe(true);
    expect(mapDiscordMessage(text("x", { channel_id: "66" }), { ...thread, ownerId: BOT }, BOT)!.candidate.inBotThread).toBe(true);
    expect(mapDiscordMessage(text("x", { channel_id: "66" }), thread, BOT, { botThreads: new Set(["66"]) })!.candidate.inBotThread).toBe(true);
    expect(mapDiscordMessage(text("x", { channel_id: "66" }), thread, BOT)!.candidate.inBotThread).toBe(false);
    expect(mapDiscordMessage(text("x", { author: { ...author, bot: true } }), general, BOT)!.candidate).toMatchObject({ fromBot: true });
    expect(mapDiscordMessage(text("x", { author: { id: BOT, username: "me", bot: true } }), general, BOT)!.candidate.fromSelf).toBe(true);
  });

  it("attachments become media with their URL; an empty message (no content intent) maps to nothing", () => {
    const withFile = mapDiscordMessage(
      text("", { attachments: [{ id: "5", filename: "v.ogg", url: "https://cdn.example/v.ogg", content_type: "audio/ogg" }] }),
      general,
      BOT,
    )!;
    expect(withFile.inbound.media).toEqual([
      { kind: "audio", url: "https://cdn.example/v.ogg", fileId: "5", mimeType: "audio/ogg", fileName: "v.ogg", caption: null, size: null, meta: null },
    ]);
    expect(mapDiscordMessage(text(""), general, BOT)).toBeNull();
    expect(mapDiscordMessage(text(`<@${BOT}>`), general, BOT)).toBeNull();
  });

  it("a voice message (flag IS_VOICE_MESSAGE, or a waveform) is a voice note with its duration; sizes and dimensions are carried", () => {
    const clip = {
      id: "6",
      filename: "voice-message.ogg",
      url: "https://cdn.discordapp.com/a/6/voice-message.ogg",
      content_type: "audio/ogg",
      size: 9000,
      duration_secs: 3.2,
    };
    const flagged = mapDiscordMessage(text("", { flags: DISCORD_VOICE_MESSAGE_FLAG, attachments: [clip] }), general, BOT)!;
    expect(flagged.inbound.media).toEqual([
      {
        kind: "audio",
        url: clip.url,
        fileId: "6",
        mimeType: "audio/ogg",
        fileName: "voice-message.ogg",
        caption: null,
        size: 9000,
        meta: { durationSeconds: 3.2 },
        voice: true,
      },
    ]);
    expect(mapDiscordMessage(text("", { attachments: [{ ...clip, waveform: "AAAA" }] }), general, BOT)!.inbound.media![0]!.voice).toBe(true);
    const song = mapDiscordMessage(text("listen", { attachments: [{ ...clip, filename: "song.ogg" }] }), general, BOT)!.inbound.media![0]!;
    expect(song.voice).toBeUndefined();
    const photo = {
      id: "7",
      filename: "cat.png",
      url: "https://cdn.discordapp.com/a/7/cat.png",
      content_type: "image/png",
      size: 12345,
      width: 640,
      height: 480,
    };
    expect(mapDiscordMessage(text("look", { attachments: [photo] }), general, BOT)!.inbound.media![0]).toMatchObject({
      kind: "image",
      size: 12345,
      meta: { width: 640, height: 480 },
    });
  });
});

describe("discordMessageBodies", () => {
  it("splits at 2,000, replies with the first chunk only, never pings", () => {
    const bodies = discordMessageBodies("word ".repeat(1000), "123");
    expect(bodies.length).toBeGreaterThan(2);
    for (const body of bodies) expect(body.content.length).toBeLessThanOrEqual(DISCORD_MESSAGE_LIMIT);
    expect(bodies[0]).toMatchObject({
      message_reference: { message_id: "123", fail_if_not_exists: false },
      allowed_mentions: { parse: [], replied_user: true },
    });
    // Every body suppresses embeds (link previews) unless asked for.
    expect(bodies[1]).toEqual({ content: bodies[1]!.content, allowed_mentions: { parse: [], replied_user: false }, flags: DISCORD_SUPPRESS_EMBEDS });
    expect(discordMessageBodies("hi @everyone", null)).toEqual([
      { content: "hi @everyone", allowed_mentions: { parse: [], replied_user: false }, flags: DISCORD_SUPPRESS_EMBEDS },
    ]);
    expect(discordMessageBodies("see https://x.dev", null, { linkPreviews: true })).toEqual([
      { content: "see https://x.dev", allowed_mentions: { parse: [], replied_user: false } },
    ]);
  });
});
