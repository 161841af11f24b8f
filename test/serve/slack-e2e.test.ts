/**
 * End to end: `threadline serve` as a child process with the Slack adapter, its Web API
 * calls going to the local fake (test/fakes/slack) through `adapters.slack.apiUrl`, and
 * signed Events API POSTs sent by the test to the gateway's `/slack/events` route; the fake
 * OpenAI-compatible provider is the model. Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB } from "../../src/store/index.js";
import { startFakeSlackServer, type FakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiRequest, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, databaseOf, makeHome, runServe, spawnGateway, waitFor, type GatewayProcess } from "./gateway-process.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-slack-e2e";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const DM = "D0ALICEDM1";
const CHANNEL = "C0GENERAL1";
const BOT = "U0BOT00001";
const ALICE = "U0ALICE001";
const BOB = "U0BOB00002";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function fakes(): Promise<{ slack: FakeSlackServer; model: FakeOpenAiServer }> {
  const slack = await startFakeSlackServer();
  slack.addUser(BOB, "Bob Roe");
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(() => slack.close(), () => model.close());
  return { slack, model };
}

function setupHome(slack: FakeSlackServer, extra: Record<string, unknown> = {}): Promise<string> {
  return makeHome({ titles: { enabled: false }, adapters: { apiServer: { enabled: false }, slack: { apiUrl: slack.url, ...extra } } });
}

function env(slack: FakeSlackServer, model: FakeOpenAiServer): Record<string, string> {
  return {
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: FAKE_KEY,
    THREADLINE_MODEL: "fake-model",
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
  };
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? "").join("\n");
  return "";
}

function dialogue(request: FakeOpenAiRequest): Array<[string, string]> {
  return (request.body?.messages ?? []).filter((m) => m.role !== "system").map((m) => [m.role, text(m.content)]);
}

function requestFor(model: FakeOpenAiServer, userText: string, from = 0): Promise<FakeOpenAiRequest> {
  return waitFor(() => model.chatRequests().find((r) => r.index >= from && dialogue(r).at(-1)?.[1] === userText), {
    what: `the model request for "${userText}"`,
    describe: () => JSON.stringify(model.chatRequests().map((r) => dialogue(r).at(-1))),
  });
}

async function withDatabase<T>(home: string, use: (db: SessionDB) => Promise<T>): Promise<T> {
  const db = await openSessionDB(databaseOf(home));
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

/** Sends a signed event to the gateway and expects Slack's 200. */
async function deliver(gateway: GatewayProcess, payload: Record<string, unknown>, retryNum?: number): Promise<void> {
  const answer = await postSlackEvent(`${gateway.url}/slack/events`, payload, { signingSecret: SIGNING_SECRET, ...(retryNum !== undefined ? { retryNum } : {}) });
  expect(answer.status).toBe(200);
}

function dm(ts: string, body: string): Record<string, unknown> {
  return slackEvent("event-message-im", { ts, text: body });
}

function expectNoSecrets(gateway: GatewayProcess, slack: FakeSlackServer): void {
  expect(gateway.output()).not.toContain(slack.botToken);
  expect(gateway.output()).not.toContain(SIGNING_SECRET);
}

describe("threadline serve with Slack", () => {
  it(
    "starts with the adapter, its mode and the bot identity; a DM keeps its context across turns; a resent event is no second turn; secrets never appear",
    async () => {
      const { slack, model } = await fakes();
      const home = await setupHome(slack);
      const gateway = await spawnGateway({ home, env: env(slack, model) });
      await waitFor(() => gateway.logLines().find((l) => l["platform"] === "slack" && l["bot"] === `@threadline (${BOT})` && l["mode"] === "events"), {
        what: "the slack startup line",
        describe: () => gateway.output(),
      });
      const first = slackTs();
      await deliver(gateway, dm(first, "my name is Zed"));
      await slack.waitFor(() => slack.sentTo(DM)[0], "the first reply");
      // Slack resends an event it thinks was not acknowledged in time: no second turn.
      await deliver(gateway, dm(first, "my name is Zed"), 1);
      const second = slackTs();
      await deliver(gateway, dm(second, "what is my name?"));
      await slack.waitFor(() => slack.sentTo(DM)[1], "the second reply");
      expect(dialogue(await requestFor(model, "what is my name?"))).toEqual([
        ["user", "my name is Zed"],
        ["assistant", "Reply to: my name is Zed"],
        ["user", "what is my name?"],
      ]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(slack.sentTo(DM).map((m) => [m.text, m.thread_ts])).toEqual([
        ["Reply to: my name is Zed", null],
        ["Reply to: what is my name?", null],
      ]);
      expect(slack.callsOf("users.info").length).toBe(1);
      const metrics = await fetch(`${gateway.url}/metrics`).then((r) => r.text());
      expect(metrics).not.toContain(slack.botToken);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const routes = (await db.listRoutes()).items;
        expect(routes.map((r) => r.key)).toEqual([`agent:main:slack:dm:${DM}`]);
      });
      expectNoSecrets(gateway, slack);
    },
    TEST_TIMEOUT,
  );
});
