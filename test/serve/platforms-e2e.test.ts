/**
 * End to end: ONE `threadline serve` child process configured for Telegram, Slack and Discord
 * at once, each talking to its local fake (test/fakes/telegram, test/fakes/slack,
 * test/fakes/discord) through its API base URL setting, with the fake OpenAI-compatible
 * provider as the model. The tokens come from the environment. Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DISCORD_IDS, discordMessage, startFakeDiscordServer, type FakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { startFakeSlackServer, type FakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-platforms-e2e";
const SIGNING_SECRET = "5c1f0e2d3b4a69788796a5b4c3d2e1f0";
const TELEGRAM_DM = 111111;
const SLACK_DM = "D0ALICEDM1";
const DISCORD_DM = DISCORD_IDS.dm;

interface Fakes {
  telegram: FakeTelegramServer;
  slack: FakeSlackServer;
  discord: FakeDiscordServer;
  model: FakeOpenAiServer;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<Fakes> {
  const telegram = await startFakeTelegramServer();
  closers.push(() => telegram.close());
  const slack = await startFakeSlackServer();
  closers.push(() => slack.close());
  const discord = await startFakeDiscordServer();
  closers.push(() => discord.close());
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(() => model.close());
  return { telegram, slack, discord, model };
}

function setupHome({ telegram, slack, discord }: Fakes): Promise<string> {
  return makeHome({
    titles: { enabled: false },
    adapters: {
      apiServer: { enabled: false },
      // These tests rely on everyone being answered.
      telegram: { apiRoot: telegram.url, access: "open" },
      slack: { apiUrl: slack.url, access: "open" },
      discord: { apiUrl: discord.url, gatewayUrl: discord.gatewayUrl, access: "open" },
    },
  });
}

function env({ telegram, slack, discord, model }: Fakes): Record<string, string> {
  return {
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: FAKE_KEY,
    THREADLINE_MODEL: "fake-model",
    TELEGRAM_BOT_TOKEN: telegram.token,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    DISCORD_BOT_TOKEN: discord.token,
  };
}

/** Every secret the gateway was given, and the URL-encoded forms a request log could show. */
function secrets({ telegram, slack, discord }: Fakes): string[] {
  const raw = [telegram.token, slack.botToken, SIGNING_SECRET, discord.token];
  return [...new Set([...raw, ...raw.map((s) => encodeURIComponent(s))])];
}

/** One DM sender per platform, each numbering its own messages. */
function senders(gateway: GatewayProcess, { telegram, discord }: Fakes) {
  let telegramId = 0;
  let discordId = 1500000000000000100n;
  return {
    telegram: async (body: string): Promise<void> => {
      telegramId += 1;
      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: telegramId, text: body }));
    },
    slack: async (body: string): Promise<void> => {
      const answer = await postSlackEvent(`${gateway.url}/slack/events`, slackEvent("event-message-im", { ts: slackTs(), text: body }), {
        signingSecret: SIGNING_SECRET,
      });
      expect(answer.status).toBe(200);
    },
    discord: async (body: string): Promise<void> => {
      discordId += 1n;
      discord.pushMessage(discordMessage("message-dm", { id: String(discordId), content: body }));
    },
  };
}

/** The replies each platform's DM got so far, as plain text. */
function replies({ telegram, slack, discord }: Fakes): { telegram: string[]; slack: string[]; discord: string[] } {
  return {
    telegram: telegram.sentTo(TELEGRAM_DM).map((m) => m.plain),
    slack: slack.sentTo(SLACK_DM).map((m) => m.text),
    discord: discord.sentTo(DISCORD_DM).map((m) => m.content),
  };
}

async function waitForReplies(f: Fakes, counts: { telegram: number; slack: number; discord: number }, what: string): Promise<void> {
  await waitFor(
    () => {
      const now = replies(f);
      return now.telegram.length >= counts.telegram && now.slack.length >= counts.slack && now.discord.length >= counts.discord;
    },
    { what, timeoutMs: 30_000, describe: () => JSON.stringify(replies(f)) },
  );
}

describe("threadline serve with Telegram, Slack and Discord at once", () => {
  it(
    "lists each adapter with its mode and bot identity; DMs on each platform keep their own context; /new on one leaves the others alone; SIGTERM exits 0 without printing a secret",
    async () => {
      const f = await fakes();
      const home = await setupHome(f);
      const gateway = await spawnGateway({ home, env: env(f) });

      // 1. The startup output names every adapter, its mode and the bot it logged in as.
      const expected = [
        { platform: "telegram", mode: "polling", bot: "@threadline_test_bot" },
        { platform: "slack", mode: "events", bot: `@threadline (${f.slack.me.userId})` },
        { platform: "discord", mode: "gateway", bot: "@threadline_test" },
      ];
      for (const { platform, mode, bot } of expected) {
        const line = await waitFor(() => gateway.logLines().find((l) => l["platform"] === platform && typeof l["mode"] === "string" && "bot" in l), {
          what: `the ${platform} startup line`,
          describe: () => gateway.output(),
        });
        expect({ platform: line["platform"], mode: line["mode"], bot: line["bot"] }).toEqual({ platform, mode, bot });
        expect(line["msg"]).toBe(`${platform} adapter connected as ${bot} (${mode})`);
      }
      await f.discord.waitFor(() => f.discord.connected, "the discord gateway connection");

      // 2. A DM on each platform, two turns each, answered on its own platform with its own context.
      const send = senders(gateway, f);
      await Promise.all([send.telegram("my name is Tess (telegram)"), send.slack("my name is Sam (slack)"), send.discord("my name is Dora (discord)")]);
      await waitForReplies(f, { telegram: 1, slack: 1, discord: 1 }, "the first reply on each platform");
      await Promise.all([send.telegram("what is my name? (telegram)"), send.slack("what is my name? (slack)"), send.discord("what is my name? (discord)")]);
      await waitForReplies(f, { telegram: 2, slack: 2, discord: 2 }, "the second reply on each platform");
      for (const [platform, name] of [
        ["telegram", "Tess"],
        ["slack", "Sam"],
        ["discord", "Dora"],
      ] as const) {
        expect(dialogue(await requestFor(f.model, `what is my name? (${platform})`))).toEqual([
          ["user", `my name is ${name} (${platform})`],
          ["assistant", `Reply to: my name is ${name} (${platform})`],
          ["user", `what is my name? (${platform})`],
        ]);
      }
      expect(replies(f)).toEqual({
        telegram: ["Reply to: my name is Tess (telegram)", "Reply to: what is my name? (telegram)"],
        slack: ["Reply to: my name is Sam (slack)", "Reply to: what is my name? (slack)"],
        discord: ["Reply to: my name is Dora (discord)", "Reply to: what is my name? (discord)"],
      });

      // 3. /new on Slack starts a new Slack session; Telegram and Discord keep theirs.
      await send.slack("/new");
      await waitForReplies(f, { telegram: 2, slack: 3, discord: 2 }, "the /new notice on slack");
      const notice = replies(f).slack[2]!;
      const newSlackSession = /^Started a new session \((\d{8}_\d{6}_[0-9a-f]{8})\)/u.exec(notice)?.[1];
      expect(newSlackSession, notice).toBeDefined();
      await Promise.all([send.telegram("and now? (telegram)"), send.slack("and now? (slack)"), send.discord("and now? (discord)")]);
      await waitForReplies(f, { telegram: 3, slack: 4, discord: 3 }, "the third turn on each platform");
      expect(dialogue(await requestFor(f.model, "and now? (slack)"))).toEqual([["user", "and now? (slack)"]]);
      for (const [platform, name] of [
        ["telegram", "Tess"],
        ["discord", "Dora"],
      ] as const) {
        expect(dialogue(await requestFor(f.model, `and now? (${platform})`))).toEqual([
          ["user", `my name is ${name} (${platform})`],
          ["assistant", `Reply to: my name is ${name} (${platform})`],
          ["user", `what is my name? (${platform})`],
          ["assistant", `Reply to: what is my name? (${platform})`],
          ["user", `and now? (${platform})`],
        ]);
      }
      expect(replies(f)).toEqual({
        telegram: ["Reply to: my name is Tess (telegram)", "Reply to: what is my name? (telegram)", "Reply to: and now? (telegram)"],
        slack: ["Reply to: my name is Sam (slack)", "Reply to: what is my name? (slack)", notice, "Reply to: and now? (slack)"],
        discord: ["Reply to: my name is Dora (discord)", "Reply to: what is my name? (discord)", "Reply to: and now? (discord)"],
      });

      const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      for (const secret of secrets(f)) expect(metrics).not.toContain(secret);

      // 4. A graceful stop.
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });

      // The three sessions are distinct, each stored under its own platform's key and source.
      await withDatabase(home, async (db) => {
        const routes = (await db.listRoutes()).items;
        const keys = {
          telegram: `agent:main:telegram:dm:${TELEGRAM_DM}`,
          slack: `agent:main:slack:dm:${SLACK_DM}`,
          discord: `agent:main:discord:dm:${DISCORD_DM}`,
        };
        expect(routes.map((r) => r.key).sort()).toEqual(Object.values(keys).sort());
        const current = Object.fromEntries(routes.map((r) => [r.key, r]));
        expect(current[keys.slack]!.sessionId).toBe(newSlackSession);
        const ids = routes.map((r) => r.sessionId);
        expect(new Set(ids).size).toBe(3);
        for (const [platform, key] of Object.entries(keys)) {
          expect(current[key]!.platform).toBe(platform);
          const session = await db.getSession(current[key]!.sessionId);
          expect(session?.source).toBe(platform);
          const history = (await db.listSessions({ sessionKey: key })).items;
          // Only Slack got /new: its key has the old (ended) and the new session; the others one each.
          expect(history.length, `${platform} sessions`).toBe(platform === "slack" ? 2 : 1);
          for (const s of history) expect(s.source).toBe(platform);
        }
        const [oldSlack] = (await db.listSessions({ sessionKey: keys.slack })).items.filter((s) => s.id !== newSlackSession);
        expect(oldSlack!.endedAt).not.toBeNull();
        const sources = (await db.listSessions()).items.map((s) => s.source).sort();
        expect(sources).toEqual(["discord", "slack", "slack", "telegram"]);
      });

      const output = gateway.output();
      expect(output).toContain("gateway stopped");
      for (const secret of secrets(f)) expect(output).not.toContain(secret);
    },
    TEST_TIMEOUT,
  );
});
