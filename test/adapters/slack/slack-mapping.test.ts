/** The pure parts of the Slack adapter: event → source mapping and Markdown → mrkdwn. */
import { expect, it } from "vitest";
import { mapSlackEvent, markdownToSlackMrkdwn, neutralizeSlackBroadcasts, type SlackMessageEvent } from "../../../src/adapters/slack/index.js";
import { splitMessage } from "../../../src/adapters/chat/index.js";
import { buildSessionKey } from "../../../src/gateway/index.js";
import { slackFixture } from "../../fakes/slack/fake-slack-server.js";

const me = { userId: "U0BOT00001", botId: "B0BOT00001", teamId: "T0TEAM0001" };
const eventOf = (fixture: string, overrides: Partial<SlackMessageEvent> = {}): SlackMessageEvent => ({
  ...(slackFixture(fixture)["event"] as SlackMessageEvent),
  ...overrides,
});

it("a DM (message.im) maps to a dm source keyed by the conversation, with names from the look-ups and the team as scope", () => {
  const mapped = mapSlackEvent(eventOf("event-message-im"), me, { userName: "Alice Doe", chatKind: "im" })!;
  expect(mapped.inbound).toMatchObject({
    text: "hello there",
    messageId: "1700000001.000100",
    source: {
      platform: "slack",
      chatType: "dm",
      chatId: "D0ALICEDM1",
      userId: "U0ALICE001",
      userName: "Alice Doe",
      threadId: null,
      scopeId: "T0TEAM0001",
      isBot: false,
    },
  });
  expect(buildSessionKey(mapped.inbound.source)).toBe("agent:main:slack:dm:D0ALICEDM1");
});

it("channels: per-user keys; app_mention is addressed and loses the leading mention; private channels and group DMs are groups", () => {
  const plain = mapSlackEvent(eventOf("event-message-channel"), me)!;
  expect(plain.candidate).toMatchObject({ chatType: "channel", mentionsBot: false, inBotThread: false });
  expect(buildSessionKey(plain.inbound.source)).toBe("agent:main:slack:channel:C0GENERAL1:U0ALICE001");
  const mention = mapSlackEvent(eventOf("event-app-mention"), me, { chatName: "general", chatTopic: "Where the team talks", chatKind: "channel" })!;
  expect(mention.candidate.mentionsBot).toBe(true);
  expect(mention.inbound.text).toBe("what is the plan?");
  expect(mention.inbound.source).toMatchObject({ chatName: "general", chatTopic: "Where the team talks" });
  expect(mapSlackEvent(eventOf("event-message-channel", { channel_type: "group", channel: "G0PRIV0001" }), me)!.inbound.source.chatType).toBe("group");
  expect(mapSlackEvent(eventOf("event-message-channel", { channel_type: "mpim", channel: "G0MPIM0001" }), me)!.inbound.source.chatType).toBe("group");
  // app_mention has no channel_type: the look-up decides, else the id.
  expect(mapSlackEvent(eventOf("event-app-mention", { channel: "C0PRIV0002" }), me, { chatKind: "group" })!.inbound.source.chatType).toBe("group");
  expect(mapSlackEvent(eventOf("event-app-mention", { channel: "D0X" }), me)!.inbound.source.chatType).toBe("dm");
});

it("threads: thread_ts is the threadId, one shared key; the bot is in a thread it started or posted in", () => {
  const mapped = mapSlackEvent(eventOf("event-message-thread"), me)!;
  expect(mapped.inbound.source.threadId).toBe("1700000004.000100");
  expect(mapped.candidate.inBotThread).toBe(true);
  expect(buildSessionKey(mapped.inbound.source)).toBe("agent:main:slack:channel:C0GENERAL1:1700000004.000100");
  const other = eventOf("event-message-thread", { parent_user_id: "U0ALICE001" });
  expect(mapSlackEvent(other, me)!.candidate.inBotThread).toBe(false);
  expect(mapSlackEvent(other, me, {}, { botThreads: new Set(["C0GENERAL1:1700000004.000100"]) })!.candidate.inBotThread).toBe(true);
  // A thread's root (thread_ts equal to its own ts) is a top-level message.
  expect(mapSlackEvent(eventOf("event-message-channel", { thread_ts: "1700000002.000100" }), me)!.inbound.source.threadId).toBeNull();
});

it("bots, the bot itself, edits and joins; commands after a mention", () => {
  const bot = mapSlackEvent(eventOf("event-bot-message"), me)!;
  expect(bot.candidate).toMatchObject({ fromBot: true, fromSelf: false });
  expect(bot.inbound.source.isBot).toBe(true);
  expect(mapSlackEvent(eventOf("event-bot-message", { bot_id: "B0BOT00001" }), me)!.candidate.fromSelf).toBe(true);
  expect(mapSlackEvent(eventOf("event-message-channel", { subtype: "message_changed" }), me)).toBeNull();
  expect(mapSlackEvent(eventOf("event-message-channel", { subtype: "channel_join" }), me)).toBeNull();
  expect(mapSlackEvent(eventOf("event-app-mention", { text: "<@U0BOT00001> /new" }), me)!.inbound.text).toBe("/new");
  expect(mapSlackEvent(eventOf("event-message-im", { text: " /reset" }), me)!.inbound.text).toBe("/reset");
});

it("Markdown → mrkdwn: bold, italic, strike, code, links, quotes, lists; & < > escaped; user mentions kept, broadcasts not", () => {
  expect(markdownToSlackMrkdwn("**bold** _it_ ~~gone~~ `a<b`")).toBe("*bold* _it_ ~gone~ `a&lt;b`");
  expect(markdownToSlackMrkdwn("[docs](https://x.dev/a|b) and https://y.dev")).toBe("<https://x.dev/a%7Cb|docs> and <https://y.dev>");
  expect(markdownToSlackMrkdwn("# Title\n\n- one\n- two\n\n> quoted")).toBe("*Title*\n\n• one\n• two\n\n> quoted");
  expect(markdownToSlackMrkdwn("```ts\nif (a < b && c) {}\n```")).toBe("```\nif (a &lt; b &amp;&amp; c) {}\n```");
  expect(markdownToSlackMrkdwn("ask <@U0ALICE001> in <#C0GENERAL1> but not <!channel>")).toBe("ask <@U0ALICE001> in <#C0GENERAL1> but not &lt;!channel&gt;");
  expect(markdownToSlackMrkdwn("[x](javascript:alert(1))")).toBe("x");
});

it("chunks measured in mrkdwn stay within 3,000 characters even when escaping lengthens them", () => {
  const text = Array.from({ length: 40 }, (_, i) => `${i} ${"a<b & c>d ".repeat(20)}`).join("\n\n");
  const chunks = splitMessage(text, 3000, { measure: (t) => markdownToSlackMrkdwn(t).length });
  expect(chunks.length).toBeGreaterThan(2);
  for (const chunk of chunks) expect(markdownToSlackMrkdwn(chunk).length).toBeLessThanOrEqual(3000);
});

it("neutralizeSlackBroadcasts escapes <!channel>, <!here>, <!everyone>, <!group> and <!subteam^…> (with labels) and keeps user, channel and link references", () => {
  expect(neutralizeSlackBroadcasts("<!channel> <!here|here> <!everyone> <!group> <!subteam^S0123|@ops> hi")).toBe(
    "&lt;!channel&gt; &lt;!here|here&gt; &lt;!everyone&gt; &lt;!group&gt; &lt;!subteam^S0123|@ops&gt; hi",
  );
  expect(neutralizeSlackBroadcasts("<@U123> in <#C123|general>: <https://x.dev|docs> & <!date^1392734382^{date}|Feb 18>")).toBe(
    "<@U123> in <#C123|general>: <https://x.dev|docs> & <!date^1392734382^{date}|Feb 18>",
  );
  // Already-escaped mrkdwn is left as it is.
  const mrkdwn = markdownToSlackMrkdwn("ping <!channel>");
  expect(neutralizeSlackBroadcasts(mrkdwn)).toBe(mrkdwn);
});
