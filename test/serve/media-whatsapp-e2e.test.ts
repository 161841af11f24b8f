/**
 * End to end, issue 30 on WhatsApp: `threadline serve` as a child process with the WhatsApp
 * adapter against the local fake Graph API (which serves the media files), signed webhooks
 * from the documented payloads, and the fake OpenAI-compatible provider (chat, vision and
 * `/v1/audio/transcriptions`). A photo reaches the model as an `image_url` part whose data URL
 * carries exactly the bytes the fake served; a voice note is uploaded to the transcription
 * endpoint and its transcript reaches the chat request; both are kept with the session.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { FAKE_PHONE_NUMBER_ID, startFakeWhatsAppServer } from "../fakes/whatsapp/fake-whatsapp-server.js";
import { postWhatsAppWebhook, whatsappWebhook } from "../fakes/whatsapp/whatsapp-webhooks.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, withDatabase } from "./gateway-process.js";
import { imageBytesSent, lastUserTexts } from "./media-model-requests.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-whatsapp-media-e2e";
const APP_SECRET = "5f0e1d2c3b4a59687f6e5d4c3b2a1908";
const VERIFY_TOKEN = "threadline-verify-7f3a9c";
const USER = "16505551234";
const IMAGE_ID = "1003383421387256";
const VOICE_ID = "1047268730519838";
const TRANSCRIPT = "Please call me back tomorrow at nine.";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

it(
  "a photo reaches the model as an image part with exactly the served bytes; a voice note is transcribed and its text reaches the model; both are kept with the session",
  async () => {
    const jpeg = await readFile(new URL("../media/fixtures/pixel.jpg", import.meta.url));
    const ogg = await readFile(new URL("../media/fixtures/voice.ogg", import.meta.url));
    const whatsapp = await startFakeWhatsAppServer();
    const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null, transcript: TRANSCRIPT });
    closers.push(
      () => whatsapp.close(),
      () => model.close(),
    );
    whatsapp.setMedia(IMAGE_ID, { bytes: jpeg, mimeType: "image/jpeg" });
    whatsapp.setMedia(VOICE_ID, { bytes: ogg, mimeType: "audio/ogg" });
    const home = await makeHome({
      titles: { enabled: false },
      adapters: { apiServer: { enabled: false }, whatsapp: { apiUrl: whatsapp.url, phoneNumberId: FAKE_PHONE_NUMBER_ID, access: "open" } },
    });
    const gateway = await spawnGateway({
      home,
      env: {
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: FAKE_KEY,
        THREADLINE_MODEL: "fake-model",
        THREADLINE_TRANSCRIPTION_MODEL: "whisper-1",
        WHATSAPP_ACCESS_TOKEN: whatsapp.accessToken,
        WHATSAPP_APP_SECRET: APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
      },
    });
    await waitFor(() => gateway.logLines().find((l) => l["platform"] === "whatsapp" && l["mode"] === "webhook"), {
      what: "the whatsapp startup line",
      describe: () => gateway.output(),
    });
    const deliver = async (payload: Record<string, unknown>): Promise<void> => {
      expect((await postWhatsAppWebhook(`${gateway.url}/whatsapp/webhook`, payload, { appSecret: APP_SECRET })).status).toBe(200);
    };

    // The photo: downloaded with the token, sent to the model as a data URL of the same bytes.
    await deliver(whatsappWebhook("webhook-image"));
    const image = await waitFor(() => imageBytesSent(model)[0], { what: "the image part", timeoutMs: 60_000, describe: () => gateway.output() });
    expect(image.mimeType).toBe("image/jpeg");
    expect(image.bytes.equals(jpeg)).toBe(true);
    expect(lastUserTexts(model)[0]).toContain("Is this the right one?");
    await whatsapp.waitFor(() => whatsapp.sentTo(USER)[0], "the reply to the photo");
    expect(whatsapp.downloads).toEqual([{ mediaId: IMAGE_ID, authorized: true, status: 200 }]);

    // The voice note: its bytes uploaded for transcription, the transcript in the chat request.
    await deliver(whatsappWebhook("webhook-audio"));
    const upload = await waitFor(() => model.transcriptions[0], { what: "the transcription upload", timeoutMs: 60_000, describe: () => gateway.output() });
    expect(upload.model).toBe("whisper-1");
    expect(Buffer.from(upload.bytes).equals(ogg)).toBe(true);
    await waitFor(() => lastUserTexts(model).find((text) => text.includes(TRANSCRIPT)), {
      what: "the transcript in a chat request",
      timeoutMs: 60_000,
      describe: () => JSON.stringify(lastUserTexts(model)),
    });
    await whatsapp.waitFor(() => whatsapp.sentTo(USER)[1], "the reply to the voice note");

    // Both kept with the session, with their bytes.
    await withDatabase(home, async (db) => {
      const route = (await db.listRoutes()).items.find((r) => r.key === `agent:main:whatsapp:dm:${USER}`)!;
      const attachments = await db.listAttachments(route.sessionId);
      expect(attachments.map((a) => [a.kind, a.sha256, a.stored])).toEqual([
        ["image", sha256(jpeg), true],
        ["audio", sha256(ogg), true],
      ]);
      expect(attachments[1]!.voice).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(jpeg)))!).equals(jpeg)).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(ogg)))!).equals(ogg)).toBe(true);
      expect((await db.searchMessages("tomorrow")).length).toBeGreaterThan(0);
    });
    expect(gateway.output()).not.toContain(whatsapp.accessToken);
  },
  TEST_TIMEOUT,
);
