/**
 * Slack files through the REAL Bolt and WebClient against the local fake: a shared file and an
 * audio clip recorded in Slack map to `InboundMedia` (file id, private URL, size; the clip a
 * voice note), and `fetchMedia` downloads exactly the registered bytes from the fake's file host
 * with the bot token (through `files.info` when only the file id is known). The file host
 * refuses a request without the token or with another one.
 */
import Fastify from "fastify";
import type { AddressInfo } from "node:net";
import { expect, it } from "vitest";
import { SlackAdapter, slackFileOrigins } from "../../../src/adapters/slack/index.js";

import { MediaUnavailableError, type InboundMessage, type MediaFetchRequest } from "../../../src/gateway/index.js";
import { startFakeSlackServer } from "../../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../../fakes/slack/slack-events.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapter-harness.js";
import { fetchedBytes, pngImage } from "../media-bytes.js";

const SECRET = "slack-signing-secret-for-tests-0001";
const cleanups = useCleanups();

/** The adapter (Events API on a real Fastify server) against the fake, handing every inbound message to `received`. */
async function setup(options: { botToken?: string } = {}) {
  const fake = await startFakeSlackServer();
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = await SlackAdapter.create({
    botToken: options.botToken ?? fake.botToken,
    signingSecret: SECRET,
    apiUrl: fake.url,
    rules: TEST_RULES,
    logger,
    maxRetries: 0,
  });
  const received: InboundMessage[] = [];
  const http = Fastify({ logger: false });
  adapter.routes(http);
  await http.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(() => http.close());
  const events = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}/slack/events`;
  const deliver = async (payload: Record<string, unknown>): Promise<void> => {
    expect((await postSlackEvent(events, payload, { signingSecret: SECRET })).status).toBe(200);
  };
  const request: MediaFetchRequest = {
    source: { platform: "slack", chatType: "dm", chatId: "D0ALICEDM1" },
    maxBytes: 20_971_520,
    signal: new AbortController().signal,
  };
  return {
    fake,
    adapter,
    logger,
    received,
    deliver,
    request,
    handler: async (message: InboundMessage) => {
      received.push(message);
      return { status: "accepted" as const, sessionKey: "agent:main:slack:dm:D0ALICEDM1" };
    },
  };
}

it("a shared image maps to InboundMedia with its file id and private URL, and fetchMedia returns exactly the file host's bytes", async () => {
  const { fake, adapter, received, deliver, request, handler } = await setup();
  await adapter.connect(handler);
  cleanups.push(() => adapter.disconnect());
  const bytes = pngImage(40, 30, 3);
  const file = fake.addFile(bytes, { name: "whiteboard.png", mimetype: "image/png" });
  await deliver(slackEvent("event-file-share", { ts: slackTs(), files: [file] }));
  await fake.waitFor(() => received.length === 1, "the file share handed to the gateway");
  const media = received[0]!.media![0]!;
  expect(media).toMatchObject({
    kind: "image",
    fileId: file.id,
    url: file.url_private_download,
    mimeType: "image/png",
    fileName: "whiteboard.png",
    size: bytes.length,
    caption: "here is the diagram",
    meta: { width: 640, height: 480 },
  });
  expect(media.url).not.toContain(fake.botToken);
  const fetched = await adapter.fetchMedia(media, request);
  expect(fetched).toMatchObject({ size: bytes.length, mimeType: "image/png" });
  expect((await fetchedBytes(fetched)).equals(bytes)).toBe(true);
  expect(fake.fileRequests(file.id)).toEqual({ served: 1, refused: 0 });
});

it("an audio clip recorded in Slack is a voice note; with only the file id, files.info gives the URL", async () => {
  const { fake, adapter, received, deliver, request, handler } = await setup();
  await adapter.connect(handler);
  cleanups.push(() => adapter.disconnect());
  const bytes = Buffer.from("\u001aE\u00df\u00a3 fake webm voice clip", "latin1");
  const clip = fake.addFile(bytes, { audioClip: true });
  await deliver(slackEvent("event-file-share", { ts: slackTs(), text: "", files: [clip] }));
  await fake.waitFor(() => received.length === 1, "the clip handed to the gateway");
  const media = received[0]!.media![0]!;
  expect(media).toMatchObject({ kind: "audio", voice: true, mimeType: "audio/webm", fileId: clip.id, meta: { durationSeconds: 3.2 } });
  expect((await fetchedBytes(await adapter.fetchMedia({ ...media, url: null }, request))).equals(bytes)).toBe(true);
  expect(fake.callsOf("files.info").map((c) => c.params["file"])).toEqual([clip.id]);
  await expect(adapter.fetchMedia({ kind: "file", fileId: "F0DELETED1" }, request)).rejects.toBeInstanceOf(MediaUnavailableError);
});

it("the file host refuses a request without the bot token or with another one (to its sign-in page), and the adapter says so without the token", async () => {
  const { fake, request } = await setup();
  const file = fake.addFile(pngImage(8, 8), { name: "secret.png" });
  for (const headers of [{}, { authorization: "Bearer xoxb-someone-else" }] as Array<Record<string, string>>) {
    const answer = await fetch(file.url_private, { headers, redirect: "manual" });
    expect(answer.status).toBe(302);
    expect(answer.headers.get("location")).toContain("/signin");
  }
  expect(fake.fileRequests(file.id)).toEqual({ served: 0, refused: 2 });

  const wrongToken = "xoxb-1000000001-2000000002-SomeoneElsesTokenValue";
  const stranger = await SlackAdapter.create({ botToken: wrongToken, signingSecret: SECRET, apiUrl: fake.url, rules: TEST_RULES, maxRetries: 0 });
  const refused = await stranger.fetchMedia({ kind: "image", fileId: file.id, url: file.url_private_download }, request).then(
    () => null,
    (error: unknown) => error as Error,
  );
  expect(refused?.message).toMatch(/sign-in page \(HTTP 302\).*files:read/u);
  expect(refused?.message).not.toContain(wrongToken);
  expect(fake.fileRequests(file.id)).toEqual({ served: 0, refused: 3 });
});

it("files come only from Slack's file host, or from the configured Web API's origin (a proxy, a fake)", () => {
  expect([...slackFileOrigins(null)]).toEqual(["https://files.slack.com"]);
  expect([...slackFileOrigins("https://slack.com/api/")]).toEqual(["https://files.slack.com"]);
  expect([...slackFileOrigins("http://127.0.0.1:4567/api/")]).toEqual(["http://127.0.0.1:4567"]);
});
