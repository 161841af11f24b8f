/**
 * End to end, issue 30 on Slack: `threadline serve` as a child process with the Slack adapter
 * (Bolt and the WebClient against the local fake through `apiUrl`; signed Events API POSTs to
 * `/slack/events`) and the fake OpenAI-compatible provider. A shared photo is downloaded from
 * the fake's file host with the bot token and reaches the model as an `image_url` data URL with
 * exactly those bytes; an audio clip recorded in Slack is transcribed through the provider's
 * `/v1/audio/transcriptions` and its transcript reaches the chat request; both are kept with
 * the session. Nothing leaves 127.0.0.1.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFakeSlackServer } from "../fakes/slack/fake-slack-server.js";
import { postSlackEvent, slackEvent, slackTs } from "../fakes/slack/slack-events.js";
import { startFakeOpenAiServer } from "../support/fake-openai-server.js";
import { pngImage, webmClip } from "../adapters/media-bytes.js";
import { cleanupProcesses, makeHome, spawnGateway, type GatewayProcess } from "./gateway-process.js";
import { imageBytesOf, sha256Of, storedAttachments, userTextsOf } from "./media-e2e-support.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-slack-media";
const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const DM = "D0ALICEDM1";
const ROUTE = `agent:main:slack:dm:${DM}`;
const TRANSCRIPT = "remind me to water the plants";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await cleanupProcesses();
  while (closers.length > 0) await closers.pop()!().catch(() => {});
});

async function start() {
  const slack = await startFakeSlackServer();
  const model = await startFakeOpenAiServer({ apiKey: FAKE_KEY, title: null, transcript: TRANSCRIPT });
  closers.push(
    () => slack.close(),
    () => model.close(),
  );
  const home = await makeHome({
    titles: { enabled: false },
    provider: { transcriptionModel: "whisper-1" },
    adapters: { apiServer: { enabled: false }, slack: { apiUrl: slack.url, access: "open" } },
  });
  const gateway = await spawnGateway({
    home,
    env: {
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: FAKE_KEY,
      THREADLINE_MODEL: "fake-model",
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
    },
  });
  const deliver = async (payload: Record<string, unknown>): Promise<void> => {
    expect((await postSlackEvent(`${gateway.url}/slack/events`, payload, { signingSecret: SIGNING_SECRET })).status).toBe(200);
  };
  return { slack, model, home, gateway, deliver };
}

function expectNoSecrets(gateway: GatewayProcess, botToken: string): void {
  expect(gateway.output()).not.toContain(botToken);
  expect(gateway.output()).not.toContain(SIGNING_SECRET);
}

describe("threadline serve with Slack files", () => {
  it(
    "a shared photo reaches the model as an image part with exactly the bytes of the file host, and is kept with the session",
    async () => {
      const { slack, model, home, gateway, deliver } = await start();
      const bytes = pngImage(50, 40, 31);
      const file = slack.addFile(bytes, { name: "whiteboard.png", mimetype: "image/png" });
      await deliver(slackEvent("event-file-share", { ts: slackTs(), text: "what does the whiteboard say?", files: [file] }));
      await slack.waitFor(() => slack.sentTo(DM)[0], "the reply to the photo");
      const request = model.requests.filter((r) => r.kind === "chat").at(-1)!;
      expect(imageBytesOf(request)).toEqual([bytes]);
      expect(userTextsOf(request)).toContain("what does the whiteboard say?");
      expect(slack.fileRequests(file.id)).toEqual({ served: 1, refused: 0 });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoSecrets(gateway, slack.botToken);
      const stored = await storedAttachments(home, ROUTE);
      expect(stored.map((a) => [a.ref.kind, a.ref.sha256, a.ref.fileName])).toEqual([["image", sha256Of(bytes), "whiteboard.png"]]);
      expect(stored[0]!.bytes?.equals(bytes)).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    "an audio clip recorded in Slack is transcribed and its transcript reaches the chat request; audio and transcript are kept",
    async () => {
      const { slack, model, home, gateway, deliver } = await start();
      const clip = webmClip(7, 3_000);
      const file = slack.addFile(clip, { audioClip: true });
      await deliver(slackEvent("event-file-share", { ts: slackTs(), text: "", files: [file] }));
      await slack.waitFor(() => slack.sentTo(DM)[0], "the reply to the clip");
      expect(model.transcriptions).toHaveLength(1);
      expect(Buffer.from(model.transcriptions[0]!.bytes).equals(clip)).toBe(true);
      expect(userTextsOf(model.requests.filter((r) => r.kind === "chat").at(-1)!).join("\n")).toContain(TRANSCRIPT);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expectNoSecrets(gateway, slack.botToken);
      const stored = await storedAttachments(home, ROUTE);
      expect(stored).toHaveLength(1);
      expect(stored[0]!.ref).toMatchObject({ kind: "audio", voice: true, sha256: sha256Of(clip) });
      expect(stored[0]!.texts).toContain(TRANSCRIPT);
      expect(stored[0]!.bytes?.equals(clip)).toBe(true);
    },
    TEST_TIMEOUT,
  );
});
