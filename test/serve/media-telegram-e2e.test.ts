/**
 * End to end, issue 30 on Telegram: `threadline serve` as a child process with the Telegram
 * adapter against the local fake Bot API (grammY through `apiRoot`) and the fake
 * OpenAI-compatible provider. A photo reaches the model as an `image_url` data URL carrying
 * exactly the bytes the fake served through `getFile` + `/file/bot<token>/…`; a voice note is
 * uploaded to the provider's `/v1/audio/transcriptions` and its transcript reaches the chat
 * request; both are kept with the session (blobs by sha256); an album of three photos sent while
 * the session is busy becomes one request with three image parts. Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeTelegramServer, telegramUpdate, type FakeTelegramServer } from "../fakes/telegram/fake-telegram-server.js";
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeOpenAiServerOptions } from "../support/fake-openai-server.js";
import { oggOpusVoice, pngImage } from "../adapters/media-bytes.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor } from "./gateway-process.js";
import { imageBytesOf, sha256Of, storedAttachments, userTextsOf } from "./media-e2e-support.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-telegram-media";
const DM = 111111;
const ROUTE = `agent:main:telegram:dm:${DM}`;
const TRANSCRIPT = "please book a table for two at eight";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function start(modelOptions: FakeOpenAiServerOptions = {}) {
  const telegram = await startFakeTelegramServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null, transcript: TRANSCRIPT, ...modelOptions });
  closers.push(
    () => telegram.close(),
    () => model.close(),
  );
  const home = await makeHome({
    titles: { enabled: false },
    provider: { transcriptionModel: "whisper-1" },
    adapters: { apiServer: { enabled: false }, telegram: { apiRoot: telegram.url, access: "open" } },
  });
  const gateway = await spawnGateway({
    home,
    env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", TELEGRAM_BOT_TOKEN: telegram.token },
  });
  return { telegram, model, home, gateway };
}

function photoUpdate(telegram: FakeTelegramServer, messageId: number, bytes: Buffer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const file = telegram.addFile(bytes, { filePath: `photos/file_${messageId}.jpg`, mimeType: "image/jpeg" });
  return telegramUpdate("update-photo-album", {
    message_id: messageId,
    media_group_id: undefined,
    caption: `photo ${messageId}`,
    photo: [{ file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.size, width: 64, height: 48 }],
    ...extra,
  });
}

function chats(model: FakeOpenAiServer) {
  return model.requests.filter((r) => r.kind === "chat");
}

describe("threadline serve with Telegram media", () => {
  it(
    "a photo reaches the model as an image part with exactly the bytes Telegram served, and is kept with the session",
    async () => {
      const { telegram, model, home, gateway } = await start();
      const bytes = pngImage(64, 48, 11);
      telegram.pushUpdate(photoUpdate(telegram, 1, bytes, { caption: "what is on this whiteboard?" }));
      await telegram.waitFor(() => telegram.sentTo(DM)[0], "the reply to the photo");
      const request = chats(model).at(-1)!;
      expect(imageBytesOf(request)).toEqual([bytes]);
      expect(userTextsOf(request)).toContain("what is on this whiteboard?");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expect(gateway.output()).not.toContain(telegram.token);
      const stored = await storedAttachments(home, ROUTE);
      expect(stored.map((a) => [a.ref.kind, a.ref.sha256, a.ref.size])).toEqual([["image", sha256Of(bytes), bytes.length]]);
      expect(stored[0]!.bytes?.equals(bytes)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    "a voice note is uploaded for transcription and its transcript reaches the chat request; audio and transcript are kept",
    async () => {
      const { telegram, model, home, gateway } = await start();
      const voice = oggOpusVoice(5, 2_000);
      const file = telegram.addFile(voice, { filePath: "voice/file_9.oga", mimeType: "audio/ogg" });
      telegram.pushUpdate(
        telegramUpdate("update-voice", {
          message_id: 2,
          voice: { file_id: file.fileId, file_unique_id: file.fileUniqueId, duration: 3, mime_type: "audio/ogg", file_size: file.size },
        }),
      );
      await telegram.waitFor(() => telegram.sentTo(DM)[0], "the reply to the voice note");
      expect(model.transcriptions).toHaveLength(1);
      expect(Buffer.from(model.transcriptions[0]!.bytes).equals(voice)).toBe(true);
      expect(model.transcriptions[0]!.model).toBe("whisper-1");
      expect(userTextsOf(chats(model).at(-1)!).join("\n")).toContain(TRANSCRIPT);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      const stored = await storedAttachments(home, ROUTE);
      expect(stored).toHaveLength(1);
      expect(stored[0]!.ref).toMatchObject({ kind: "audio", voice: true, sha256: sha256Of(voice) });
      expect(stored[0]!.texts).toContain(TRANSCRIPT);
      expect(stored[0]!.bytes?.equals(voice)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    "an album of three photos sent while the session is busy becomes one request with the three images",
    async () => {
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const { telegram, model, gateway } = await start({
        script: async (request) => {
          if (request.kind === "chat" && JSON.stringify(request.body?.messages ?? []).includes("hold on")) await held;
          return null;
        },
      });
      telegram.pushUpdate(telegramUpdate("update-private-text", { message_id: 10, text: "hold on, photos coming" }));
      await waitFor(() => chats(model).length === 1 || null, { what: "the first turn at the model", describe: () => gateway.output() });
      const album = [pngImage(30, 20, 21), pngImage(30, 20, 22), pngImage(30, 20, 23)];
      for (const [i, bytes] of album.entries()) telegram.pushUpdate(photoUpdate(telegram, 11 + i, bytes, { media_group_id: "77001122334455" }));
      // All three handed over (Telegram confirms an update once the gateway has it durably).
      await telegram.waitFor(() => telegram.pendingUpdates() === 0, "the album taken");
      release();
      await telegram.waitFor(() => telegram.sentTo(DM).filter((m) => m.plain.startsWith("Reply to")).length >= 2, "the reply to the album");
      const albumRequests = chats(model).filter((r) => imageBytesOf(r).length > 0);
      expect(albumRequests).toHaveLength(1);
      expect(imageBytesOf(albumRequests[0]!)).toEqual(album);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );
});
