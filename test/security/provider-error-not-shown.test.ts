/**
 * Threat (issue 27, point 7): chat users saw the model provider's error text
 * (`The model could not answer: …`): account ids, quota states, internal hostnames, request
 * echoes. A chat user now sees "The model could not answer (ref <id>)." with a short random
 * ref, and the detail goes to the gateway's log under the same ref, where the operator
 * finds it.
 *
 * A real `threadline serve` child with Telegram (grammY), Slack (the WebClient) and the
 * OpenAI-compatible API (`/v1/chat/completions`), against the fakes; the fake provider
 * refuses every chat request with a detailed error.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { startFakeTelegramServer, telegramUpdate } from "../fakes/telegram/fake-telegram-server.js";
import { fakeErrorReply, startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor } from "../serve/gateway-process.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-provider-error";
const SIGNING_SECRET = "5c1f0e2d3b4a69788796a5b4c3d2e1f0";
const API_TOKEN = "tl-api-token-provider-error-0123456789";
const TELEGRAM_USER = 111111;
const SLACK_USER = "U0ALICE001";
const SLACK_DM = "D0ALICEDM1";
/** What the provider says: nothing of it may reach a chat. */
const DETAIL = "Organization org-InternalAcme7 has exceeded its quota on host llm-gw-03.corp.internal";
const NOTICE = /^The model could not answer \(ref ([0-9a-f]{8})\)\.$/u;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

describe("provider errors", () => {
  it(
    "a chat user sees a ref, not the provider's text; the log has the detail under the same ref",
    async () => {
      const telegram = await startFakeTelegramServer();
      const slack = await startFakeSlackServer();
      const model = await startFakeOpenAiServer({
        apiKey: FAKE_KEY,
        title: null,
        script: (request) => (request.kind === "chat" ? fakeErrorReply(400, DETAIL) : null),
      });
      closers.push(
        () => telegram.close(),
        () => slack.close(),
        () => model.close(),
      );
      const home = await makeHome({
        titles: { enabled: false },
        adapters: {
          apiServer: { enabled: true, tokens: [API_TOKEN] },
          telegram: { apiRoot: telegram.url, allowedUsers: [TELEGRAM_USER] },
          slack: { apiUrl: slack.url, allowedUsers: [SLACK_USER] },
        },
      });
      const gateway = await spawnGateway({
        home,
        env: {
          OPENAI_BASE_URL: model.url,
          OPENAI_API_KEY: FAKE_KEY,
          THREADLINE_MODEL: "fake-model",
          TELEGRAM_BOT_TOKEN: telegram.token,
          SLACK_BOT_TOKEN: slack.botToken,
          SLACK_SIGNING_SECRET: SIGNING_SECRET,
        },
      });

      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 1, text: "hello" }));
      const event = await postSlackEvent(`${gateway.url}/slack/events`, slackEvent("event-message-im", { ts: slackTs(), text: "hello", user: SLACK_USER }), {
        signingSecret: SIGNING_SECRET,
      });
      expect(event.status).toBe(200);
      const http = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "fake-model", user: "api-user-1", messages: [{ role: "user", content: "hello" }] }),
      });
      const httpText = await http.text();

      const seen = [
        (await telegram.waitFor(() => telegram.sentTo(TELEGRAM_USER)[0], "the telegram notice")).plain,
        (await slack.waitFor(() => slack.sentTo(SLACK_DM)[0], "the slack notice")).text,
        (JSON.parse(httpText) as { error: { message: string } }).error.message,
      ];
      for (const text of seen) {
        expect(text).toMatch(NOTICE);
        expect(text).not.toContain("org-InternalAcme7");
        expect(text).not.toContain("corp.internal");
        // The ref points at a log line with the provider's detail.
        const ref = NOTICE.exec(text)![1]!;
        await waitFor(() => gateway.logLines().find((l) => l["ref"] === ref && JSON.stringify(l).includes("org-InternalAcme7")), {
          what: `the log line of ref ${ref}`,
          describe: () => gateway.output(),
        });
      }
      expect(new Set(seen.map((t) => NOTICE.exec(t)![1])).size).toBe(3);
    },
    TEST_TIMEOUT,
  );
});
