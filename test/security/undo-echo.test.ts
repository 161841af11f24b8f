/**
 * Threat (issue 27, point 7): `/undo` echoed the removed message back into the chat
 * (`Your last removed message was: "…"`). In a shared chat that shows one person's words
 * again to everyone after they chose to remove them, and on Slack it re-posted whatever
 * the text carried. The reply now says what was removed, never what it said.
 *
 * A real `threadline serve` child with Telegram (grammY against the fake Bot API).
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeTelegramServer, telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-undo-echo";
const TELEGRAM_USER = 111111;
const SECRET_WORDS = "my bank PIN is 4711-unique-words";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

describe("/undo", () => {
  it(
    "says what it removed without repeating the removed text",
    async () => {
      const telegram = await startFakeTelegramServer();
      const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
      closers.push(
        () => telegram.close(),
        () => model.close(),
      );
      const home = await makeHome({
        titles: { enabled: false },
        adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, allowedUsers: [TELEGRAM_USER] } },
      });
      await spawnGateway({
        home,
        env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", TELEGRAM_BOT_TOKEN: telegram.token },
      });

      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 1, text: SECRET_WORDS }));
      await telegram.waitFor(() => telegram.sentTo(TELEGRAM_USER)[0], "the reply");
      // The reply is delivered just before the turn ends: an /undo that comes first is refused, so ask again.
      let undo = null;
      for (let attempt = 1; attempt <= 20 && (undo === null || undo.plain.startsWith("A reply is still running")); attempt++) {
        const before = telegram.sentTo(TELEGRAM_USER).length;
        telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: attempt + 1, text: "/undo" }));
        undo = await telegram.waitFor(() => telegram.sentTo(TELEGRAM_USER)[before], "the /undo answer");
      }
      expect(undo!.plain).toMatch(/^Removed 1 message of yours and its reply\.$/u);
      expect(undo!.plain).not.toContain("4711");
      expect(undo!.plain).not.toContain("PIN");
    },
    TEST_TIMEOUT,
  );
});
