/**
 * End to end, issue 30 on Matrix: `threadline serve` as a child process with the Matrix
 * adapter (the REAL matrix-js-sdk) against the local fake homeserver (which serves media through
 * the authenticated media API), and the fake OpenAI-compatible provider (chat, vision and
 * `/v1/audio/transcriptions`). A photo (`m.image`) reaches the model as an `image_url` part
 * whose data URL carries exactly the bytes the homeserver served; a voice note (MSC3245) is
 * uploaded to the transcription endpoint and its transcript reaches the chat request; both are
 * kept with the session.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterEach, expect, it } from "vitest";
import { MATRIX_IDS, matrixFixture, startFakeMatrixHomeserver } from "../fakes/matrix/fake-matrix-homeserver.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, withDatabase } from "./gateway-process.js";
import { imageBytesSent, lastUserTexts } from "./media-model-requests.js";

const TEST_TIMEOUT = 120_000;
const FAKE_KEY = "sk-fake-matrix-media-e2e";
const { bot: BOT, alice: ALICE, dm: DM } = MATRIX_IDS;
const TRANSCRIPT = "Book a table for four on Friday.";

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
    const matrix = await startFakeMatrixHomeserver({ maxPollMs: 2_000 });
    const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null, transcript: TRANSCRIPT });
    closers.push(
      () => matrix.close(),
      () => model.close(),
    );
    const photoUri = matrix.setMedia("PhotoFromAlice0001", jpeg, "image/jpeg", { fileName: "dinner.jpg" });
    const voiceUri = matrix.setMedia("VoiceNoteMediaId4200", ogg, "audio/ogg");
    const home = await makeHome({
      titles: { enabled: false },
      adapters: { apiServer: { enabled: false }, matrix: { homeserverUrl: matrix.url, access: "open" } },
    });
    const gateway = await spawnGateway({
      home,
      env: {
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: FAKE_KEY,
        THREADLINE_MODEL: "fake-model",
        THREADLINE_TRANSCRIPTION_MODEL: "whisper-1",
        MATRIX_ACCESS_TOKEN: matrix.token,
      },
    });
    await waitFor(() => gateway.logLines().find((l) => l["platform"] === "matrix" && l["msg"] === `matrix adapter connected as ${BOT} (sync)`), {
      what: "the matrix startup line",
      describe: () => gateway.output(),
    });

    // The photo with a caption: fetched through the authenticated media API, sent as a data URL of the same bytes.
    const image = matrixFixture<{ content: Record<string, unknown> }>("event-message-image").content;
    matrix.pushMessage(DM, ALICE, {
      ...image,
      body: "what should I order?",
      filename: "dinner.jpg",
      url: photoUri,
      info: { mimetype: "image/jpeg", size: jpeg.length },
    });
    const sent = await waitFor(() => imageBytesSent(model)[0], { what: "the image part", timeoutMs: 60_000, describe: () => gateway.output() });
    expect(sent.mimeType).toBe("image/jpeg");
    expect(sent.bytes.equals(jpeg)).toBe(true);
    expect(lastUserTexts(model)[0]).toContain("what should I order?");
    await matrix.waitFor(() => matrix.sentTo(DM)[0], "the reply to the photo");

    // The voice note: uploaded for transcription, the transcript in the chat request.
    const voice = matrixFixture<{ content: Record<string, unknown> }>("event-message-voice").content;
    matrix.pushMessage(DM, ALICE, { ...voice, url: voiceUri, info: { ...(voice["info"] as object), size: ogg.length } });
    const upload = await waitFor(() => model.transcriptions[0], { what: "the transcription upload", timeoutMs: 60_000, describe: () => gateway.output() });
    expect(upload.model).toBe("whisper-1");
    expect(Buffer.from(upload.bytes).equals(ogg)).toBe(true);
    await waitFor(() => lastUserTexts(model).find((text) => text.includes(TRANSCRIPT)), {
      what: "the transcript in a chat request",
      timeoutMs: 60_000,
      describe: () => JSON.stringify(lastUserTexts(model)),
    });
    await matrix.waitFor(() => matrix.sentTo(DM)[1], "the reply to the voice note");
    expect(matrix.mediaDownloads.map((d) => [d.api, d.mediaId, d.authorized, d.status])).toEqual([
      ["v1", "PhotoFromAlice0001", true, 200],
      ["v1", "VoiceNoteMediaId4200", true, 200],
    ]);

    // Both kept with the session, with their bytes.
    await withDatabase(home, async (db) => {
      const route = (await db.listRoutes()).items.find((r) => r.key.startsWith("agent:main:matrix:dm:"))!;
      const attachments = await db.listAttachments(route.sessionId);
      expect(attachments.map((a) => [a.kind, a.sha256, a.stored])).toEqual([
        ["image", sha256(jpeg), true],
        ["audio", sha256(ogg), true],
      ]);
      expect(attachments[0]!.fileName).toBe("dinner.jpg");
      expect(attachments[1]!.voice).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(jpeg)))!).equals(jpeg)).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(ogg)))!).equals(ogg)).toBe(true);
      expect((await db.searchMessages("Friday")).length).toBeGreaterThan(0);
    });
    expect(gateway.output()).not.toContain(matrix.token);
  },
  TEST_TIMEOUT,
);
