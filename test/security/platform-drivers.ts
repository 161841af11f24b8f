/**
 * Drives `threadline serve` on each chat platform through its local protocol fake
 * (test/fakes/<platform>), for the security tests: start the fake and a gateway, send a DM
 * (or a group message) as a given person, and read what the bot sent to that chat. The same
 * calls as the platform e2e tests (test/serve/<platform>-e2e.test.ts), kept small.
 *
 * @module
 */
import { DISCORD_IDS, discordMessage, startFakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { MATRIX_IDS, startFakeMatrixHomeserver } from "../fakes/matrix/fake-matrix-homeserver.js";
import { SIGNAL_IDS, signalMessage, startFakeSignalServer } from "../fakes/signal/fake-signal-server.js";
import { startFakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { startFakeTelegramServer, telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { postWhatsAppWebhook, whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor, type GatewayProcess } from "../serve/gateway-process.js";

/** The chat platforms with a protocol fake. */
export const PLATFORMS = ["telegram", "slack", "discord", "whatsapp", "signal", "matrix"] as const;
export type Platform = (typeof PLATFORMS)[number];

const FAKE_KEY = "sk-fake-security";
const SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const WA_SECRET = "5f0e1d2c3b4a59687f6e5d4c3b2a1908";
const WA_VERIFY = "threadline-verify-7f3a9c";

/** One platform's fake, ready to be pointed at by a gateway. */
export interface PlatformDriver {
  platform: Platform;
  model: FakeOpenAiServer;
  /** The DM sender's user id, as the platform reports it. */
  strangerId: string;
  /** `adapters.<platform>` of the config (plus `extra`). */
  section(extra?: Record<string, unknown>): Record<string, unknown>;
  /** The environment a gateway needs for this platform and the fake model. */
  env: Record<string, string>;
  /** Waits until the adapter is connected. */
  started(gateway: GatewayProcess): Promise<void>;
  /** Sends a DM to the bot from the stranger. */
  sendDm(gateway: GatewayProcess, text: string): Promise<void>;
  /** The texts the bot sent to the stranger's DM. */
  dmReplies(): string[];
  /** Every text the bot sent anywhere on the platform. */
  allSent(): string[];
  close(): Promise<void>;
}

/** Starts the fake of a platform and the fake model. */
export async function startPlatform(platform: Platform): Promise<PlatformDriver> {
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  const modelEnv = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" };
  let n = 0;
  switch (platform) {
    case "telegram": {
      const fake = await startFakeTelegramServer();
      return {
        platform,
        model,
        strangerId: "111111",
        section: (extra = {}) => ({ apiRoot: fake.url, ...extra }),
        env: { ...modelEnv, TELEGRAM_BOT_TOKEN: fake.token },
        started: async (gateway) => {
          await waitFor(() => gateway.logLines().find((l) => l["platform"] === "telegram" && l["mode"] === "polling"), {
            what: "the telegram startup line",
            describe: () => gateway.output(),
          });
        },
        sendDm: async (_gateway, text) => {
          fake.pushUpdate(telegramUpdate("update-private-text", { message_id: 100 + ++n, text }));
        },
        dmReplies: () => fake.sentTo(111111).map((m) => m.plain),
        allSent: () => fake.callsOf("sendMessage").map((c) => String(c.params["text"] ?? "")),
        close: async () => {
          await fake.close();
          await model.close();
        },
      };
    }
    case "slack": {
      const fake = await startFakeSlackServer();
      const dm = "D0ALICEDM1";
      return {
        platform,
        model,
        strangerId: "U0ALICE001",
        section: (extra = {}) => ({ apiUrl: fake.url, ...extra }),
        env: { ...modelEnv, SLACK_BOT_TOKEN: fake.botToken, SLACK_SIGNING_SECRET: SLACK_SECRET },
        started: async (gateway) => {
          await waitFor(() => gateway.logLines().find((l) => l["platform"] === "slack" && l["mode"] === "events"), {
            what: "the slack startup line",
            describe: () => gateway.output(),
          });
        },
        sendDm: async (gateway, text) => {
          const answer = await postSlackEvent(`${gateway.url}/slack/events`, slackEvent("event-message-im", { ts: slackTs(), text }), {
            signingSecret: SLACK_SECRET,
          });
          if (answer.status !== 200) throw new Error(`slack event answered ${answer.status}`);
        },
        dmReplies: () => fake.sentTo(dm).map((m) => m.text),
        allSent: () => fake.sentTo(dm).map((m) => m.text),
        close: async () => {
          await fake.close();
          await model.close();
        },
      };
    }
    case "discord": {
      const fake = await startFakeDiscordServer();
      return {
        platform,
        model,
        strangerId: String((discordMessage("message-dm", {})["author"] as Record<string, unknown>)["id"]),
        section: (extra = {}) => ({ apiUrl: fake.url, ...extra }),
        env: { ...modelEnv, DISCORD_BOT_TOKEN: fake.token },
        started: async (gateway) => {
          await waitFor(() => gateway.logLines().find((l) => l["platform"] === "discord" && l["mode"] === "gateway"), {
            what: "the discord startup line",
            describe: () => gateway.output(),
          });
          await fake.waitFor(() => fake.connected, "the gateway connection");
        },
        sendDm: async (_gateway, text) => {
          fake.pushMessage(discordMessage("message-dm", { id: String(1500000000000000100n + BigInt(++n)), content: text }));
        },
        dmReplies: () => fake.sentTo(DISCORD_IDS.dm).map((m) => m.content),
        allSent: () => fake.sentTo(DISCORD_IDS.dm).map((m) => m.content),
        close: async () => {
          await fake.close();
          await model.close();
        },
      };
    }
    case "whatsapp": {
      const fake = await startFakeWhatsAppServer();
      const user = "16505551234";
      return {
        platform,
        model,
        strangerId: user,
        section: (extra = {}) => ({ apiUrl: fake.url, phoneNumberId: FAKE_PHONE_NUMBER_ID, ...extra }),
        env: { ...modelEnv, WHATSAPP_ACCESS_TOKEN: fake.accessToken, WHATSAPP_APP_SECRET: WA_SECRET, WHATSAPP_VERIFY_TOKEN: WA_VERIFY },
        started: async (gateway) => {
          await waitFor(() => gateway.logLines().find((l) => l["platform"] === "whatsapp" && l["mode"] === "webhook"), {
            what: "the whatsapp startup line",
            describe: () => gateway.output(),
          });
        },
        sendDm: async (gateway, text) => {
          const payload = whatsappWebhook("webhook-text", {
            message: { from: user, text: { body: text } },
            contact: { wa_id: user, profile: { name: "Sheena Nelson" } },
          });
          const answer = await postWhatsAppWebhook(`${gateway.url}/whatsapp/webhook`, payload, { appSecret: WA_SECRET });
          if (answer.status !== 200) throw new Error(`whatsapp webhook answered ${answer.status}`);
        },
        dmReplies: () => fake.sentTo(user).map((m) => m.body),
        allSent: () => fake.sentTo(user).map((m) => m.body),
        close: async () => {
          await fake.close();
          await model.close();
        },
      };
    }
    case "signal": {
      const fake = await startFakeSignalServer();
      return {
        platform,
        model,
        strangerId: SIGNAL_IDS.alice,
        section: (extra = {}) => ({ apiUrl: fake.url, number: SIGNAL_IDS.bot, ...extra }),
        env: modelEnv,
        started: async (gateway) => {
          await waitFor(() => gateway.logLines().find((l) => l["platform"] === "signal" && String(l["msg"]).startsWith("signal adapter connected")), {
            what: "the signal startup line",
            describe: () => gateway.output(),
          });
          await fake.waitFor(() => fake.connected, "the receive WebSocket");
        },
        sendDm: async (_gateway, text) => {
          fake.push(signalMessage("receive-dm", { timestamp: 1767225600000 + ++n * 1000, message: text }));
        },
        dmReplies: () => fake.sentTo(SIGNAL_IDS.alice).map((m) => m.message),
        allSent: () => fake.sent.map((m) => m.message),
        close: async () => {
          await fake.close();
          await model.close();
        },
      };
    }
    case "matrix": {
      const fake = await startFakeMatrixHomeserver({ maxPollMs: 2_000 });
      return {
        platform,
        model,
        strangerId: MATRIX_IDS.alice,
        section: (extra = {}) => ({ homeserverUrl: fake.url, ...extra }),
        env: { ...modelEnv, MATRIX_ACCESS_TOKEN: fake.token },
        started: async (gateway) => {
          await waitFor(
            () => gateway.logLines().find((l) => l["platform"] === "matrix" && l["mode"] === "sync" && String(l["msg"]).startsWith("matrix adapter connected")),
            { what: "the matrix startup line", describe: () => gateway.output() },
          );
        },
        sendDm: async (_gateway, text) => {
          fake.pushMessage(MATRIX_IDS.dm, MATRIX_IDS.alice, text);
        },
        dmReplies: () => fake.sentTo(MATRIX_IDS.dm).map((s) => String(s.content["body"])),
        allSent: () => fake.sentTo(MATRIX_IDS.dm).map((s) => String(s.content["body"])),
        close: async () => {
          await fake.close();
          await model.close();
        },
      };
    }
  }
}

/** The pairing code in the bot's reply (8 characters of the pairing alphabet), or null. */
export function codeIn(text: string): string | null {
  return /\b([A-HJ-NP-Z2-9]{8})\b/u.exec(text)?.[1] ?? null;
}

/** Waits until the bot has sent `count` texts to the stranger's DM. */
export async function dmRepliesAtLeast(driver: PlatformDriver, count: number, what: string): Promise<string[]> {
  return waitFor(() => (driver.dmReplies().length >= count ? driver.dmReplies() : undefined), {
    what,
    timeoutMs: 20_000,
    describe: () => JSON.stringify(driver.dmReplies()),
  });
}
