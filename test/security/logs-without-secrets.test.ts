/**
 * Threat (issue 27, point 7): the info log held what it must not: the full webhook callback
 * URL (whose path or query often is a secret), the route of a secret webhook path on every
 * request, failed reply payloads, and session keys that contain people's phone numbers
 * (WhatsApp, Signal). Logs are shipped, kept and read by more people than the chats are.
 * They now show an origin (or a hash: the first 12 hex digits of SHA-256, as session keys
 * elsewhere), never the value.
 *
 * A real `threadline serve` child at the default `info` level with Telegram in webhook mode
 * (grammY against the fake Bot API), WhatsApp and Signal against their fakes, and the
 * generic webhook with a loopback callback that refuses every reply; sends to WhatsApp,
 * Signal and the callback fail, so the failure lines are written too. Nothing of the secrets, the reply text or the users' numbers may
 * appear in the output.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SIGNAL_IDS, signalMessage, startFakeSignalServer } from "../fakes/signal/fake-signal-server.js";
import { startFakeTelegramServer, telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { postWhatsAppWebhook, whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, postWebhook, spawnGateway, waitFor } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-logs";
const APP_SECRET = "5f0e1d2c3b4a59687f6e5d4c3b2a1908";
const VERIFY_TOKEN = "threadline-verify-7f3a9c";
const TELEGRAM_USER = 111111;
/** A webhook path that is itself a secret, as many setups use. */
const TELEGRAM_PATH = "/tg/Hk3pQ9xWz7LmN2vB";
const TELEGRAM_SECRET = "tg-secret-token-5e8a1c9d7b3f";
const CALLBACK_PATH = "/replies/cb-9f8e7d6c5b4a";
const CALLBACK_QUERY = "key=callback-query-secret-1a2b3c";
const WEBHOOK_SECRET = "generic-webhook-secret-0123456789abcdef";
const WHATSAPP_USER = "16505551234";
const { bot: SIGNAL_BOT, alice: SIGNAL_ALICE } = SIGNAL_IDS;
/** What the users wrote; the failed replies repeat it (the fake model's default reply). */
const PRIVATE_TEXT = "my-diagnosis-is-confidential";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

describe("the info log", () => {
  it(
    "holds no webhook URL path or secret, no callback URL, no reply payload and no user's phone number",
    async () => {
      const telegram = await startFakeTelegramServer();
      const whatsapp = await startFakeWhatsAppServer();
      const signal = await startFakeSignalServer();
      const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
      // The reply callback: refuses every delivery (400, so the adapter gives up at once).
      let callbackHits = 0;
      const callback = createServer((req, res) => {
        callbackHits += 1;
        req.resume();
        req.on("end", () => res.writeHead(400).end());
      });
      await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
      const callbackOrigin = `http://127.0.0.1:${(callback.address() as AddressInfo).port}`;
      closers.push(() => new Promise<void>((resolve) => callback.close(() => resolve())));
      closers.push(
        () => telegram.close(),
        () => whatsapp.close(),
        () => signal.close(),
        () => model.close(),
      );
      const home = await makeHome({
        titles: { enabled: false },
        gateway: { logLevel: "info" },
        adapters: {
          apiServer: { enabled: false },
          webhook: { enabled: true, secret: WEBHOOK_SECRET, callbackUrl: `${callbackOrigin}${CALLBACK_PATH}?${CALLBACK_QUERY}` },
          telegram: {
            apiRoot: telegram.url,
            mode: "webhook",
            webhookUrl: `https://bot.example.com${TELEGRAM_PATH}`,
            secret: TELEGRAM_SECRET,
            allowedUsers: [TELEGRAM_USER],
          },
          whatsapp: { apiUrl: whatsapp.url, phoneNumberId: FAKE_PHONE_NUMBER_ID, allowedUsers: [WHATSAPP_USER] },
          signal: { apiUrl: signal.url, number: SIGNAL_BOT, allowedUsers: [SIGNAL_ALICE] },
        },
      });
      const gateway = await spawnGateway({
        home,
        env: {
          OPENAI_BASE_URL: model.url,
          OPENAI_API_KEY: FAKE_KEY,
          THREADLINE_MODEL: "fake-model",
          TELEGRAM_BOT_TOKEN: telegram.token,
          WHATSAPP_ACCESS_TOKEN: whatsapp.accessToken,
          WHATSAPP_APP_SECRET: APP_SECRET,
          WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
        },
      });
      await telegram.waitFor(() => telegram.webhook, "the webhook to be set");
      await signal.waitFor(() => signal.connected, "the signal receive WebSocket");

      // Telegram: one update through the secret path.
      const update = await fetch(`${gateway.url}${TELEGRAM_PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": TELEGRAM_SECRET },
        body: JSON.stringify({ ...telegramUpdate("update-private-text", { message_id: 1, text: PRIVATE_TEXT }), update_id: 900001 }),
      });
      expect(update.status).toBe(200);
      await telegram.waitFor(() => telegram.sentTo(TELEGRAM_USER)[0], "the telegram reply");

      // WhatsApp and Signal: the reply sends fail, so the failure is logged.
      whatsapp.failNext({ status: 400, body: "error-131047" }, 5);
      signal.failNext("POST", /\/v2\/send/u, { status: 400, body: { error: `Failed to send message to ${SIGNAL_ALICE}` } }, 5);
      const wa = await postWhatsAppWebhook(
        `${gateway.url}/whatsapp/webhook`,
        whatsappWebhook("webhook-text", { message: { from: WHATSAPP_USER, text: { body: PRIVATE_TEXT } }, contact: { wa_id: WHATSAPP_USER } }),
        { appSecret: APP_SECRET },
      );
      expect(wa.status).toBe(200);
      signal.push(signalMessage("receive-dm", { timestamp: 1767225600000, message: PRIVATE_TEXT }));
      const hook = await postWebhook(gateway.url, WEBHOOK_SECRET, { chatId: "room-1", userId: "webhook-user-1", text: PRIVATE_TEXT, messageId: "w1" });
      expect(hook.status).toBeLessThan(300);
      await waitFor(() => gateway.logLines().find((l) => l["msg"] === "webhook reply could not be delivered"), {
        what: "the failed callback delivery",
        timeoutMs: 60_000,
        describe: () => gateway.output(),
      });
      expect(callbackHits).toBeGreaterThan(0);
      await waitFor(() => gateway.logLines().filter((l) => l["msg"] === "sending to the platform failed").length >= 2 || null, {
        what: "the two failed sends in the log",
        timeoutMs: 60_000,
        describe: () => gateway.output(),
      });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });

      const output = gateway.output();
      for (const secret of [
        TELEGRAM_PATH,
        TELEGRAM_PATH.slice(4),
        TELEGRAM_SECRET,
        CALLBACK_PATH,
        CALLBACK_QUERY,
        WEBHOOK_SECRET,
        telegram.token,
        whatsapp.accessToken,
        APP_SECRET,
        VERIFY_TOKEN,
      ]) {
        expect(output, secret).not.toContain(secret);
      }
      expect(output).not.toContain(PRIVATE_TEXT);
      for (const number of [WHATSAPP_USER, SIGNAL_ALICE, SIGNAL_ALICE.slice(1)]) expect(output, number).not.toContain(number);
      // The operator can still tell where things go: the callback's origin and the failures are there.
      expect(output).toContain(callbackOrigin);
      expect(
        gateway
          .logLines()
          .filter((l) => l["msg"] === "sending to the platform failed")
          .every((l) => typeof l["keyHash"] === "string"),
      ).toBe(true);
    },
    TEST_TIMEOUT,
  );
});
