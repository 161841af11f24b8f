/**
 * End to end: `threadline serve` as a child process with the Telegram adapter, talking to
 * the local fake Bot API (test/fakes/telegram) through `adapters.telegram.apiRoot`, with the
 * fake OpenAI-compatible provider as the model. Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeTelegramServer, telegramFixture, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, freePort, makeHome, runServe, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-telegram-e2e";
const DM = 111111;
const GROUP = -1001234567890;
const FORUM = -1009876543210;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<{ telegram: FakeTelegramServer; model: FakeOpenAiServer }> {
  const telegram = await startFakeTelegramServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => telegram.close(),
    () => model.close(),
  );
  return { telegram, model };
}

function setupHome(telegram: FakeTelegramServer, extra: Record<string, unknown> = {}): Promise<string> {
  return makeHome({
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, ...openUnlessRestricted(extra) } },
  });
}

/**
 * These tests rely on everyone being answered (`access: open`), unless a test restricts who
 * may talk (`allowedUsers` or its own `access`).
 */
function openUnlessRestricted(extra: Record<string, unknown>): Record<string, unknown> {
  return "allowedUsers" in extra || "access" in extra ? extra : { access: "open", ...extra };
}

function env(telegram: FakeTelegramServer, model: FakeOpenAiServer): Record<string, string> {
  return { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", TELEGRAM_BOT_TOKEN: telegram.token };
}

function dm(messageId: number, body: string, from: Record<string, unknown> = {}): Record<string, unknown> {
  return telegramUpdate("update-private-text", {
    message_id: messageId,
    text: body,
    ...(Object.keys(from).length > 0 ? { from, chat: { id: from["id"] } } : {}),
  });
}

function mention(
  fixture: "update-group-mention" | "update-forum-topic",
  messageId: number,
  body: string,
  from: Record<string, unknown> = {},
): Record<string, unknown> {
  return telegramUpdate(fixture, { message_id: messageId, text: `@threadline_test_bot ${body}`, from });
}

function expectNoToken(gateway: GatewayProcess, telegram: FakeTelegramServer): void {
  expect(gateway.output()).not.toContain(telegram.token);
  expect(gateway.output()).not.toContain(encodeURIComponent(telegram.token));
}

describe("threadline serve with Telegram", () => {
  it(
    "starts with the adapter, its mode and the bot identity; a DM keeps its context across turns; the token never appears",
    async () => {
      const { telegram, model } = await fakes();
      const home = await setupHome(telegram);
      const gateway = await spawnGateway({ home, env: env(telegram, model) });
      await waitFor(() => gateway.logLines().find((l) => l["platform"] === "telegram" && l["bot"] === "@threadline_test_bot" && l["mode"] === "polling"), {
        what: "the telegram startup line",
        describe: () => gateway.output(),
      });
      telegram.pushUpdate(dm(1, "my name is Zed"));
      await telegram.waitFor(() => telegram.sentTo(DM)[0], "the first reply");
      telegram.pushUpdate(dm(2, "what is my name?"));
      await telegram.waitFor(() => telegram.sentTo(DM)[1], "the second reply");
      expect(dialogue(await requestFor(model, "what is my name?"))).toEqual([
        ["user", "my name is Zed"],
        ["assistant", "Reply to: my name is Zed"],
        ["user", "what is my name?"],
      ]);
      expect(telegram.sentTo(DM).map((m) => [m.plain, m.reply_to])).toEqual([
        ["Reply to: my name is Zed", 1],
        ["Reply to: what is my name?", 2],
      ]);
      const status = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      expect(status).not.toContain(telegram.token);
      // access: open answers everyone, and the startup log warns about it once.
      expect(gateway.logLines().filter((l) => l["level"] === 40 && String(l["msg"]).includes("adapters.telegram.access is open"))).toHaveLength(1);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, telegram);
    },
    TEST_TIMEOUT,
  );

  it(
    "groups: no mention → ignored and not stored; mentions answered with one session per user; a forum topic is one shared session",
    async () => {
      const { telegram, model } = await fakes();
      const home = await setupHome(telegram);
      const gateway = await spawnGateway({ home, env: env(telegram, model) });
      telegram.pushUpdate(telegramUpdate("update-group-text", { message_id: 10, text: "nobody asked the bot" }));
      telegram.pushUpdate(mention("update-group-mention", 11, "bob here"));
      telegram.pushUpdate(mention("update-group-mention", 12, "dan here", { id: 555555, first_name: "Dan", username: "dan" }));
      telegram.pushUpdate(mention("update-forum-topic", 13, "topic from bob"));
      telegram.pushUpdate(mention("update-forum-topic", 14, "topic from dan", { id: 555555, first_name: "Dan", username: "dan" }));
      await telegram.waitFor(() => telegram.sentTo(GROUP).length === 2 && telegram.sentTo(FORUM).length === 2, "four replies");
      expect(
        telegram
          .sentTo(GROUP)
          .map((m) => m.reply_to)
          .sort(),
      ).toEqual([11, 12]);
      expect(telegram.sentTo(FORUM).map((m) => m.message_thread_id)).toEqual([77, 77]);
      // The topic is shared: each message of a turn reaches the model with its sender (issue 26, point 5).
      const second = await requestFor(model, "[Dan] topic from dan");
      expect(dialogue(second).map(([, t]) => t)).toEqual(["topic from bob", "Reply to: [Bob] topic from bob", "[Dan] topic from dan"]);
      expect(model.chatRequests().some((r) => dialogue(r).some(([, t]) => t.includes("nobody asked")))).toBe(false);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const keys = (await db.listRoutes()).items.map((r) => r.key).sort();
        expect(keys).toEqual(
          [`agent:main:telegram:group:${FORUM}:77`, `agent:main:telegram:group:${GROUP}:222222`, `agent:main:telegram:group:${GROUP}:555555`].sort(),
        );
        expect(await db.searchMessages("nobody")).toHaveLength(0);
      });
      expectNoToken(gateway, telegram);
    },
    TEST_TIMEOUT,
  );

  it(
    "/new starts a new session with a notice; /sethome makes the chat the home channel and /status shows it",
    async () => {
      const { telegram, model } = await fakes();
      // Only an admin may /sethome.
      const home = await setupHome(telegram, { access: "open", admins: [DM] });
      const gateway = await spawnGateway({ home, env: env(telegram, model) });
      telegram.pushUpdate(dm(1, "first topic"));
      await telegram.waitFor(() => telegram.sentTo(DM)[0], "the first reply");
      telegram.pushUpdate(dm(2, "/new"));
      const notice = await telegram.waitFor(() => telegram.sentTo(DM)[1], "the /new notice");
      expect(notice.plain).toMatch(/^Started a new session \(\d{8}_\d{6}_[0-9a-f]{8}\)/u);
      expect(notice.parse_mode).toBeNull();
      telegram.pushUpdate(dm(3, "second topic"));
      await telegram.waitFor(() => telegram.sentTo(DM)[2], "the reply in the new session");
      expect(dialogue(await requestFor(model, "second topic"))).toEqual([["user", "second topic"]]);
      telegram.pushUpdate(dm(4, "/status"));
      const before = await telegram.waitFor(() => telegram.sentTo(DM)[3], "the first /status");
      expect(before.plain).toContain("Home channel (telegram): none; send /sethome");
      telegram.pushUpdate(dm(5, "/sethome"));
      await telegram.waitFor(() => telegram.sentTo(DM)[4], "the /sethome notice");
      expect(telegram.sentTo(DM)[4]!.plain).toContain("This chat is now the telegram home channel");
      telegram.pushUpdate(dm(6, "/status"));
      const after = await telegram.waitFor(() => telegram.sentTo(DM)[5], "the second /status");
      expect(after.plain).toContain("Home channel (telegram): Alice Doe (this chat)");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, telegram);
    },
    TEST_TIMEOUT,
  );

  it(
    "a 6,000-character reply arrives as ordered chunks within 4,096; a 429 is waited out and retried",
    async () => {
      const { telegram, model } = await fakes();
      const paragraphs = Array.from({ length: 60 }, (_, i) => `Paragraph ${String(i).padStart(2, "0")}: ${"words ".repeat(16).trim()}.`);
      const long = paragraphs.join("\n\n");
      expect(long.length).toBeGreaterThan(6000);
      model.enqueue(fakeTextReply(long));
      telegram.failNext("sendMessage", { status: 429, body: telegramFixture("error-429") });
      const home = await setupHome(telegram);
      const gateway = await spawnGateway({ home, env: env(telegram, model) });
      telegram.pushUpdate(dm(1, "write a lot"));
      await telegram.waitFor(() => telegram.sentTo(DM).length >= 2, "the chunks");
      // The barrier: the next message of the chat is answered only after the long reply's turn
      // (every chunk of it) is done.
      telegram.pushUpdate(dm(2, "and now briefly"));
      await telegram.waitFor(() => telegram.sentTo(DM).find((m) => m.reply_to === 2), "the reply after the chunks");
      expect(telegram.sentTo(DM).at(-1)!.plain).toBe("Reply to: and now briefly");
      const chunks = telegram.sentTo(DM).slice(0, -1);
      expect(chunks).toHaveLength(2);
      for (const chunk of chunks) expect(chunk.plain.length).toBeLessThanOrEqual(4096);
      expect(chunks.map((c) => c.plain).join("\n\n")).toBe(long);
      expect(chunks.map((c) => c.reply_to)).toEqual([1, null]);
      expect(telegram.callsOf("sendMessage").map((c) => c.status)).toEqual([429, 200, 200, 200]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(gateway, telegram);
    },
    TEST_TIMEOUT,
  );

  it(
    "SIGKILL during a turn: after the restart the reply reaches the chat exactly once",
    async () => {
      const { telegram, model } = await fakes();
      let slow = true;
      model.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 60_000 } : null));
      const home = await setupHome(telegram);
      const first = await spawnGateway({ home, env: env(telegram, model) });
      telegram.pushUpdate(dm(1, "a slow question"));
      await requestFor(model, "a slow question");
      // The update was confirmed by the next getUpdates (its offset) once it was stored.
      await telegram.waitFor(() => telegram.pendingUpdates() === 0 || null, "the update confirmed");
      expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
      expect(telegram.sentTo(DM)).toEqual([]);

      slow = false;
      const restartedAt = model.requests.length;
      const second = await spawnGateway({ home, env: env(telegram, model) });
      await requestFor(model, "a slow question", restartedAt);
      await telegram.waitFor(() => telegram.sentTo(DM)[0], "the resumed reply");
      // Redelivery of the same update (as Telegram does when an offset was not confirmed) is no second turn.
      telegram.pushUpdate(dm(1, "a slow question"));
      telegram.pushUpdate(dm(2, "a later question"));
      await telegram.waitFor(() => telegram.sentTo(DM)[1], "the reply to the later question");
      // The later question is admitted after the redelivery (one chat's messages are admitted in
      // arrival order) and runs after any turn the redelivery could have started: its reply is the barrier.
      expect(telegram.sentTo(DM).map((m) => [m.plain, m.reply_to])).toEqual([
        ["Reply to: a slow question", 1],
        ["Reply to: a later question", 2],
      ]);
      expect(await second.stop()).toEqual({ code: 0, signal: null });
      expectNoToken(first, telegram);
      expectNoToken(second, telegram);
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses to start without a token, naming the key and the variable (exit 2); a refused token stops the start without printing it",
    async () => {
      const { telegram, model } = await fakes();
      const home = await setupHome(telegram);
      const missing = await runServe({ home, env: { ...env(telegram, model), TELEGRAM_BOT_TOKEN: undefined } });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("adapters.telegram.token: missing: set it in the config file or in the TELEGRAM_BOT_TOKEN environment variable");
      const wrong = "999:not-the-right-token";
      const refused = await runServe({ home, env: { ...env(telegram, model), TELEGRAM_BOT_TOKEN: wrong } });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr + refused.stdout).toContain("Telegram refused the bot token");
      expect(refused.stderr + refused.stdout).not.toContain("not-the-right-token");
    },
    TEST_TIMEOUT,
  );

  it(
    "webhook mode: the route on the gateway's port needs the secret token; setWebhook is called with it",
    async () => {
      const { telegram, model } = await fakes();
      const port = await freePort();
      const secret = "webhook-secret_0123";
      const home = await setupHome(telegram, { mode: "webhook", webhookUrl: `http://127.0.0.1:${port}/telegram/updates`, secret });
      const gateway = await spawnGateway({ home, env: env(telegram, model), port });
      expect(telegram.webhook).toEqual({ url: `http://127.0.0.1:${port}/telegram/updates`, secret });
      const update = { ...dm(7, "hello via webhook"), update_id: 42 };
      const post = (headers: Record<string, string>) =>
        fetch(`${gateway.url}/telegram/updates`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(update) });
      expect((await post({})).status).toBe(401);
      expect((await post({ "x-telegram-bot-api-secret-token": secret })).status).toBe(200);
      const reply = await telegram.waitFor(() => telegram.sentTo(DM)[0], "the reply");
      expect(reply.plain).toBe("Reply to: hello via webhook");
      expect(telegram.callsOf("getUpdates")).toEqual([]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expect(gateway.output()).not.toContain(secret);
      expectNoToken(gateway, telegram);
    },
    TEST_TIMEOUT,
  );
});
