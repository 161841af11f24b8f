/**
 * Threat (issue 30): a message names a URL of the attacker's and the gateway fetches it — with
 * the bot token in `Authorization`, handing the token over, or from inside the network (SSRF).
 * Slack files are downloaded only from Slack's file host (in tests: the origin of the configured
 * Web API, the fake), so a `url_private` on any other host is refused before a request is made.
 *
 * The REAL Bolt and WebClient against the local fake, in process and in a real `threadline
 * serve` child; the attacker's host is a second loopback server that records every request it
 * gets.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { expect, it } from "vitest";
import { SlackAdapter } from "../../src/adapters/slack/index.js";
import type { InboundMessage } from "../../src/gateway/index.js";
import { startFakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapters/adapter-harness.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";
import { cleanupProcesses, makeHome, spawnGateway } from "../serve/gateway-process.js";

const SECRET = "slack-signing-secret-for-tests-0001";
const cleanups = useCleanups();

/** The attacker's host: a loopback server that answers with an image and records every request's headers. */
async function attackerHost(): Promise<{ requests: IncomingHttpHeaders[]; url: (path: string) => string }> {
  const requests: IncomingHttpHeaders[] = [];
  const evil: Server = createServer((req, res) => {
    requests.push(req.headers);
    res.writeHead(200, { "content-type": "image/png" }).end("stolen");
  });
  await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => evil.close(resolve)));
  const port = (evil.address() as AddressInfo).port;
  return { requests, url: (path) => `http://127.0.0.1:${port}${path}` };
}

it("a Slack message naming a file URL on another host is never fetched, and the bot token goes nowhere", async () => {
  const { requests: attacker, url } = await attackerHost();
  const evilUrl = url("/files-pri/T0TEAM0001-F0EVIL0001/download/cat.png");

  const fake = await startFakeSlackServer();
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = await SlackAdapter.create({ botToken: fake.botToken, signingSecret: SECRET, apiUrl: fake.url, rules: TEST_RULES, logger, maxRetries: 0 });
  const http = Fastify({ logger: false });
  adapter.routes(http);
  await http.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(() => http.close());
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    return { status: "accepted", sessionKey: "agent:main:slack:dm:D0ALICEDM1" };
  });
  cleanups.push(() => adapter.disconnect());

  const planted = { id: "F0EVIL0001", name: "cat.png", mimetype: "image/png", size: 6, url_private: evilUrl, url_private_download: evilUrl };
  const events = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}/slack/events`;
  expect((await postSlackEvent(events, slackEvent("event-file-share", { ts: slackTs(), files: [planted] }), { signingSecret: SECRET })).status).toBe(200);
  await waitFor(() => received.length === 1 || null, { what: "the message handed to the gateway" });
  const media = received[0]!.media![0]!;
  expect(media.url).toBe(evilUrl);

  const signal = new AbortController().signal;
  const refused = await adapter.fetchMedia(media, { source: received[0]!.source, maxBytes: 20_971_520, signal }).then(
    () => null,
    (error: unknown) => error as Error,
  );
  expect(refused?.message).toBe("slack: the attachment's URL is not on Slack's file host, so it was not downloaded");
  expect(attacker).toHaveLength(0);
  expect(logger.text()).not.toContain(fake.botToken);
});

it("through threadline serve: the planted file is not kept (the chat is told), the text goes through, the attacker's host gets no request", async () => {
  cleanups.push(cleanupProcesses);
  const attacker = await attackerHost();
  const evilUrl = attacker.url("/files-pri/T0TEAM0001-F0EVIL0002/download/cat.png");
  const fake = await startFakeSlackServer();
  const model = await startFakeOpenAiServer({ apiKey: "sk-fake-media-host", title: null });
  cleanups.push(
    () => fake.close(),
    () => model.close(),
  );
  const home = await makeHome({ titles: { enabled: false }, adapters: { apiServer: { enabled: false }, slack: { apiUrl: fake.url, access: "open" } } });
  const gateway = await spawnGateway({
    home,
    env: {
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: "sk-fake-media-host",
      THREADLINE_MODEL: "fake-model",
      SLACK_BOT_TOKEN: fake.botToken,
      SLACK_SIGNING_SECRET: SECRET,
    },
  });
  const planted = { id: "F0EVIL0002", name: "cat.png", mimetype: "image/png", size: 6, url_private: evilUrl, url_private_download: evilUrl };
  const event = slackEvent("event-file-share", { ts: slackTs(), text: "look at my cat", files: [planted] });
  expect((await postSlackEvent(`${gateway.url}/slack/events`, event, { signingSecret: SECRET })).status).toBe(200);
  await fake.waitFor(() => fake.sentTo("D0ALICEDM1").some((m) => m.text.startsWith("Reply to")), "the reply to the text");
  expect(fake.sentTo("D0ALICEDM1").some((m) => /not kept/u.test(m.text))).toBe(true);
  expect(JSON.stringify(model.requests.filter((r) => r.kind === "chat").at(-1)!.body?.messages)).toContain("look at my cat");
  expect(attacker.requests).toHaveLength(0);
  expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  expect(gateway.output()).not.toContain(fake.botToken);
}, 90_000);
