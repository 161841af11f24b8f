import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentError, AgentInterruptedError } from "../../src/agents/agent.js";
import type { AgentTurnInput } from "../../src/agents/agent.js";
import { audioFileName } from "../../src/agents/audio-upload.js";
import { OpenAiCompatibleAgent, type OpenAiCompatibleAgentOptions } from "../../src/agents/openai-agent.js";
import { providerSectionProblems, resolveProviderConfig } from "../../src/agents/provider-config.js";
import { imagePartPlaceholder, isImagesUnsupportedError, VisionSupport } from "../../src/agents/vision-support.js";
import { InvalidInputError, type ConversationMessage } from "../../src/store/index.js";
import { openSessionDB } from "../../src/index.js";
import { chooseAgent } from "../../src/serve/agent-choice.js";
import { parseServeConfig } from "../../src/serve/index.js";
import { FAKE_IMAGE_REJECTIONS, fakeErrorReply, startFakeOpenAiServer, type FakeImageRejection, type FakeOpenAiServer } from "../support/fake-openai-server.js";

let server: FakeOpenAiServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

// 1×1 PNG.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
const PNG_URL = `data:image/png;base64,${PNG.toString("base64")}`;

function agentFor(options: Partial<OpenAiCompatibleAgentOptions> = {}): OpenAiCompatibleAgent {
  return new OpenAiCompatibleAgent({ baseUrl: server!.url, model: "fake-model", visionSupport: new VisionSupport(), ...options });
}

function turn(messages: ConversationMessage[], extra: Partial<AgentTurnInput> = {}): AgentTurnInput {
  return { messages, contextPrompt: "", signal: new AbortController().signal, sessionId: "20250101_000000_aaaaaaaa", ...extra };
}

const PHOTO_TURN: ConversationMessage[] = [
  {
    role: "user",
    content: [
      { type: "text", text: "what is in this photo?" },
      { type: "image_url", image_url: { url: PNG_URL } },
    ],
  },
];

/** The content parts of the last user message of a recorded chat request. */
function userParts(index: number): Array<Record<string, unknown>> {
  const messages = server!.chatRequests()[index]!.body!.messages!;
  const last = messages.filter((m) => m.role === "user").at(-1)!;
  return last.content as Array<Record<string, unknown>>;
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("OpenAiCompatibleAgent: provider.vision", () => {
  for (const wording of Object.keys(FAKE_IMAGE_REJECTIONS) as FakeImageRejection[]) {
    it(`auto learns from a ${wording} refusal: retries once with [image: type, size], then sends no image to that model`, async () => {
      server = await startFakeOpenAiServer({ rejectImages: wording });
      const refusals: string[] = [];
      const vision = new VisionSupport({ onRefused: ({ model, providerMessage }) => refusals.push(`${model}: ${providerMessage}`) });
      const agent = agentFor({ visionSupport: vision });
      expect(agent.acceptsImages()).toBe(true);

      const first = await agent.runTurn(turn(PHOTO_TURN));
      expect(first.messages.at(-1)).toMatchObject({ role: "assistant", content: "Reply to: what is in this photo? [image: image/png, 70 bytes]" });
      const chats = server.chatRequests();
      expect(chats).toHaveLength(2);
      expect(userParts(0)[1]).toEqual({ type: "image_url", image_url: { url: PNG_URL } });
      expect(userParts(1)).toEqual([
        { type: "text", text: "what is in this photo?" },
        { type: "text", text: "[image: image/png, 70 bytes]" },
      ]);
      expect(refusals).toEqual([`fake-model: ${FAKE_IMAGE_REJECTIONS[wording].message("fake-model")}`]);
      expect(agent.acceptsImages()).toBe(false);
      expect(agent.acceptsImages("fake-model")).toBe(false);
      // Another model of the same endpoint has not refused anything.
      expect(agent.acceptsImages("other-model")).toBe(true);

      // The next turn goes at once without the image; the refusal is reported once.
      await agentFor({ visionSupport: vision }).runTurn(turn(PHOTO_TURN));
      expect(server.chatRequests()).toHaveLength(3);
      expect(userParts(2)[1]).toEqual({ type: "text", text: "[image: image/png, 70 bytes]" });
      expect(refusals).toHaveLength(1);
    });
  }

  it("on: a refusal is an error (nothing is remembered, nothing retried)", async () => {
    server = await startFakeOpenAiServer({ rejectImages: "openai" });
    const vision = new VisionSupport();
    const agent = agentFor({ vision: "on", visionSupport: vision });
    const error = await errorOf(agent.runTurn(turn(PHOTO_TURN)));
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).status).toBe(400);
    expect((error as AgentError).providerMessage).toBe("Invalid content type. image_url is only supported by certain models.");
    expect(server.chatRequests()).toHaveLength(1);
    expect(agent.acceptsImages()).toBe(true);
    expect(vision.refused(server.url, "fake-model")).toBe(false);
  });

  it("off: never sends an image part (each goes as its placeholder); a text turn is untouched", async () => {
    server = await startFakeOpenAiServer();
    const agent = agentFor({ vision: "off" });
    expect(agent.acceptsImages()).toBe(false);
    await agent.runTurn(turn(PHOTO_TURN));
    expect(userParts(0)).toEqual([
      { type: "text", text: "what is in this photo?" },
      { type: "text", text: "[image: image/png, 70 bytes]" },
    ]);
    await agent.runTurn(turn([{ role: "user", content: "plain" }]));
    expect(server.chatRequests()[1]!.body!.messages).toEqual([{ role: "user", content: "plain" }]);
  });

  it("auto: a model that takes images gets the image part as given; another refusal (not about images) is not retried", async () => {
    server = await startFakeOpenAiServer();
    const agent = agentFor();
    await agent.runTurn(turn(PHOTO_TURN));
    expect(userParts(0)[1]).toEqual({ type: "image_url", image_url: { url: PNG_URL } });
    server.enqueue(fakeErrorReply(400, "max_tokens is too large"));
    const error = await errorOf(agent.runTurn(turn(PHOTO_TURN)));
    expect((error as AgentError).status).toBe(400);
    expect(server.chatRequests()).toHaveLength(2);
    expect(agent.acceptsImages()).toBe(true);
  });

  it("never sends a stored attachment part: it goes as its text placeholder", async () => {
    server = await startFakeOpenAiServer();
    const sha256 = "a".repeat(64);
    await agentFor().runTurn(
      turn([
        {
          role: "user",
          content: [
            { type: "text", text: "see the file" },
            { type: "attachment", attachment: { sha256, kind: "file", mimeType: "application/pdf", size: 204_800, fileName: "report.pdf" } },
          ],
        },
      ]),
    );
    expect(userParts(0)).toEqual([
      { type: "text", text: "see the file" },
      { type: "text", text: "[file: report.pdf, application/pdf, 200 KB]" },
    ]);
  });

  it("recognises refusals of images, and only those", () => {
    for (const refusal of Object.values(FAKE_IMAGE_REJECTIONS)) expect(isImagesUnsupportedError(refusal.status, refusal.message("m"))).toBe(true);
    expect(isImagesUnsupportedError(400, "registry.ollama.ai/library/llama3 does not support images")).toBe(true);
    expect(isImagesUnsupportedError(500, "The server was not compiled for multimodal or the model projector can't be loaded.")).toBe(true);
    expect(isImagesUnsupportedError(400, "registry.ollama.ai/library/gemma2:2b does not support tools")).toBe(false);
    expect(isImagesUnsupportedError(429, "this model does not support image input")).toBe(false);
    expect(isImagesUnsupportedError(400, "max_tokens is too large")).toBe(false);
  });

  it("an image part's placeholder says its type and size from the data URL, never a remote URL", () => {
    expect(imagePartPlaceholder(PNG_URL)).toBe("[image: image/png, 70 bytes]");
    expect(imagePartPlaceholder(`data:image/jpeg;base64,${Buffer.alloc(204_800).toString("base64")}`)).toBe("[image: image/jpeg, 200 KB]");
    expect(imagePartPlaceholder("https://example.com/secret-token/cat.png")).toBe("[image]");
  });
});

describe("OpenAiCompatibleAgent: provider.transcriptionModel", () => {
  it("posts the audio as multipart (file named after its type, model, response_format=json) with the key, and returns the text", async () => {
    server = await startFakeOpenAiServer({ apiKey: "sk-test", transcript: (upload) => `heard ${upload.bytes.byteLength} bytes of ${upload.mimeType}` });
    const agent = agentFor({ apiKey: "sk-test", transcriptionModel: "whisper-1" });
    expect(agent.transcriptionModel).toBe("whisper-1");
    const bytes = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 255]);
    const text = await agent.transcribe!({ bytes, mimeType: "audio/ogg" });
    expect(text).toBe("heard 15 bytes of audio/ogg");
    expect(server.transcriptions).toHaveLength(1);
    const upload = server.transcriptions[0]!;
    expect(upload).toMatchObject({ model: "whisper-1", fileName: "voice.ogg", mimeType: "audio/ogg", responseFormat: "json" });
    expect([...upload.bytes]).toEqual([...bytes]);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-test");
    expect(server.requests[0]!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/u);
  });

  it("keeps a given file name; names others by type", async () => {
    server = await startFakeOpenAiServer();
    await agentFor({ transcriptionModel: "whisper-1" }).transcribe!({ bytes: new Uint8Array([1, 2, 3]), mimeType: "audio/mpeg", fileName: "memo.mp3" });
    expect(server.transcriptions[0]!.fileName).toBe("memo.mp3");
    expect(audioFileName("audio/mpeg")).toBe("voice.mp3");
    expect(audioFileName("audio/mp4")).toBe("voice.m4a");
    expect(audioFileName("audio/ogg; codecs=opus")).toBe("voice.ogg");
    expect(audioFileName("application/x-unknown")).toBe("voice.bin");
  });

  it("fails as a chat call fails: an AgentError with the status and the provider's message; an abort interrupts", async () => {
    server = await startFakeOpenAiServer({ apiKey: "sk-test" });
    const agent = agentFor({ apiKey: "sk-wrong", transcriptionModel: "whisper-1" });
    const error = await errorOf(agent.transcribe!({ bytes: new Uint8Array([1]), mimeType: "audio/ogg" }));
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).status).toBe(401);
    expect((error as AgentError).message).toContain("Incorrect API key provided.");

    server.setScript((request) => (request.kind === "transcription" ? fakeErrorReply(404, "The model `whisper-9` does not exist") : null));
    const missing = await errorOf(
      agentFor({ apiKey: "sk-test", transcriptionModel: "whisper-9" }).transcribe!({ bytes: new Uint8Array([1]), mimeType: "audio/ogg" }),
    );
    expect((missing as AgentError).status).toBe(404);
    expect((missing as AgentError).message).toContain("provider.transcriptionModel");

    const controller = new AbortController();
    controller.abort();
    const aborted = await errorOf(
      agentFor({ apiKey: "sk-test", transcriptionModel: "whisper-1" }).transcribe!(
        { bytes: new Uint8Array([1]), mimeType: "audio/ogg" },
        { signal: controller.signal },
      ),
    );
    expect(aborted).toBeInstanceOf(AgentInterruptedError);
  });

  it("without a transcription model the agent has no transcribe method", async () => {
    server = await startFakeOpenAiServer();
    const agent = agentFor();
    expect(agent.transcribe).toBeUndefined();
    expect("transcribe" in agent).toBe(false);
    expect(agent.transcriptionModel).toBeNull();
  });
});

describe("provider.vision and provider.transcriptionModel settings", () => {
  it("are read from the section, else from THREADLINE_PROVIDER_VISION and THREADLINE_TRANSCRIPTION_MODEL", () => {
    const base = { baseUrl: "http://127.0.0.1:1/v1", model: "m" };
    expect(resolveProviderConfig(base, {})).toMatchObject({ vision: "auto" });
    expect(resolveProviderConfig(base, {})?.transcriptionModel).toBeUndefined();
    expect(resolveProviderConfig({ ...base, vision: "off", transcriptionModel: " whisper-1 " }, {})).toMatchObject({
      vision: "off",
      transcriptionModel: "whisper-1",
    });
    const env = { THREADLINE_PROVIDER_VISION: "on", THREADLINE_TRANSCRIPTION_MODEL: "whisper-large-v3" };
    expect(resolveProviderConfig(base, env)).toMatchObject({ vision: "on", transcriptionModel: "whisper-large-v3" });
    expect(resolveProviderConfig({ ...base, vision: "off" }, env)).toMatchObject({ vision: "off" });
    const agent = OpenAiCompatibleAgent.fromEnv({ OPENAI_BASE_URL: "http://127.0.0.1:1/v1", THREADLINE_MODEL: "m", ...env });
    expect(agent?.acceptsImages()).toBe(true);
    expect(agent?.transcriptionModel).toBe("whisper-large-v3");
    expect(typeof agent?.transcribe).toBe("function");
  });

  it("refuse bad values with a clear message, in the config file and the API alike", () => {
    const base = { baseUrl: "http://127.0.0.1:1/v1", model: "m" };
    const vision =
      'provider.vision: must be auto (default: images are sent until the provider refuses them for a model), on or off (or set THREADLINE_PROVIDER_VISION) (got "yes")';
    expect(() => resolveProviderConfig({ ...base, vision: "yes" as never }, {})).toThrow(vision);
    expect(() => parseServeConfig({ provider: { ...base, vision: "yes" } })).toThrow(/provider\.vision: must be auto/u);
    expect(() => resolveProviderConfig(base, { THREADLINE_PROVIDER_VISION: "maybe" })).toThrow(
      /provider\.vision: must be auto .*\(got "maybe" from THREADLINE_PROVIDER_VISION\)/u,
    );
    expect(providerSectionProblems({ transcriptionModel: "" }).map((p) => p.message)).toEqual([
      'provider.transcriptionModel: must be a speech-to-text model name such as whisper-1, for voice notes and audio files (default: unset, voice is not transcribed; or set THREADLINE_TRANSCRIPTION_MODEL) (got "")',
    ]);
    expect(providerSectionProblems({ transcriptionModel: 1 }).map((p) => p.field)).toEqual(["provider.transcriptionModel"]);
    expect(() => parseServeConfig({ provider: { ...base, transcriptionModel: ["whisper-1"] } })).toThrow(
      /provider\.transcriptionModel: must be a speech-to-text model name/u,
    );
    expect(() => new OpenAiCompatibleAgent({ baseUrl: "http://127.0.0.1:1/v1", model: "m", vision: "always" as never })).toThrow(InvalidInputError);
    expect(() => new OpenAiCompatibleAgent({ baseUrl: "http://127.0.0.1:1/v1", model: "m", transcriptionModel: " " })).toThrow(
      /transcriptionModel must be a speech-to-text model name/u,
    );
  });
});

describe("threadline serve's agents (chooseAgent)", () => {
  it("share one memo of refused images (reported once) and get provider.vision and provider.transcriptionModel", async () => {
    server = await startFakeOpenAiServer({ rejectImages: "vllm" });
    const dir = mkdtempSync(join(tmpdir(), "tl-media-agent-"));
    const db = await openSessionDB(join(dir, "state.db"));
    try {
      const refused: string[] = [];
      const config = parseServeConfig({ provider: { baseUrl: server.url, model: "fake-model", transcriptionModel: "whisper-1" }, titles: { enabled: false } });
      const choice = chooseAgent(config, {}, db, { onImagesRefused: ({ model, providerMessage }) => refused.push(`${model}: ${providerMessage}`) });
      const [first, second] = [choice.factory(), choice.factory()];
      await first.runTurn(turn(PHOTO_TURN));
      expect(refused).toEqual(["fake-model: fake-model is not a multimodal model"]);
      expect(second.acceptsImages?.()).toBe(false);
      await second.runTurn(turn(PHOTO_TURN));
      expect(refused).toHaveLength(1);
      expect(await second.transcribe?.({ bytes: new Uint8Array([1, 2]), mimeType: "audio/ogg" })).toBe("Transcript of 2 bytes");

      const off = chooseAgent(parseServeConfig({ provider: { baseUrl: server.url, model: "fake-model", vision: "off" } }), {}, db).factory();
      expect(off.acceptsImages?.()).toBe(false);
      expect(off.transcribe).toBeUndefined();
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
