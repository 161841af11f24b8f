/**
 * End to end (issue 26, point 4): a handoff to a home channel binds the key that the home
 * chat's next real message carries, so the conversation goes on there in the handed-off
 * session. A REAL `threadline serve` child (the built bin, `npm run build` first) with the
 * Telegram adapter on the local fake Bot API (test/fakes/telegram) and the echo agent; the
 * terminal side (`requestHandoff`) runs in this test process on the same SQLite file. Each
 * home is set the way people set it, with `/sethome` in that chat: a direct chat (where, after
 * `/new`, `/resume <id>` takes the session back), a group (one session per person, the
 * default), and a forum topic (thread-capable: a new topic).
 */
import { afterEach, describe, expect, it } from "vitest";
import { requestHandoff } from "../../src/gateway/index.js";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway } from "./gateway-process.js";

const TEST_TIMEOUT = 90_000;
const DM = 111111;
const GROUP = -1001234567890;
const FORUM = -1009876543210;
const BOB = { id: 222222, first_name: "Bob", username: "bob" };
const DAN = { id: 555555, first_name: "Dan", username: "dan" };

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

function dm(messageId: number, text: string): Record<string, unknown> {
  return telegramUpdate("update-private-text", { message_id: messageId, text });
}

function mention(
  fixture: "update-group-mention" | "update-forum-topic",
  messageId: number,
  text: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return telegramUpdate(fixture, { message_id: messageId, text: `@threadline_test_bot ${text}`, ...extra });
}

/** A terminal session with one exchange. */
async function cliSession(db: SessionDB, title: string): Promise<string> {
  const { id } = await db.createSession({ source: "cli", title });
  await db.appendTurn(id, [
    { role: "user", content: `Plan ${title}` },
    { role: "assistant", content: "Freeze the API, then write the migration guide." },
  ]);
  return id;
}

/** What the people of a session said, in order. */
async function userTexts(db: SessionDB, id: string): Promise<string[]> {
  return (await db.getMessages(id)).filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

describe("threadline serve: a handoff continues where the home chat's next message lands", () => {
  it(
    "DM home, group home (per-person sessions) and forum-topic home, each set with /sethome: the next message there continues the handed-off session",
    async () => {
      const telegram: FakeTelegramServer = await startFakeTelegramServer();
      closers.push(() => telegram.close());
      // Everyone is answered (Dan talks in the group and the topic); the DM's owner and Bob set homes, so they are admins.
      const home = await makeHome({
        titles: { enabled: false },
        adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, access: "open", admins: [DM, BOB.id] } },
      });
      await spawnGateway({ home, env: { TELEGRAM_BOT_TOKEN: telegram.token } });
      const db = await openSessionDB(databaseOf(home));
      closers.push(() => db.close());
      const handoff = (sessionId: string) => requestHandoff(db, { sessionId, platform: "telegram" }, { homeChannels: {}, timeoutMs: 20_000, pollMs: 100 });

      // 1. A direct chat with the bot (the typical home): its key is the DM's own.
      telegram.pushUpdate(dm(1, "/sethome"));
      expect((await telegram.waitFor(() => telegram.sentTo(DM)[0], "the /sethome notice in the DM")).plain).toContain(
        "This chat is now the telegram home channel",
      );
      const inDm = await cliSession(db, "the DM release");
      const toDm = await handoff(inDm);
      expect(toDm).toMatchObject({ chatId: String(DM), threadId: null, sessionKey: `agent:main:telegram:dm:${DM}` });
      await telegram.waitFor(() => telegram.sentTo(DM)[1], "the summary in the DM");
      telegram.pushUpdate(dm(2, "what is next?"));
      await telegram.waitFor(() => telegram.sentTo(DM).find((m) => m.reply_to === 2), "the reply in the DM");
      expect(await userTexts(db, inDm)).toContain("what is next?");
      // After /new there, /resume <id> takes the handed-off session back.
      telegram.pushUpdate(dm(3, "/new"));
      await telegram.waitFor(() => telegram.sentTo(DM).find((m) => m.plain.startsWith("Started a new session")), "the /new notice");
      telegram.pushUpdate(dm(4, `/resume ${inDm}`));
      expect((await telegram.waitFor(() => telegram.sentTo(DM).find((m) => m.reply_to === 4), "the /resume answer")).plain).toMatch(/^Resumed the DM release/);
      telegram.pushUpdate(dm(5, "and back"));
      await telegram.waitFor(() => telegram.sentTo(DM).find((m) => m.reply_to === 5), "the reply after /resume");
      expect(await userTexts(db, inDm)).toContain("and back");

      // 2. A group, one session per person (the default): the lane of whoever sent /sethome.
      telegram.pushUpdate(mention("update-group-mention", 10, "/sethome", { from: BOB }));
      expect((await telegram.waitFor(() => telegram.sentTo(GROUP)[0], "the /sethome notice in the group")).plain).toContain(
        "This chat is now the telegram home channel",
      );
      const inGroup = await cliSession(db, "the group release");
      const toGroup = await handoff(inGroup);
      expect(toGroup).toMatchObject({ chatId: String(GROUP), threadId: null, sessionKey: `agent:main:telegram:group:${GROUP}:${BOB.id}` });
      await telegram.waitFor(() => telegram.sentTo(GROUP)[1], "the summary in the group");
      telegram.pushUpdate(mention("update-group-mention", 11, "and now?", { from: BOB }));
      await telegram.waitFor(() => telegram.sentTo(GROUP).find((m) => m.reply_to === 11), "Bob's reply in the group");
      expect(await userTexts(db, inGroup)).toContain("and now?");
      // Another member keeps a session of their own.
      telegram.pushUpdate(mention("update-group-mention", 12, "who am I?", { from: DAN }));
      await telegram.waitFor(() => telegram.sentTo(GROUP).find((m) => m.reply_to === 12), "Dan's reply in the group");
      expect(await userTexts(db, inGroup)).not.toContain("who am I?");

      // 3. A forum topic (thread-capable): a new topic, shared by whoever writes in it.
      telegram.pushUpdate(mention("update-forum-topic", 20, "/sethome", { from: BOB }));
      expect((await telegram.waitFor(() => telegram.sentTo(FORUM, 77)[0], "the /sethome notice in the topic")).plain).toContain("opens a new thread here");
      const inTopic = await cliSession(db, "the topic release");
      const toTopic = await handoff(inTopic);
      expect(toTopic.threadId).not.toBeNull();
      expect(toTopic).toMatchObject({ chatId: String(FORUM), sessionKey: `agent:main:telegram:group:${FORUM}:${toTopic.threadId}` });
      const topic = Number(toTopic.threadId);
      await telegram.waitFor(() => telegram.sentTo(FORUM, topic)[0], "the summary in the new topic");
      telegram.pushUpdate(mention("update-forum-topic", 21, "over to you", { from: DAN, message_thread_id: topic }));
      await telegram.waitFor(() => telegram.sentTo(FORUM, topic).find((m) => m.reply_to === 21), "the reply in the new topic");
      expect(await userTexts(db, inTopic)).toContain("over to you");
    },
    TEST_TIMEOUT,
  );
});
