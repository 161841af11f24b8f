/**
 * Threat (issue 30): a message names a URL of the attacker's and the gateway fetches it — with
 * the bot token in `Authorization`, handing the token over, or from inside the network (SSRF).
 * Slack files are downloaded only from Slack's file host (in tests: the origin of the configured
 * Web API, the fake), so a `url_private` on any other host is refused before a request is made.
 *
 * The REAL Bolt and WebClient against the local fake; the attacker's host is a second loopback
 * server that records every request it gets.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { expect, it } from "vitest";
import { SlackAdapter } from "../../src/adapters/slack/index.js";
import type { InboundMessage } from "../../src/gateway/index.js";
import { startFakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapters/adapter-harness.js";
import { waitFor } from "../support/wait-for.js";

const SECRET = "slack-signing-secret-for-tests-0001";
const cleanups = useCleanups();

it("a Slack message naming a file URL on another host is never fetched, and the bot token goes nowhere", async () => {
  const attacker: IncomingHttpHeaders[] = [];
  const evil = createServer((req, res) => {
    attacker.push(req.headers);
    res.writeHead(200, { "content-type": "image/png" }).end("stolen");
  });
  await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => evil.close(resolve)));
  const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/files-pri/T0TEAM0001-F0EVIL0001/download/cat.png`;

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
