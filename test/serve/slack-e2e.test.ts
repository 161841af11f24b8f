/**
 * End to end: `threadline serve` as a child process with the Slack adapter, its Web API
 * calls going to the local fake (test/fakes/slack) through `adapters.slack.apiUrl`, and
 * signed Events API POSTs sent by the test to the gateway's `/slack/events` route; the fake
 * OpenAI-compatible provider is the model. Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { slackFixture, startFakeSlackServer, type FakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, runServe, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";
import { dialogue, requestFor } from "./model-dialogue.js";

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
  closers.push(
    () => slack.close(),
    () => model.close(),
  );
  return { slack, model };
}

function setupHome(slack: FakeSlackServer, extra: Record<string, unknown> = {}): Promise<string> {
  return makeHome({ titles: { enabled: false }, adapters: { apiServer: { enabled: false }, slack: { apiUrl: slack.url, ...openUnlessRestricted(extra) } } });
}

/**
 * These tests rely on everyone being answered (`access: open`), unless a test restricts who
 * may talk (`allowedUsers` or its own `access`).
 */
function openUnlessRestricted(extra: Record<string, unknown>): Record<string, unknown> {
  return "allowedUsers" in extra || "access" in extra ? extra : { access: "open", ...extra };
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

/** Sends a signed event to the gateway and expects Slack's 200. */
async function deliver(gateway: GatewayProcess, payload: Record<string, unknown>, retryNum?: number): Promise<void> {
  const answer = await postSlackEvent(`${gateway.url}/slack/events`, payload, {
    signingSecret: SIGNING_SECRET,
    ...(retryNum !== undefined ? { retryNum } : {}),
  });
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
      // The second message is admitted after the resent event (one chat's messages are admitted in
      // arrival order) and runs after any turn the resend could have started: its reply is the barrier.
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

  it(
    "channels: no mention → ignored and not stored; mentions answered per user; a thread is one shared session answered in the thread; other bots ignored",
    async () => {
      const { slack, model } = await fakes();
      const home = await setupHome(slack);
      const gateway = await spawnGateway({ home, env: env(slack, model) });
      await deliver(gateway, slackEvent("event-message-channel", { ts: slackTs(), text: "nobody asked the bot" }));
      await deliver(gateway, slackEvent("event-bot-message", { ts: slackTs() }));
      // A mention arrives twice (message.channels and app_mention) with the same ts: one turn.
      const aliceTs = slackTs();
      await deliver(gateway, slackEvent("event-message-channel", { ts: aliceTs, text: `<@${BOT}> alice here` }));
      await deliver(gateway, slackEvent("event-app-mention", { ts: aliceTs, text: `<@${BOT}> alice here` }));
      await deliver(gateway, slackEvent("event-app-mention", { ts: slackTs(), user: BOB, text: `<@${BOT}> bob here` }));
      await slack.waitFor(() => slack.sentTo(CHANNEL, null).length === 2, "two top-level replies");
      // A thread under the bot's reply: everyone in it shares one session, no mention needed.
      const root = slack.sentTo(CHANNEL, null)[0]!.ts;
      await deliver(gateway, slackEvent("event-message-thread", { ts: slackTs(), thread_ts: root, parent_user_id: BOT, text: "thread from alice" }));
      await slack.waitFor(() => slack.sentTo(CHANNEL, root)[0], "the thread reply to alice");
      await deliver(gateway, slackEvent("event-message-thread", { ts: slackTs(), thread_ts: root, parent_user_id: BOT, user: BOB, text: "thread from bob" }));
      await slack.waitFor(() => slack.sentTo(CHANNEL, root)[1], "the thread reply to bob");
      // A thread the bot is not in, without a mention: ignored.
      await deliver(
        gateway,
        slackEvent("event-message-thread", { ts: slackTs(), thread_ts: "1600000000.000001", parent_user_id: ALICE, text: "a human-only thread" }),
      );
      // The thread is shared: each message of a turn reaches the model with its sender (issue 26, point 5).
      const second = await requestFor(model, "[Bob Roe] thread from bob");
      expect(dialogue(second).map(([, t]) => t)).toEqual(["thread from alice", "Reply to: [Alice Doe] thread from alice", "[Bob Roe] thread from bob"]);
      const aliceRequest = await requestFor(model, "alice here");
      expect(dialogue(aliceRequest)).toEqual([["user", "alice here"]]);
      // The barrier: Alice mentions the bot once more. Her session runs its turns in order, so a
      // second turn of the doubled mention would have come first and shown up in this dialogue.
      // (Every event above was decided before its delivery was answered: Slack's events are
      // processed before the response.)
      await deliver(gateway, slackEvent("event-app-mention", { ts: slackTs(), text: `<@${BOT}> alice again` }));
      await slack.waitFor(() => slack.sentTo(CHANNEL, null).find((m) => m.text === "Reply to: alice again"), "the reply to alice again");
      expect(dialogue(await requestFor(model, "alice again"))).toEqual([
        ["user", "alice here"],
        ["assistant", "Reply to: alice here"],
        ["user", "alice again"],
      ]);
      expect(
        slack
          .sentTo(CHANNEL, null)
          .map((m) => m.text)
          .sort(),
      ).toEqual(["Reply to: alice again", "Reply to: alice here", "Reply to: bob here"]);
      const seen = model.chatRequests().flatMap((r) => dialogue(r).map(([, t]) => t));
      expect(seen.some((t) => t.includes("nobody asked") || t.includes("beep") || t.includes("human-only"))).toBe(false);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const routes = (await db.listRoutes()).items;
        const keys = routes.map((r) => r.key).sort();
        expect(keys).toEqual(
          [`agent:main:slack:channel:${CHANNEL}:${BOB}`, `agent:main:slack:channel:${CHANNEL}:${ALICE}`, `agent:main:slack:channel:${CHANNEL}:${root}`].sort(),
        );
        const thread = routes.find((r) => r.key.endsWith(root))!;
        expect(thread.origin).toMatchObject({
          platform: "slack",
          chatType: "channel",
          chatId: CHANNEL,
          chatName: "general",
          chatTopic: "Where the team talks to the agent",
          threadId: root,
          scopeId: "T0TEAM0001",
        });
        expect(await db.searchMessages("nobody")).toHaveLength(0);
        expect(await db.searchMessages("human-only")).toHaveLength(0);
      });
      expectNoSecrets(gateway, slack);
    },
    TEST_TIMEOUT,
  );

  it(
    "/new (typed, or after a mention) starts a new session with a notice; /sethome makes the channel the home channel",
    async () => {
      const { slack, model } = await fakes();
      // Only an admin may /sethome.
      const home = await setupHome(slack, { access: "open", admins: [ALICE] });
      const gateway = await spawnGateway({ home, env: env(slack, model) });
      await deliver(gateway, dm(slackTs(), "first topic"));
      await slack.waitFor(() => slack.sentTo(DM)[0], "the first reply");
      await deliver(gateway, dm(slackTs(), " /new"));
      const notice = await slack.waitFor(() => slack.sentTo(DM)[1], "the /new notice");
      expect(notice.text).toMatch(/^Started a new session \(\d{8}_\d{6}_[0-9a-f]{8}\)/u);
      expect(notice.mrkdwn).toBe(false);
      await deliver(gateway, dm(slackTs(), "second topic"));
      await slack.waitFor(() => slack.sentTo(DM)[2], "the reply in the new session");
      expect(dialogue(await requestFor(model, "second topic"))).toEqual([["user", "second topic"]]);
      // In a channel, Slack's client keeps a message starting with "/" for itself: "@bot /new" works.
      await deliver(gateway, slackEvent("event-app-mention", { ts: slackTs(), text: `<@${BOT}> remember the plan` }));
      await slack.waitFor(() => slack.sentTo(CHANNEL)[0], "the channel reply");
      await deliver(gateway, slackEvent("event-app-mention", { ts: slackTs(), text: `<@${BOT}> /new` }));
      const channelNotice = await slack.waitFor(() => slack.sentTo(CHANNEL)[1], "the channel /new notice");
      expect(channelNotice.text).toMatch(/^Started a new session/u);
      await deliver(gateway, slackEvent("event-app-mention", { ts: slackTs(), text: `<@${BOT}> /sethome` }));
      const home1 = await slack.waitFor(() => slack.sentTo(CHANNEL)[2], "the /sethome notice");
      expect(home1.text).toContain("This chat is now the slack home channel");
      await deliver(gateway, slackEvent("event-app-mention", { ts: slackTs(), text: `<@${BOT}> /status` }));
      const status = await slack.waitFor(() => slack.sentTo(CHANNEL)[3], "the /status");
      expect(status.text).toContain("Home channel (slack): general (this chat)");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoSecrets(gateway, slack);
    },
    TEST_TIMEOUT,
  );

  it(
    "a 6,000-character reply arrives as ordered chunks within 3,000 characters; a 429 with Retry-After is waited out and retried",
    async () => {
      const { slack, model } = await fakes();
      const paragraphs = Array.from({ length: 60 }, (_, i) => `Paragraph ${String(i).padStart(2, "0")}: ${"words ".repeat(16).trim()}.`);
      const long = paragraphs.join("\n\n");
      expect(long.length).toBeGreaterThan(6000);
      model.enqueue(fakeTextReply(long));
      slack.failNext("chat.postMessage", { status: 429, retryAfter: 1 });
      const home = await setupHome(slack);
      const gateway = await spawnGateway({ home, env: env(slack, model) });
      await deliver(gateway, dm(slackTs(), "write a lot"));
      await slack.waitFor(() => slack.sentTo(DM).length >= 3, "the chunks");
      // The barrier: the next message of the chat is answered only after the long reply's turn
      // (every chunk of it) is done.
      await deliver(gateway, dm(slackTs(), "and now briefly"));
      await slack.waitFor(() => slack.sentTo(DM).find((m) => m.text === "Reply to: and now briefly"), "the reply after the chunks");
      expect(slack.sentTo(DM).at(-1)!.text).toBe("Reply to: and now briefly");
      const chunks = slack.sentTo(DM).slice(0, -1);
      expect(chunks).toHaveLength(3);
      for (const chunk of chunks) {
        expect(chunk.text.length).toBeLessThanOrEqual(3000);
        expect(chunk.blocks).toEqual([{ type: "section", text: { type: "mrkdwn", text: chunk.text } }]);
      }
      expect(chunks.map((c) => c.text).join("\n\n")).toBe(long);
      expect(slack.callsOf("chat.postMessage").map((c) => c.status)).toEqual([429, 200, 200, 200, 200]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoSecrets(gateway, slack);
    },
    TEST_TIMEOUT,
  );

  it(
    "an unsigned, mis-signed or stale request gets 401 and starts nothing; the URL verification challenge is answered",
    async () => {
      const { slack, model } = await fakes();
      const home = await setupHome(slack);
      const gateway = await spawnGateway({ home, env: env(slack, model) });
      const url = `${gateway.url}/slack/events`;
      expect((await postSlackEvent(url, dm(slackTs(), "unsigned"))).status).toBe(401);
      expect((await postSlackEvent(url, dm(slackTs(), "mis-signed"), { signingSecret: "not-the-signing-secret" })).status).toBe(401);
      const stale = Math.floor(Date.now() / 1000) - 6 * 60;
      expect((await postSlackEvent(url, dm(slackTs(), "stale"), { signingSecret: SIGNING_SECRET, timestamp: stale })).status).toBe(401);
      const verification = slackFixture("url-verification");
      const challenge = await postSlackEvent(url, verification, { signingSecret: SIGNING_SECRET });
      expect(challenge.status).toBe(200);
      expect(JSON.parse(challenge.body)).toEqual({ challenge: verification["challenge"] });
      await deliver(gateway, dm(slackTs(), "signed"));
      await slack.waitFor(() => slack.sentTo(DM)[0], "the reply to the signed message");
      // The refused requests were answered 401 before the signed one was sent: had any been taken,
      // it would have been admitted first in the chat, and answered before the signed one.
      expect(slack.sentTo(DM).map((m) => m.text)).toEqual(["Reply to: signed"]);
      expect(model.chatRequests()).toHaveLength(1);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect(await db.searchMessages("unsigned")).toHaveLength(0);
        expect(await db.searchMessages("stale")).toHaveLength(0);
      });
      expectNoSecrets(gateway, slack);
    },
    TEST_TIMEOUT,
  );

  it(
    "SIGKILL during a turn: after the restart the reply reaches the chat exactly once (a resend of the event is no second turn)",
    async () => {
      const { slack, model } = await fakes();
      let slow = true;
      model.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 60_000 } : null));
      const home = await setupHome(slack);
      const first = await spawnGateway({ home, env: env(slack, model) });
      const ts = slackTs();
      await deliver(first, dm(ts, "a slow question"));
      await requestFor(model, "a slow question");
      expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
      expect(slack.sentTo(DM)).toEqual([]);

      slow = false;
      const restartedAt = model.requests.length;
      const second = await spawnGateway({ home, env: env(slack, model) });
      await requestFor(model, "a slow question", restartedAt);
      await slack.waitFor(() => slack.sentTo(DM)[0], "the resumed reply");
      await deliver(second, dm(ts, "a slow question"), 1);
      await deliver(second, dm(slackTs(), "a later question"));
      await slack.waitFor(() => slack.sentTo(DM)[1], "the reply to the later question");
      // The later question is admitted after the redelivery (one chat's messages are admitted in
      // arrival order) and runs after any turn the redelivery could have started: its reply is the barrier.
      expect(slack.sentTo(DM).map((m) => m.text)).toEqual(["Reply to: a slow question", "Reply to: a later question"]);
      expect(await second.stop()).toEqual({ code: 0, signal: null });
      expectNoSecrets(first, slack);
      expectNoSecrets(second, slack);
    },
    TEST_TIMEOUT,
  );

  it(
    "refuses to start without a bot token or signing secret, naming the keys and variables (exit 2); a refused token stops the start without printing it",
    async () => {
      const { slack, model } = await fakes();
      const home = await setupHome(slack);
      const missing = await runServe({ home, env: { ...env(slack, model), SLACK_BOT_TOKEN: undefined, SLACK_SIGNING_SECRET: undefined } });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("adapters.slack.botToken: missing: set it in the config file or in the SLACK_BOT_TOKEN environment variable");
      expect(missing.stderr).toContain("adapters.slack.signingSecret: missing");
      expect(missing.stderr).toContain("SLACK_SIGNING_SECRET");
      const wrong = "xoxb-999-not-the-right-token";
      const refused = await runServe({ home, env: { ...env(slack, model), SLACK_BOT_TOKEN: wrong } });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr + refused.stdout).toContain("Slack refused the bot token (invalid_auth)");
      expect(refused.stderr + refused.stdout).not.toContain("not-the-right-token");
      expect(refused.stderr + refused.stdout).not.toContain(SIGNING_SECRET);
    },
    TEST_TIMEOUT,
  );
});
