/**
 * WhatsApp media through the adapter: a signed webhook with an image or a voice note reaches
 * the handler as `InboundMedia` with the media id, and `fetchMedia` gets exactly the bytes the
 * fake Graph API registered (the media endpoint, then the file with the access token); the
 * declared size is checked before anything is downloaded; the fake refuses a download without
 * the token.
 */
import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { expect, it } from "vitest";
import { WhatsAppAdapter } from "../../../src/adapters/whatsapp/index.js";
import { MediaUnavailableError, type FetchedMedia, type InboundMessage, type SessionSource } from "../../../src/gateway/index.js";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer } from "../../fakes/whatsapp/fake-whatsapp-server.js";
import { postWhatsAppWebhook, whatsappWebhook } from "../../fakes/whatsapp/whatsapp-webhooks.js";
import { waitFor } from "../../support/wait-for.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapter-harness.js";

const APP_SECRET = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
const VERIFY_TOKEN = "verify-me-please-0001";
const IMAGE_ID = "1003383421387256";
const VOICE_ID = "1047268730519838";
/** A tiny PNG's first bytes and then some: what matters is that they come back exactly. */
const IMAGE = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251))]);
const VOICE = Buffer.concat([Buffer.from("OggS", "latin1"), Buffer.alloc(2048, 7)]);

const cleanups = useCleanups();

async function setup() {
  const fake = await startFakeWhatsAppServer();
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = new WhatsAppAdapter({
    accessToken: fake.accessToken,
    appSecret: APP_SECRET,
    verifyToken: VERIFY_TOKEN,
    phoneNumberId: FAKE_PHONE_NUMBER_ID,
    apiUrl: fake.url,
    rules: TEST_RULES,
    readReceipts: false,
    logger,
  });
  const http = Fastify({ logger: false });
  adapter.routes(http);
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    return { status: "accepted", sessionKey: "k" };
  });
  await http.listen({ host: "127.0.0.1", port: 0 });
  cleanups.push(async () => {
    await adapter.disconnect();
    await http.close();
  });
  const url = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}/whatsapp/webhook`;
  const deliver = async (payload: Record<string, unknown>): Promise<InboundMessage> => {
    const before = received.length;
    expect((await postWhatsAppWebhook(url, payload, { appSecret: APP_SECRET })).status).toBe(200);
    return waitFor(() => received[before] ?? null, { what: "the inbound message" });
  };
  return { fake, adapter, logger, deliver };
}

async function bytesOf(fetched: FetchedMedia): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of fetched.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const request = (source: SessionSource, maxBytes = 20 * 1024 * 1024) => ({ source, maxBytes, signal: AbortSignal.timeout(20_000) });

it("an inbound image maps to InboundMedia with its media id and fetchMedia returns exactly the registered bytes", async () => {
  const { fake, adapter, logger, deliver } = await setup();
  fake.setMedia(IMAGE_ID, { bytes: IMAGE, mimeType: "image/png" });
  const message = await deliver(whatsappWebhook("webhook-image"));
  expect(message.text).toBe("Is this the right one?");
  expect(message.media).toEqual([{ kind: "image", url: null, fileId: IMAGE_ID, mimeType: "image/jpeg", fileName: null, caption: "Is this the right one?" }]);
  const fetched = await adapter.fetchMedia(message.media![0]!, request(message.source));
  expect(fetched).toMatchObject({ size: IMAGE.length, mimeType: "image/png" });
  expect((await bytesOf(fetched)).equals(IMAGE)).toBe(true);
  // The media endpoint was asked for this business number's media, then the file was fetched with the token.
  expect(fake.calls.find((c) => c.path === `/v26.0/${IMAGE_ID}`)).toMatchObject({ method: "GET", status: 200 });
  expect(fake.downloads).toEqual([{ mediaId: IMAGE_ID, authorized: true, status: 200 }]);
  expect(logger.text()).not.toContain(fake.accessToken);
});

it("a voice note maps to audio with voice: true and its bytes come back", async () => {
  const { fake, adapter, deliver } = await setup();
  fake.setMedia(VOICE_ID, { bytes: VOICE, mimeType: "audio/ogg" });
  const message = await deliver(whatsappWebhook("webhook-audio"));
  expect(message.text).toBe("");
  expect(message.media).toEqual([
    { kind: "audio", url: null, fileId: VOICE_ID, mimeType: "audio/ogg; codecs=opus", fileName: null, caption: null, voice: true },
  ]);
  const fetched = await adapter.fetchMedia(message.media![0]!, request(message.source));
  expect((await bytesOf(fetched)).equals(VOICE)).toBe(true);
});

it("a declared file_size over the limit: the size is told and nothing is downloaded, even when the body is read", async () => {
  const { fake, adapter, deliver } = await setup();
  fake.setMedia(IMAGE_ID, { bytes: IMAGE, mimeType: "image/png", fileSize: 30 * 1024 * 1024 });
  const message = await deliver(whatsappWebhook("webhook-image"));
  const fetched = await adapter.fetchMedia(message.media![0]!, request(message.source));
  expect(fetched.size).toBe(30 * 1024 * 1024);
  await expect(bytesOf(fetched)).rejects.toThrow(MediaUnavailableError);
  await expect(bytesOf(await adapter.fetchMedia(message.media![0]!, request(message.source)))).rejects.toThrow(
    "The file is 30.0 MB and at most 20.0 MB is kept here, so it was not downloaded.",
  );
  expect(fake.downloads).toEqual([]);
});

it("the fake refuses a download without the access token; the adapter always sends it", async () => {
  const { fake } = await setup();
  fake.setMedia(IMAGE_ID, { bytes: IMAGE, mimeType: "image/png" });
  const info = (await (await fetch(`${fake.url}/v26.0/${IMAGE_ID}`, { headers: { authorization: `Bearer ${fake.accessToken}` } })).json()) as { url: string };
  expect(new URL(info.url).origin).toBe(fake.url);
  const anonymous = await fetch(info.url);
  expect(anonymous.status).toBe(401);
  expect(((await anonymous.json()) as { error: { code: number } }).error.code).toBe(190);
  expect(fake.downloads).toEqual([{ mediaId: IMAGE_ID, authorized: false, status: 401 }]);
});

it("a media id WhatsApp does not have is a MediaUnavailableError; a refused download is an error with its status and no token", async () => {
  const { fake, adapter, deliver } = await setup();
  const message = await deliver(whatsappWebhook("webhook-image"));
  await expect(adapter.fetchMedia(message.media![0]!, request(message.source))).rejects.toThrow(
    new MediaUnavailableError("WhatsApp no longer has this file (it keeps media for 30 days)."),
  );
  // Registered, but its file is gone from the media host: the download answers 404.
  fake.setMedia(IMAGE_ID, { bytes: IMAGE, mimeType: "image/png", url: `${fake.url}/whatsapp_business/attachments/?mid=999&ext=1&hash=x` });
  const fetched = await adapter.fetchMedia(message.media![0]!, request(message.source));
  const error = (await bytesOf(fetched).catch((e: unknown) => e)) as Error;
  expect(error.message).toContain("HTTP 404");
  expect(JSON.stringify({ message: error.message, stack: error.stack, cause: String(error.cause) })).not.toContain(fake.accessToken);
  // A media id that could change the request path is refused without a request.
  const calls = fake.calls.length;
  await expect(adapter.fetchMedia({ kind: "image", fileId: "../106540352242922" }, request(message.source))).rejects.toThrow(/media id/u);
  expect(fake.calls.length).toBe(calls);
});
