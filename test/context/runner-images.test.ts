/**
 * Stored photos reaching the model through a running gateway (GatewayRunner, the local
 * adapter, the OpenAI-compatible agent and the fake provider on loopback), on both backends:
 * the request carries `image_url` parts whose data URLs hold exactly the stored bytes; a model
 * that refuses images (`provider.vision: auto`) is asked again once with placeholders and gets
 * none after that; the runner's `media.maxImagesInContext` bounds them.
 */
import { randomBytes } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import { OpenAiCompatibleAgent } from "../../src/agents/openai-agent.js";
import { VisionSupport } from "../../src/agents/vision-support.js";
import { DEFAULT_COMPRESSION_SETTINGS } from "../../src/context/index.js";
import { GatewayRunner, SessionRouter } from "../../src/gateway/index.js";
import type { AttachmentRef, SessionDB } from "../../src/store/index.js";
import { startFakeOpenAiServer, type FakeChatMessage, type FakeImageRejection, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { forEachBackend } from "../gateway/backends.js";

let server: FakeOpenAiServer | null = null;
const runners: GatewayRunner[] = [];
afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.stop();
  await server?.close();
  server = null;
});

/** The image parts' URLs and the text parts of a chat request's messages, in order. */
function partsOf(messages: FakeChatMessage[] | undefined): string[] {
  return (messages ?? []).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<{ type: string; text?: string; image_url?: { url: string } }>).map((p) =>
          p.type === "image_url" ? `image ${p.image_url!.url}` : `text ${p.text}`,
        )
      : [],
  );
}

forEachBackend((backend) => {
  async function setup(options: { rejectImages?: FakeImageRejection; maxImagesInContext?: number } = {}) {
    const { db } = await backend.fresh();
    server = await startFakeOpenAiServer(options.rejectImages === undefined ? {} : { rejectImages: options.rejectImages });
    const vision = new VisionSupport();
    const agent = new OpenAiCompatibleAgent({ baseUrl: server.url, model: "gpt-4o", visionSupport: vision });
    const local = new LocalAdapter();
    const runner = new GatewayRunner({
      store: new SessionRouter({ db }),
      agentFactory: () => agent,
      adapters: [local],
      compression: { settings: { ...DEFAULT_COMPRESSION_SETTINGS, enabled: false } },
      ...(options.maxImagesInContext === undefined ? {} : { media: { maxImagesInContext: options.maxImagesInContext } }),
    });
    runners.push(runner);
    await runner.start();
    const say = async (text: string): Promise<string> => {
      await local.receive(text);
      return (await local.nextMessage()).message.sessionId!;
    };
    return { db, say, agent };
  }

  /** Keeps a photo in the session as the media step of a turn does: the blob, then a user message referring to it. */
  async function keepPhoto(db: SessionDB, sessionId: string, caption: string): Promise<{ ref: AttachmentRef; bytes: Buffer }> {
    const bytes = randomBytes(300);
    const stored = await db.putMedia({ bytes }, { mimeType: "image/jpeg" });
    const ref: AttachmentRef = { sha256: stored.sha256, kind: "image", mimeType: "image/jpeg", size: bytes.length, caption };
    await db.appendTurn(sessionId, [
      {
        role: "user",
        content: [
          { type: "text", text: caption },
          { type: "attachment", attachment: ref },
        ],
      },
      { role: "assistant", content: "Nice photo." },
    ]);
    return { ref, bytes };
  }

  it("a stored photo reaches the model as an image part carrying its bytes", async () => {
    const { db, say } = await setup();
    const sessionId = await say("hello");
    const photo = await keepPhoto(db, sessionId, "my cat");
    await say("what colour is it?");
    const request = server!.chatRequests().at(-1)!;
    expect(partsOf(request.body!.messages)).toEqual(["text my cat", `image data:image/jpeg;base64,${photo.bytes.toString("base64")}`]);
  });

  it("a model that refuses images is asked again with placeholders, and gets none in later turns", async () => {
    const { db, say, agent } = await setup({ rejectImages: "ollama" });
    const sessionId = await say("hello");
    await keepPhoto(db, sessionId, "my cat");
    await say("what colour is it?");
    const [refused, retried] = server!.chatRequests().slice(-2);
    expect(partsOf(refused!.body!.messages)[1]).toMatch(/^image data:image\/jpeg;base64,/u);
    expect(partsOf(retried!.body!.messages)).toEqual(["text my cat", "text [image: image/jpeg, 300 bytes]"]);
    expect(agent.acceptsImages()).toBe(false);
    const before = server!.chatRequests().length;
    await say("and the eyes?");
    // One request: the context already gave the placeholder (with the caption), nothing was refused.
    expect(server!.chatRequests()).toHaveLength(before + 1);
    expect(partsOf(server!.chatRequests().at(-1)!.body!.messages)).toEqual(["text my cat", "text [image: image/jpeg, 300 bytes]: my cat"]);
  });

  it("media.maxImagesInContext bounds the images of a request (the newest go)", async () => {
    const { db, say } = await setup({ maxImagesInContext: 1 });
    const sessionId = await say("hello");
    const older = await keepPhoto(db, sessionId, "first");
    const newer = await keepPhoto(db, sessionId, "second");
    await say("compare them");
    expect(partsOf(server!.chatRequests().at(-1)!.body!.messages)).toEqual([
      "text first",
      `text [image: image/jpeg, ${older.bytes.length} bytes]: first`,
      "text second",
      `image data:image/jpeg;base64,${newer.bytes.toString("base64")}`,
    ]);
  });
});
