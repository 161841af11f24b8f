/**
 * End to end, issue 30 on Discord: `threadline serve` as a child process with the Discord
 * adapter (discord.js against the local fake: REST through `apiUrl`, the gateway WebSocket, the
 * CDN through `cdnUrl`) and the fake OpenAI-compatible provider. A photo attachment reaches the
 * model as an `image_url` data URL with exactly the bytes the fake CDN served; a voice message is
 * transcribed through the provider's `/v1/audio/transcriptions` and its transcript reaches the
 * chat request; both are kept with the session. Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DISCORD_IDS, discordMessage, startFakeDiscordServer } from "../fakes/discord/fake-discord-server.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { oggOpusVoice, pngImage } from "../adapters/media-bytes.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor } from "./gateway-process.js";
import { imageBytesOf, sha256Of, storedAttachments, userTextsOf } from "./media-e2e-support.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-discord-media";
const ROUTE = `agent:main:discord:dm:${DISCORD_IDS.dm}`;
const TRANSCRIPT = "what is the weather tomorrow";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function start() {
  const discord = await startFakeDiscordServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null, transcript: TRANSCRIPT });
  closers.push(
    () => discord.close(),
    () => model.close(),
  );
  const home = await makeHome({
    titles: { enabled: false },
    provider: { transcriptionModel: "whisper-1" },
    adapters: { apiServer: { enabled: false }, discord: { apiUrl: discord.url, cdnUrl: discord.cdnUrl, access: "open" } },
  });
  const gateway = await spawnGateway({
    home,
    env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model", DISCORD_BOT_TOKEN: discord.token },
  });
  await waitFor(() => discord.connected || null, { what: "the gateway connected to the fake Discord", describe: () => gateway.output() });
  return { discord, model, home, gateway };
}

describe("threadline serve with Discord attachments", () => {
  it(
    "a photo reaches the model as an image part with exactly the bytes the CDN served, and is kept with the session",
    async () => {
      const { discord, model, home, gateway } = await start();
      const bytes = pngImage(48, 32, 41);
      const photo = discord.addAttachment(bytes, { filename: "cat.png", contentType: "image/png", width: 48, height: 32 });
      discord.pushMessage(discordMessage("message-attachment", { id: "1500000000000000701", content: "what is in this picture?", attachments: [photo] }));
      await discord.waitFor(() => discord.sentTo(DISCORD_IDS.dm)[0], "the reply to the photo");
      const request = model.requests.filter((r) => r.kind === "chat").at(-1)!;
      expect(imageBytesOf(request)).toEqual([bytes]);
      expect(userTextsOf(request)).toContain("what is in this picture?");
      expect(discord.downloads(photo.id)).toBe(1);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expect(gateway.output()).not.toContain(discord.token);
      const stored = await storedAttachments(home, ROUTE);
      expect(stored.map((a) => [a.ref.kind, a.ref.sha256, a.ref.fileName])).toEqual([["image", sha256Of(bytes), "cat.png"]]);
      expect(stored[0]!.bytes?.equals(bytes)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    "a voice message is transcribed and its transcript reaches the chat request; audio and transcript are kept",
    async () => {
      const { discord, model, home, gateway } = await start();
      const voice = oggOpusVoice(9, 2_500);
      const clip = discord.addAttachment(voice, { voice: true });
      discord.pushMessage(discordMessage("message-voice", { id: "1500000000000000702", attachments: [clip] }));
      await discord.waitFor(() => discord.sentTo(DISCORD_IDS.dm)[0], "the reply to the voice message");
      expect(model.transcriptions).toHaveLength(1);
      expect(Buffer.from(model.transcriptions[0]!.bytes).equals(voice)).toBe(true);
      expect(userTextsOf(model.requests.filter((r) => r.kind === "chat").at(-1)!).join("\n")).toContain(TRANSCRIPT);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      const stored = await storedAttachments(home, ROUTE);
      expect(stored).toHaveLength(1);
      expect(stored[0]!.ref).toMatchObject({ kind: "audio", voice: true, sha256: sha256Of(voice) });
      expect(stored[0]!.texts).toContain(TRANSCRIPT);
      expect(stored[0]!.bytes?.equals(voice)).toBe(true);
    },
    TEST_TIMEOUT,
  );
});
