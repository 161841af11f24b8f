/**
 * Signal media through the adapter: a message with a photo and a voice note, pushed by the
 * fake signal-cli REST API over the receive WebSocket, reaches the handler as one message with
 * two `InboundMedia` (attachment ids, sizes, the voice note flagged), and `fetchMedia` gets
 * exactly the bytes the fake stores (`GET /v1/attachments/{id}` of the configured REST API).
 */
import { expect, it } from "vitest";
import { SignalAdapter } from "../../../src/adapters/signal/index.js";
import { MediaUnavailableError, type FetchedMedia, type InboundMessage } from "../../../src/gateway/index.js";
import { SIGNAL_IDS, signalMessage, startFakeSignalServer } from "../../fakes/signal/fake-signal-server.js";
import { waitFor } from "../../support/wait-for.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapter-harness.js";

const IMAGE_ID = "P0xLq3sEXAMPLEid.jpg";
const VOICE_ID = "VNaud1oEXAMPLEid.aac";
const IMAGE = Buffer.concat([Buffer.from("ffd8ffe000104a464946", "hex"), Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7) % 256))]);
const VOICE = Buffer.concat([Buffer.from("fff15080", "hex"), Buffer.alloc(1500, 3)]);

const cleanups = useCleanups();

async function setup() {
  const fake = await startFakeSignalServer();
  cleanups.push(() => fake.close());
  const adapter = await SignalAdapter.create({ apiUrl: fake.url, number: SIGNAL_IDS.bot, rules: TEST_RULES, logger: recordingLogger(), readReceipts: false });
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    return { status: "accepted", sessionKey: "k" };
  });
  cleanups.push(() => adapter.disconnect());
  await fake.waitFor(() => fake.connected, "the receive WebSocket");
  return { fake, adapter, received };
}

async function bytesOf(fetched: FetchedMedia): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of fetched.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

it("a photo and a voice note of one message map to two InboundMedia and fetchMedia returns exactly the stored bytes", async () => {
  const { fake, adapter, received } = await setup();
  fake.setAttachment(IMAGE_ID, IMAGE, "image/jpeg");
  fake.setAttachment(VOICE_ID, VOICE, "audio/aac");
  fake.push(signalMessage("receive-attachments"));
  const message = await waitFor(() => received[0], { what: "the message with attachments" });
  expect(message.text).toBe("what is on this photo?");
  expect(message.media).toEqual([
    {
      kind: "image",
      url: null,
      fileId: IMAGE_ID,
      mimeType: "image/jpeg",
      fileName: "photo.jpg",
      caption: null,
      size: 48213,
      meta: { width: 1024, height: 768 },
    },
    { kind: "audio", url: null, fileId: VOICE_ID, mimeType: "audio/aac", fileName: null, caption: null, size: 9120, voice: true },
  ]);
  const request = { source: message.source, maxBytes: 20 * 1024 * 1024, signal: AbortSignal.timeout(20_000) };
  const image = await adapter.fetchMedia(message.media![0]!, request);
  expect(image).toMatchObject({ size: IMAGE.length, mimeType: "image/jpeg", fileName: "photo.jpg" });
  expect((await bytesOf(image)).equals(IMAGE)).toBe(true);
  expect((await bytesOf(await adapter.fetchMedia(message.media![1]!, request))).equals(VOICE)).toBe(true);
  expect(fake.callsOf("GET", /^\/v1\/attachments\//u).map((c) => [c.path, c.status])).toEqual([
    [`/v1/attachments/${IMAGE_ID}`, 200],
    [`/v1/attachments/${VOICE_ID}`, 200],
  ]);
});

it("an attachment the REST API does not have is a MediaUnavailableError; an id that could change the path is refused without a request", async () => {
  const { fake, adapter } = await setup();
  const request = { source: { platform: "signal", chatType: "dm" as const, chatId: SIGNAL_IDS.alice }, maxBytes: 1000, signal: AbortSignal.timeout(20_000) };
  await expect(adapter.fetchMedia({ kind: "image", fileId: "gone.jpg" }, request)).rejects.toThrow(MediaUnavailableError);
  fake.failNext("GET", /^\/v1\/attachments\//u, { status: 500, body: { error: "signal-cli exited" } });
  await expect(adapter.fetchMedia({ kind: "image", fileId: IMAGE_ID }, request)).rejects.toThrow(
    "signal: the signal-cli REST API answered 500 to GET /v1/attachments/{id}: signal-cli exited",
  );
  const calls = fake.calls.length;
  for (const fileId of ["..", "../v1/accounts", "a/b.jpg", "x..jpg", "%2e%2e"])
    await expect(adapter.fetchMedia({ kind: "image", fileId }, request), fileId).rejects.toThrow(/attachment id/u);
  // Only the id is used: a URL on the media (a message never carries one) is not fetched.
  await expect(adapter.fetchMedia({ kind: "image", url: `${fake.url}/v1/attachments/${IMAGE_ID}` }, request)).rejects.toThrow(MediaUnavailableError);
  expect(fake.calls.length).toBe(calls);
});
