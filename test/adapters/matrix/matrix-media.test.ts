/**
 * Matrix media through the adapter: the REAL matrix-js-sdk syncs an `m.image` and an MSC3245
 * voice note from the fake homeserver; each reaches the handler as `InboundMedia` with its
 * `mxc://` URI, and `fetchMedia` gets exactly the stored bytes through the authenticated media
 * API (`/_matrix/client/v1/media/download/…` with the token), or the legacy endpoint when the
 * homeserver predates it.
 */
import { expect, it } from "vitest";
import { MatrixAdapter } from "../../../src/adapters/matrix/index.js";
import { MediaUnavailableError, type FetchedMedia, type InboundMessage } from "../../../src/gateway/index.js";
import { PlatformError } from "../../../src/store/index.js";
import { MATRIX_IDS, matrixFixture, startFakeMatrixHomeserver } from "../../fakes/matrix/fake-matrix-homeserver.js";
import { waitFor } from "../../support/wait-for.js";
import { TEST_RULES, recordingLogger, useCleanups } from "../adapter-harness.js";

const PNG = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 13) % 256))]);
const OGG = Buffer.concat([Buffer.from("OggS", "latin1"), Buffer.alloc(3000, 9)]);

const cleanups = useCleanups();

async function setup(options: { authenticatedMedia?: boolean } = {}) {
  const fake = await startFakeMatrixHomeserver({ maxPollMs: 1_000, ...options });
  cleanups.push(() => fake.close());
  const logger = recordingLogger();
  const adapter = await MatrixAdapter.create({ homeserverUrl: fake.url, accessToken: fake.token, rules: TEST_RULES, logger, pollTimeoutMs: 1_000 });
  const received: InboundMessage[] = [];
  await adapter.connect(async (message) => {
    received.push(message);
    return { status: "accepted", sessionKey: "k" };
  });
  cleanups.push(() => adapter.disconnect());
  await waitFor(() => logger.lines.some((l) => l.msg === `matrix adapter connected as ${MATRIX_IDS.bot} (sync)`), { what: "the first sync" });
  return { fake, adapter, logger, received };
}

async function bytesOf(fetched: FetchedMedia): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of fetched.body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const request = () => ({
  source: { platform: "matrix", chatType: "dm" as const, chatId: MATRIX_IDS.dm },
  maxBytes: 1_000_000,
  signal: AbortSignal.timeout(20_000),
});

it("an inbound image maps to InboundMedia with its mxc URI and fetchMedia returns exactly the stored bytes (authenticated media, with the token)", async () => {
  const { fake, adapter, logger, received } = await setup();
  const mxc = fake.setMedia("PhotoOfTheCat01", PNG, "image/png", { fileName: "cat.png" });
  const image = matrixFixture<{ content: Record<string, unknown> }>("event-message-image").content;
  fake.pushMessage(MATRIX_IDS.dm, MATRIX_IDS.alice, {
    ...image,
    body: "is this a cat?",
    filename: "cat.png",
    url: mxc,
    info: { mimetype: "image/png", size: PNG.length },
  });
  const message = await waitFor(() => received[0], { what: "the image message" });
  expect(message.text).toBe("is this a cat?");
  expect(message.media).toEqual([{ kind: "image", url: mxc, mimeType: "image/png", fileName: "cat.png", caption: "is this a cat?", size: PNG.length }]);
  const fetched = await adapter.fetchMedia(message.media![0]!, request());
  expect(fetched).toMatchObject({ size: PNG.length, mimeType: "image/png", fileName: "cat.png" });
  expect((await bytesOf(fetched)).equals(PNG)).toBe(true);
  expect(fake.mediaDownloads).toEqual([{ api: "v1", serverName: "example.org", mediaId: "PhotoOfTheCat01", authorized: true, status: 200 }]);
  expect(logger.text()).not.toContain(fake.token);
});

it("a voice note (MSC3245) is audio with voice: true; a homeserver without authenticated media is asked at the legacy endpoint", async () => {
  const { fake, adapter, received } = await setup({ authenticatedMedia: false });
  const voice = matrixFixture<{ content: Record<string, unknown> }>("event-message-voice").content;
  const mxc = fake.setMedia("VoiceNoteMediaId4200", OGG, "audio/ogg");
  fake.pushMessage(MATRIX_IDS.dm, MATRIX_IDS.alice, voice);
  const message = await waitFor(() => received[0], { what: "the voice note" });
  expect(message.media![0]).toMatchObject({ kind: "audio", url: mxc, voice: true, mimeType: "audio/ogg" });
  expect((await bytesOf(await adapter.fetchMedia(message.media![0]!, request()))).equals(OGG)).toBe(true);
  expect(fake.mediaDownloads.map((d) => [d.api, d.status])).toEqual([
    ["v1", 404],
    ["v3", 200],
  ]);
});

it("a file the homeserver does not have is a MediaUnavailableError; another refusal says its status and errcode without the token", async () => {
  const { fake, adapter } = await setup();
  await expect(adapter.fetchMedia({ kind: "image", url: "mxc://example.org/NotThere" }, request())).rejects.toThrow(MediaUnavailableError);
  const wrong = await MatrixAdapter.create({ homeserverUrl: fake.url, accessToken: "syt_not_the_right_token_at_all", rules: TEST_RULES });
  const error = (await wrong.fetchMedia({ kind: "image", url: "mxc://example.org/NotThere" }, request()).catch((e: unknown) => e)) as PlatformError;
  expect(error).toBeInstanceOf(PlatformError);
  expect(error.message).toBe("matrix: the homeserver answered 401 M_UNKNOWN_TOKEN to the media download");
  expect(error.message).not.toContain("syt_not_the_right_token_at_all");
});
