/** The pure parts of the Telegram adapter: update → source mapping and Markdown → Telegram HTML. */
import type { Message, UserFromGetMe } from "grammy/types";
import { expect, it } from "vitest";
import { mapTelegramMessage, markdownToTelegramHtml, telegramRenderedLength } from "../../../src/adapters/telegram/index.js";
import { buildSessionKey } from "../../../src/gateway/index.js";
import { parseTelegramHtml, telegramFixture, telegramUpdate } from "../../fakes/telegram/fake-telegram-server.js";

const me = telegramFixture<UserFromGetMe>("get-me");
const messageOf = (update: Record<string, unknown>): Message => (update["message"] ?? update["edited_message"] ?? update["channel_post"]) as Message;

it("a DM maps to a dm source keyed by the chat", () => {
  const mapped = mapTelegramMessage(messageOf(telegramFixture("update-private-text")), me)!;
  expect(mapped.inbound).toMatchObject({
    text: "hello",
    messageId: "1",
    source: {
      platform: "telegram",
      chatType: "dm",
      chatId: "111111",
      userId: "111111",
      userName: "Alice Doe",
      chatName: "Alice Doe",
      isBot: false,
      threadId: null,
    },
  });
  expect(buildSessionKey(mapped.inbound.source)).toBe("agent:main:telegram:dm:111111");
});

it("a group mention is addressed and loses the leading @name; per-user keys in groups", () => {
  const mapped = mapTelegramMessage(messageOf(telegramFixture("update-group-mention")), me)!;
  expect(mapped.candidate).toMatchObject({ chatType: "group", mentionsBot: true, repliesToBot: false });
  expect(mapped.inbound.text).toBe("what is up?");
  expect(buildSessionKey(mapped.inbound.source)).toBe("agent:main:telegram:group:-1001234567890:222222");
  expect(mapTelegramMessage(messageOf(telegramFixture("update-group-text")), me)!.candidate.mentionsBot).toBe(false);
});

it("commands: /new is for every bot, /new@us is ours, /new@other is not", () => {
  const command = (text: string) =>
    mapTelegramMessage(messageOf(telegramUpdate("update-group-text", { text, entities: [{ offset: 0, length: text.length, type: "bot_command" }] })), me)!
      .candidate.mentionsBot;
  expect(command("/new")).toBe(true);
  expect(command("/new@threadline_test_bot")).toBe(true);
  expect(command("/new@other_bot")).toBe(false);
});

it("a forum topic message takes the topic as threadId: one shared key for the topic; the topic-created reply is not a reply to the bot", () => {
  const mapped = mapTelegramMessage(messageOf(telegramFixture("update-forum-topic")), me)!;
  expect(mapped.inbound.source).toMatchObject({ chatType: "group", chatId: "-1009876543210", threadId: "77", chatName: "Forum" });
  expect(mapped.candidate.repliesToBot).toBe(false);
  expect(buildSessionKey(mapped.inbound.source)).toBe("agent:main:telegram:group:-1009876543210:77");
  const inBotTopic = mapTelegramMessage(messageOf(telegramFixture("update-forum-topic")), me, { botTopics: new Set(["-1009876543210:77"]) })!;
  expect(inBotTopic.candidate.inBotThread).toBe(true);
});

it("media: the largest photo with its file id, size and dimensions and the album id; a voice note; documents with name and mime type", () => {
  const photo = mapTelegramMessage(messageOf(telegramFixture("update-photo-album")), me)!;
  expect(photo.inbound.media).toEqual([
    {
      kind: "image",
      fileId: "AgACAgQAAxkBAAIBlarge",
      mimeType: "image/jpeg",
      fileName: null,
      caption: "our whiteboard",
      size: 88000,
      meta: { width: 1280, height: 853 },
    },
  ]);
  expect(photo.inbound.albumId).toBe("13579246801357924");
  expect(photo.inbound.text).toBe("our whiteboard");
  const voice = mapTelegramMessage(messageOf(telegramFixture("update-voice")), me)!.inbound;
  expect(voice).toMatchObject({ text: "", media: [{ kind: "audio", fileId: "AwACAgQAAxkBAAIBvoice", mimeType: "audio/ogg", voice: true, size: 9000 }] });
  expect(voice.media![0]!.meta).toEqual({ durationSeconds: 3 });
  expect(voice.media![0]!.url).toBeUndefined();
  expect(mapTelegramMessage(messageOf(telegramFixture("update-document")), me)!.inbound.media).toEqual([
    { kind: "file", fileId: "BQACAgQAAxkBAAIBdoc", mimeType: "application/pdf", fileName: "report.pdf", caption: "please summarise", size: 52000, meta: null },
  ]);
  // An audio file someone sent is not a voice note.
  const audio = {
    ...messageOf(telegramFixture("update-voice")),
    voice: undefined,
    audio: { file_id: "CQAC", file_unique_id: "u", duration: 60, mime_type: "audio/mpeg", file_name: "song.mp3" },
  };
  expect(mapTelegramMessage(audio as unknown as Message, me)!.inbound.media![0]).not.toHaveProperty("voice");
});

it("a photo takes the largest size a bot may download (20 MB); the smallest when none fits", () => {
  const base = messageOf(telegramFixture("update-photo-album"));
  const sizes = [
    { file_id: "small", file_unique_id: "s", file_size: 1_000, width: 90, height: 60 },
    { file_id: "medium", file_unique_id: "m", file_size: 15_000_000, width: 2560, height: 1706 },
    { file_id: "huge", file_unique_id: "h", file_size: 25_000_000, width: 5120, height: 3412 },
  ];
  expect(mapTelegramMessage({ ...base, photo: sizes } as Message, me)!.inbound.media![0]!.fileId).toBe("medium");
  const tooBig = sizes.map((size) => ({ ...size, file_size: size.file_size + 21_000_000 }));
  expect(mapTelegramMessage({ ...base, photo: tooBig } as Message, me)!.inbound.media![0]!.fileId).toBe("small");
});

it("edits get their own message id; channel posts map to channel sources; bots are flagged; service messages are skipped", () => {
  const edited = mapTelegramMessage(messageOf(telegramFixture("update-edited")), me, { edited: true })!;
  expect(edited.inbound.messageId).toBe("1:edited:1767225660");
  expect(edited.inbound.editOf).toBe("1");
  const post = mapTelegramMessage(messageOf(telegramFixture("update-channel-post")), me)!;
  expect(post.inbound.source).toMatchObject({ chatType: "channel", chatId: "-1005555555555", chatName: "Announcements" });
  expect(post.candidate.mentionsBot).toBe(true);
  const bot = mapTelegramMessage(messageOf(telegramFixture("update-from-bot")), me)!;
  expect(bot.candidate.fromBot).toBe(true);
  expect(bot.inbound.source.isBot).toBe(true);
  const service = { ...messageOf(telegramFixture("update-group-text")), text: undefined, new_chat_members: [] } as unknown as Message;
  expect(mapTelegramMessage(service, me)).toBeNull();
});

it("Markdown → Telegram HTML: supported tags, everything else escaped, and Telegram parses the result", () => {
  const samples = [
    "**bold** & `a<b` _it_ ~~del~~ [link](https://e.com/?a=1&b=2)",
    "# Heading\n\n- one\n- two\n\n1. first\n2. second",
    "> quoted <b>not html</b>",
    "```ts\nif (a < b && c > d) {}\n```",
    "<script>alert(1)</script> 5 > 3",
    "[bad](javascript:alert(1)) ![img](https://e.com/x.png)",
    "| a | b |\n|---|---|\n| 1 | 2 |",
  ];
  for (const sample of samples) {
    const html = markdownToTelegramHtml(sample);
    expect(parseTelegramHtml(html), `${sample} → ${html}`).not.toHaveProperty("error");
  }
  expect(markdownToTelegramHtml("**bold** & `a<b`")).toBe("<b>bold</b> &amp; <code>a&lt;b</code>");
  expect(markdownToTelegramHtml("```ts\nx < 1\n```")).toBe('<pre><code class="language-ts">x &lt; 1</code></pre>');
  expect(markdownToTelegramHtml("[bad](javascript:alert(1))")).toBe("bad");
  expect(markdownToTelegramHtml("<b>raw</b>")).toBe("&lt;b&gt;raw&lt;/b&gt;");
});

it("telegramRenderedLength counts what Telegram counts: the parsed text of the HTML, in UTF-16 code units", () => {
  for (const markdown of ["**bold** & `a<b`", "# Title\n\n- one\n- two\n\n---\n\n|a|b|\n|-|-|\n|1|2|", "emoji 😀 [link](https://x.dev?a=1&b=2)"]) {
    const parsed = parseTelegramHtml(markdownToTelegramHtml(markdown));
    if ("error" in parsed) throw new Error(parsed.error);
    expect(telegramRenderedLength(markdown), markdown).toBe(parsed.plain.length);
  }
  // A rule is 3 characters of Markdown and 6 rendered.
  expect(telegramRenderedLength("a\n\n---\n\nb")).toBeGreaterThan("a\n\n---\n\nb".length);
});
