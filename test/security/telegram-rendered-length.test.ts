/**
 * Threat (issue 27, point 7): Telegram replies were split by the length of the model's
 * Markdown, not by what Telegram counts (the text after the HTML is parsed, in UTF-16 code
 * units, at most 4,096). A reply whose Markdown fits but whose rendered text does not was
 * refused with "message is too long", and since that error was not in the fallback list,
 * the reply (and every chunk after it) was lost.
 *
 * A real `threadline serve` child with Telegram (grammY) against the fake Bot API, which
 * enforces the documented limit with Telegram's own error payload.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeTelegramServer, telegramFixture, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-telegram-length";
const TELEGRAM_USER = 111111;
const LIMIT = 4096;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function start(): Promise<{ telegram: FakeTelegramServer; model: FakeOpenAiServer }> {
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
  return { telegram, model };
}

/** Numbered sections between rules: each `---` (3 characters) renders as a 6-character line; 😀 counts 2 UTF-16 units. */
function sections(count: number): string {
  return Array.from({ length: count }, (_, i) => `part ${String(i).padStart(4, "0")} 😀`).join("\n\n---\n\n");
}

/** Every `part NNNN` in the text, in order. */
function parts(text: string): string[] {
  return [...text.matchAll(/part (\d{4})/gu)].map((m) => m[1]!);
}

describe("Telegram rendered length", () => {
  it(
    "a reply whose Markdown is under 4,096 but whose rendered text is over is split so that every chunk is accepted and nothing is lost",
    async () => {
      const { telegram, model } = await start();
      const markdown = sections(215);
      expect(markdown.length).toBeLessThan(LIMIT);
      model.enqueue(fakeTextReply(markdown));
      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 1, text: "write it all" }));
      await telegram.waitFor(
        () =>
          parts(
            telegram
              .sentTo(TELEGRAM_USER)
              .map((m) => m.plain)
              .join("\n"),
          ).length === 215,
        "every part of the reply",
      );
      const sent = telegram.sentTo(TELEGRAM_USER);
      expect(sent.length).toBeGreaterThan(1);
      for (const message of sent) expect(message.plain.length).toBeLessThanOrEqual(LIMIT);
      expect(parts(sent.map((m) => m.plain).join("\n"))).toEqual(parts(markdown));
      expect(telegram.callsOf("sendMessage").every((c) => c.status === 200)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    "a 'message is too long' refusal is re-split and sent, and the chunks after it still arrive",
    async () => {
      const { telegram, model } = await start();
      const markdown = sections(600);
      model.enqueue(fakeTextReply(markdown));
      // Telegram refuses the first chunk (e.g. it counts something differently from us).
      telegram.failNext("sendMessage", { status: 400, body: telegramFixture("error-400-too-long") });
      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 1, text: "write it all" }));
      await telegram.waitFor(
        () =>
          parts(
            telegram
              .sentTo(TELEGRAM_USER)
              .map((m) => m.plain)
              .join("\n"),
          ).length === 600,
        "every part of the reply",
      );
      expect(
        parts(
          telegram
            .sentTo(TELEGRAM_USER)
            .map((m) => m.plain)
            .join("\n"),
        ),
      ).toEqual(parts(markdown));
      expect(telegram.callsOf("sendMessage").filter((c) => c.status === 400)).toHaveLength(1);
    },
    TEST_TIMEOUT,
  );
});
