/**
 * Threat (issue 27, point 7): a reply or notice pages a whole Slack channel. The mrkdwn
 * renderer escapes `<!channel>`, `<!here>`, `<!everyone>` and `<!subteam^…>`, but the
 * plain-text sends (notices, and the fallback after Slack rejects the formatted blocks) went
 * out as they were, and Slack turns those tokens into broadcast mentions in any `text`.
 *
 * A real `threadline serve` child with the Slack adapter (the real WebClient) against the
 * fake Slack Web API: the model echoes the broadcast tokens (the fake model's default reply
 * repeats the user's text), the first formatted post is rejected (`invalid_blocks`), and
 * the plain-text fallback must still carry no live broadcast token; a notice neither.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeSlackServer, type FakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, type GatewayProcess } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-slack-broadcast";
const SIGNING_SECRET = "5c1f0e2d3b4a69788796a5b4c3d2e1f0";
const SLACK_USER = "U0ALICE001";
const SLACK_DM = "D0ALICEDM1";
const BROADCASTS = "<!channel> <!here> <!everyone> <!subteam^S0123ABCD> <!channel|channel>";
/** A live Slack broadcast token in a posted text or block. */
const LIVE_BROADCAST = /<!(channel|here|everyone|subteam\^)/u;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function start(): Promise<{ slack: FakeSlackServer; model: FakeOpenAiServer; gateway: GatewayProcess }> {
  const slack = await startFakeSlackServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null });
  closers.push(
    () => slack.close(),
    () => model.close(),
  );
  const home = await makeHome({
    titles: { enabled: false },
    adapters: { apiServer: { enabled: false }, slack: { apiUrl: slack.url, allowedUsers: [SLACK_USER] } },
  });
  const gateway = await spawnGateway({
    home,
    env: {
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: FAKE_KEY,
      THREADLINE_MODEL: "fake-model",
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
    },
  });
  return { slack, model, gateway };
}

async function say(gateway: GatewayProcess, text: string): Promise<void> {
  const answer = await postSlackEvent(`${gateway.url}/slack/events`, slackEvent("event-message-im", { ts: slackTs(), text, user: SLACK_USER }), {
    signingSecret: SIGNING_SECRET,
  });
  expect(answer.status).toBe(200);
}

describe("Slack broadcast mentions", () => {
  it(
    "the plain-text fallback after a formatting error and a notice carry no live <!channel>/<!here>/<!everyone>/<!subteam^…>",
    async () => {
      const { slack, gateway } = await start();
      // The formatted post is rejected: the adapter falls back to plain text.
      slack.failNext("chat.postMessage", { error: "invalid_blocks" });
      await say(gateway, `ping ${BROADCASTS}`);
      const fallback = await slack.waitFor(() => slack.sentTo(SLACK_DM)[0], "the plain-text fallback reply");
      expect(slack.callsOf("chat.postMessage").length).toBe(2);
      expect(fallback.mrkdwn).toBe(false);
      expect(fallback.text).toContain("ping");
      expect(fallback.text).not.toMatch(LIVE_BROADCAST);

      // A notice (plain text) that carries the user's words: /title echoes the title it set.
      await say(gateway, `/title ${BROADCASTS}`);
      const notice = await slack.waitFor(() => slack.sentTo(SLACK_DM)[1], "the /title notice");
      expect(notice.text).not.toMatch(LIVE_BROADCAST);

      // Every post the gateway made, text and blocks.
      for (const call of slack.callsOf("chat.postMessage")) expect(JSON.stringify(call.params)).not.toMatch(LIVE_BROADCAST);
    },
    TEST_TIMEOUT,
  );
});
