/**
 * Discord attachments through the REAL discord.js against the local fake: a photo and a voice
 * message arrive over the gateway and map to `InboundMedia` (the CDN URL, size, the voice
 * message a voice note), and `fetchMedia` downloads exactly the bytes the fake CDN serves.
 */
import { expect, it } from "vitest";
import { DiscordAdapter, discordFileOrigins } from "../../../src/adapters/discord/index.js";
import type { InboundMessage, MediaFetchRequest } from "../../../src/gateway/index.js";
import { DISCORD_IDS, discordMessage, startFakeDiscordServer } from "../../fakes/discord/fake-discord-server.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapter-harness.js";
import { fetchedBytes, pngImage } from "../media-bytes.js";

const cleanups = useCleanups();

async function setup() {
  const fake = await startFakeDiscordServer();
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = await DiscordAdapter.create({ token: fake.token, apiUrl: fake.url, cdnUrl: fake.cdnUrl, rules: TEST_RULES, logger });
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    return { status: "accepted", sessionKey: `agent:main:discord:dm:${DISCORD_IDS.dm}` };
  });
  cleanups.push(() => adapter.disconnect());
  const request: MediaFetchRequest = {
    source: { platform: "discord", chatType: "dm", chatId: DISCORD_IDS.dm },
    maxBytes: 20_971_520,
    signal: new AbortController().signal,
  };
  return { fake, adapter, logger, received, request };
}

it("a photo maps to InboundMedia with its CDN URL and size, and fetchMedia returns exactly the CDN's bytes", async () => {
  const { fake, adapter, received, request } = await setup();
  const bytes = pngImage(20, 10, 5);
  const photo = fake.addAttachment(bytes, { filename: "cat.png", contentType: "image/png", width: 20, height: 10 });
  fake.pushMessage(discordMessage("message-attachment", { id: "1500000000000000401", attachments: [photo] }));
  await fake.waitFor(() => received.length === 1, "the photo handed to the gateway");
  const media = received[0]!.media![0]!;
  expect(media).toMatchObject({
    kind: "image",
    url: photo.url,
    fileId: photo.id,
    mimeType: "image/png",
    fileName: "cat.png",
    size: bytes.length,
    meta: { width: 20, height: 10 },
  });
  const fetched = await adapter.fetchMedia(media, request);
  expect(fetched).toMatchObject({ size: bytes.length, mimeType: "image/png" });
  expect((await fetchedBytes(fetched)).equals(bytes)).toBe(true);
  expect(fake.downloads(photo.id)).toBe(1);
});

it("a voice message is a voice note (audio, voice: true, its duration) and downloads like any attachment", async () => {
  const { fake, adapter, received, request } = await setup();
  const bytes = Buffer.from("OggS\u0000\u0002fake discord voice message", "latin1");
  const clip = fake.addAttachment(bytes, { voice: true });
  fake.pushMessage(discordMessage("message-voice", { id: "1500000000000000402", attachments: [clip] }));
  await fake.waitFor(() => received.length === 1, "the voice message handed to the gateway");
  const media = received[0]!.media![0]!;
  expect(media).toMatchObject({ kind: "audio", voice: true, mimeType: "audio/ogg", meta: { durationSeconds: 3.2 } });
  expect((await fetchedBytes(await adapter.fetchMedia(media, request))).equals(bytes)).toBe(true);
});

it("a CDN URL whose signature is wrong is answered 404 and reported with the status, not the token", async () => {
  const { fake, adapter, request, logger } = await setup();
  const photo = fake.addAttachment(pngImage(4, 4));
  const error = await adapter.fetchMedia({ kind: "image", url: photo.url.replace(/hm=[^&]+/u, "hm=forged") }, request).then(
    () => null,
    (e: unknown) => e as Error,
  );
  expect(error?.message).toBe("discord: the file host answered HTTP 404 to the download");
  expect(`${error?.stack}${logger.text()}`).not.toContain(fake.token);
  expect(fake.downloads(photo.id)).toBe(0);
});

it("attachments come only from Discord's CDN, or only from the configured cdnUrl's origin", () => {
  expect([...discordFileOrigins(null)]).toEqual(["https://cdn.discordapp.com", "https://media.discordapp.net"]);
  expect([...discordFileOrigins("http://127.0.0.1:4567/")]).toEqual(["http://127.0.0.1:4567"]);
});
