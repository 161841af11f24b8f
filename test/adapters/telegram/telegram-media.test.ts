/**
 * Telegram media through the REAL grammY against the local fake Bot API: inbound photos and
 * voice notes map to `InboundMedia` (the `file_id`, never a URL), and `fetchMedia` downloads
 * exactly the bytes the fake serves through `getFile` + `/file/bot<token>/<file_path>`, refuses
 * files over the Bot API's 20 MB download limit before downloading, and never shows the token.
 */
import { expect, it } from "vitest";
import { TelegramAdapter } from "../../../src/adapters/telegram/index.js";
import { MediaUnavailableError, type InboundMessage, type MediaFetchRequest } from "../../../src/gateway/index.js";
import { startFakeTelegramServer, telegramUpdate } from "../../fakes/telegram/fake-telegram-server.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapter-harness.js";
import { fetchedBytes, pngImage } from "../media-bytes.js";

const cleanups = useCleanups();

/** The adapter connected to the fake, handing every inbound message to `received`. */
async function setup() {
  const fake = await startFakeTelegramServer();
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = await TelegramAdapter.create({ token: fake.token, apiRoot: fake.url, rules: TEST_RULES, logger, pollingTimeoutSeconds: 5 });
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    return { status: "accepted", sessionKey: "agent:main:telegram:dm:111111" };
  });
  cleanups.push(() => adapter.disconnect());
  const request = (): MediaFetchRequest => ({ source: received[0]!.source, maxBytes: 20_971_520, signal: new AbortController().signal });
  return { fake, adapter, logger, received, request };
}

it("a photo maps to InboundMedia with its file id, and fetchMedia returns exactly the bytes the Bot API serves", async () => {
  const { fake, adapter, received, request } = await setup();
  const bytes = pngImage(32, 24, 7);
  const file = fake.addFile(bytes, { filePath: "photos/file_7.jpg", mimeType: "image/jpeg" });
  fake.pushUpdate(
    telegramUpdate("update-photo-album", {
      message_id: 70,
      photo: [
        { file_id: "AgACthumb", file_unique_id: "t", file_size: 300, width: 90, height: 60 },
        { file_id: file.fileId, file_unique_id: file.fileUniqueId, file_size: file.size, width: 1280, height: 853 },
      ],
    }),
  );
  await fake.waitFor(() => received.length === 1, "the photo handed to the gateway");
  const media = received[0]!.media![0]!;
  expect(media).toMatchObject({ kind: "image", fileId: file.fileId, mimeType: "image/jpeg", size: bytes.length, caption: "our whiteboard" });
  expect(media.url ?? null).toBeNull();
  expect(received[0]!.albumId).toBe("13579246801357924");

  const fetched = await adapter.fetchMedia(media, request());
  expect(fetched.size).toBe(bytes.length);
  expect(fetched.mimeType).toBe("image/jpeg");
  expect((await fetchedBytes(fetched)).equals(bytes)).toBe(true);
  expect(fake.callsOf("getFile").map((c) => c.params["file_id"])).toEqual([file.fileId]);
  expect(fake.downloads(file.fileId)).toBe(1);
});

it("a voice note maps to audio with voice: true and downloads like any file", async () => {
  const { fake, adapter, received, request } = await setup();
  const bytes = Buffer.from("OggS\u0000\u0002fake opus voice note", "latin1");
  const file = fake.addFile(bytes, { filePath: "voice/file_3.oga", mimeType: "audio/ogg" });
  fake.pushUpdate(
    telegramUpdate("update-voice", {
      message_id: 71,
      voice: { file_id: file.fileId, file_unique_id: file.fileUniqueId, duration: 2, mime_type: "audio/ogg", file_size: file.size },
    }),
  );
  await fake.waitFor(() => received.length === 1, "the voice note handed to the gateway");
  const media = received[0]!.media![0]!;
  expect(media).toMatchObject({ kind: "audio", voice: true, mimeType: "audio/ogg", fileId: file.fileId, meta: { durationSeconds: 2 } });
  expect((await fetchedBytes(await adapter.fetchMedia(media, request()))).equals(bytes)).toBe(true);
});

it("a file over 20 MB is refused before any download: declared in the update, or told by getFile", async () => {
  const { fake, adapter } = await setup();
  const source = { platform: "telegram", chatType: "dm" as const, chatId: "111111" };
  const ask = { source, maxBytes: 50_000_000, signal: new AbortController().signal };
  const declared = adapter.fetchMedia({ kind: "video", fileId: "BAACbig", size: 25 * 1024 * 1024 }, ask);
  await expect(declared).rejects.toBeInstanceOf(MediaUnavailableError);
  await expect(declared).rejects.toThrow("Telegram lets bots download files of at most 20 MB.");
  expect(fake.callsOf("getFile")).toHaveLength(0);

  const big = fake.addFile(Buffer.from("not really big"), { declaredSize: 21 * 1024 * 1024 });
  await expect(adapter.fetchMedia({ kind: "file", fileId: big.fileId }, ask)).rejects.toThrow("Telegram lets bots download files of at most 20 MB.");
  expect(fake.callsOf("getFile")).toHaveLength(1);
  expect(fake.downloads(big.fileId)).toBe(0);
});

it("failures name the status, never the token: an unknown file id, an expired download link, an unreachable Bot API", async () => {
  const { fake, adapter, logger } = await setup();
  const ask = { source: { platform: "telegram", chatType: "dm" as const, chatId: "111111" }, maxBytes: 20_971_520, signal: new AbortController().signal };
  const messages: string[] = [];
  const record = async (promise: Promise<unknown>): Promise<void> => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).not.toBeNull();
    expect(error).not.toBeInstanceOf(MediaUnavailableError);
    messages.push(`${error!.message} ${error!.stack ?? ""} ${String((error as { cause?: unknown }).cause ?? "")}`);
  };
  await record(adapter.fetchMedia({ kind: "file", fileId: "BQACunknown" }, ask));
  const file = fake.addFile(Buffer.from("bytes"), { filePath: "documents/gone.bin" });
  fake.expireFile(file.fileId);
  await record(adapter.fetchMedia({ kind: "file", fileId: file.fileId }, ask));
  expect(messages[1]).toContain("HTTP 404");
  await fake.close();
  await record(adapter.fetchMedia({ kind: "file", fileId: file.fileId }, ask));
  const secretFree = messages.join("\n") + logger.text();
  expect(secretFree).not.toContain(fake.token);
  expect(secretFree).not.toContain(encodeURIComponent(fake.token));
});
