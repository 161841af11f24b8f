/**
 * End to end, issue 30 on Signal: `threadline serve` as a child process with the Signal
 * adapter against the local fake signal-cli REST API (receive WebSocket; attachments served at
 * `GET /v1/attachments/{id}`), and the fake OpenAI-compatible provider (chat, vision and
 * `/v1/audio/transcriptions`). A photo reaches the model as an `image_url` part whose data URL
 * carries exactly the bytes the REST API served; a voice note is uploaded to the transcription
 * endpoint and its transcript reaches the chat request; both are kept with the session.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { SIGNAL_IDS, signalFixture, signalMessage, startFakeSignalServer } from "../fakes/signal/fake-signal-server.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, withDatabase } from "./gateway-process.js";
import { imageBytesSent, lastUserTexts } from "./media-model-requests.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-signal-media-e2e";
const { bot: BOT, alice: ALICE } = SIGNAL_IDS;
const TRANSCRIPT = "Remind me to water the plants tonight.";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

/** The attachments of the documented fixture (a photo, a voice note), by content type. */
function fixtureAttachment(contentType: string): Record<string, unknown> {
  const received = signalFixture<{ envelope: { dataMessage: { attachments: Array<Record<string, unknown>> } } }>("receive-attachments");
  return received.envelope.dataMessage.attachments.find((a) => a["contentType"] === contentType)!;
}

it(
  "a photo reaches the model as an image part with exactly the served bytes; a voice note is transcribed and its text reaches the model; both are kept with the session",
  async () => {
    const jpeg = await readFile(new URL("../media/fixtures/pixel.jpg", import.meta.url));
    const ogg = await readFile(new URL("../media/fixtures/voice.ogg", import.meta.url));
    const signal = await startFakeSignalServer();
    const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null, transcript: TRANSCRIPT });
    closers.push(
      () => signal.close(),
      () => model.close(),
    );
    const photo: Record<string, unknown> = { ...fixtureAttachment("image/jpeg"), size: jpeg.length };
    const voice = { ...fixtureAttachment("audio/aac"), contentType: "audio/ogg", id: "VNaud1oEXAMPLEid.ogg", size: ogg.length };
    signal.setAttachment(String(photo["id"]), jpeg, "image/jpeg");
    signal.setAttachment(String(voice["id"]), ogg, "audio/ogg");
    const home = await makeHome({
      titles: { enabled: false },
      adapters: { apiServer: { enabled: false }, signal: { apiUrl: signal.url, number: BOT, access: "open" } },
    });
    const gateway = await spawnGateway({
      home,
      env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", THREADLINE_TRANSCRIPTION_MODEL: "whisper-1" },
    });
    await signal.waitFor(() => signal.connected, "the receive WebSocket");

    // The photo: fetched from the REST API, sent to the model as a data URL of the same bytes.
    signal.push(signalMessage("receive-attachments", { timestamp: 1_767_400_000_000, message: "what is on this photo?", data: { attachments: [photo] } }));
    const image = await waitFor(() => imageBytesSent(model)[0], { what: "the image part", timeoutMs: 60_000, describe: () => gateway.output() });
    expect(image.mimeType).toBe("image/jpeg");
    expect(image.bytes.equals(jpeg)).toBe(true);
    expect(lastUserTexts(model)[0]).toContain("what is on this photo?");
    await signal.waitFor(() => signal.sentTo(ALICE)[0], "the reply to the photo");

    // The voice note (no text): uploaded for transcription, the transcript in the chat request.
    signal.push(signalMessage("receive-attachments", { timestamp: 1_767_400_060_000, message: "", data: { attachments: [voice] } }));
    const upload = await waitFor(() => model.transcriptions[0], { what: "the transcription upload", timeoutMs: 60_000, describe: () => gateway.output() });
    expect(upload.model).toBe("whisper-1");
    expect(Buffer.from(upload.bytes).equals(ogg)).toBe(true);
    await waitFor(() => lastUserTexts(model).find((text) => text.includes(TRANSCRIPT)), {
      what: "the transcript in a chat request",
      timeoutMs: 60_000,
      describe: () => JSON.stringify(lastUserTexts(model)),
    });
    await signal.waitFor(() => signal.sentTo(ALICE)[1], "the reply to the voice note");
    expect(signal.callsOf("GET", /^\/v1\/attachments\//u).map((c) => [c.path, c.status])).toEqual([
      [`/v1/attachments/${String(photo["id"])}`, 200],
      [`/v1/attachments/${String(voice["id"])}`, 200],
    ]);

    // Both kept with the session, with their bytes.
    await withDatabase(home, async (db) => {
      const route = (await db.listRoutes()).items.find((r) => r.key === `agent:main:signal:dm:${ALICE}`)!;
      const attachments = await db.listAttachments(route.sessionId);
      expect(attachments.map((a) => [a.kind, a.sha256, a.stored])).toEqual([
        ["image", sha256(jpeg), true],
        ["audio", sha256(ogg), true],
      ]);
      expect(attachments[1]!.voice).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(jpeg)))!).equals(jpeg)).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(ogg)))!).equals(ogg)).toBe(true);
      expect((await db.searchMessages("plants")).length).toBeGreaterThan(0);
    });
  },
  TEST_TIMEOUT,
);
