/**
 * Stored attachments in a turn's request (TurnContexts, the gateway's context assembly), on a
 * SQLite file and on PostgreSQL with real blobs (`putMedia`): the newest `maxImagesInContext`
 * images as `image_url` parts carrying exactly the stored bytes, every other attachment as its
 * placeholder, images only for an agent that accepts them, images counted in the budget.
 */
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { EchoAgent } from "../../src/agents/echo-agent.js";
import { OpenAiCompatibleAgent } from "../../src/agents/openai-agent.js";
import { VisionSupport } from "../../src/agents/vision-support.js";
import { IMAGE_PART_TOKENS, tokenCounterFor } from "../../src/context/token-count.js";
import { TurnContexts, type ContextWindowResolver } from "../../src/gateway/turn-context.js";
import type { AttachmentRef, ContentPart, ConversationMessage, NewMessage, SessionDB } from "../../src/store/index.js";
import { forEachBackend } from "../gateway/backends.js";

const SID = "20250101_000000_media001";
const window =
  (tokens: number): ContextWindowResolver =>
  () => ({ model: "gpt-4o", tokens, source: "config" });
/** An agent whose model takes images (vision auto, nothing refused); its endpoint is never called here. */
const visionAgent = (vision: "auto" | "off" = "auto") =>
  new OpenAiCompatibleAgent({ baseUrl: "http://127.0.0.1:9/v1", model: "gpt-4o", vision, visionSupport: new VisionSupport() });

interface Photo {
  ref: AttachmentRef;
  bytes: Buffer;
}

async function storePhoto(db: SessionDB, n: number, mimeType = "image/png"): Promise<Photo> {
  const bytes = randomBytes(200 + n);
  const stored = await db.putMedia({ bytes }, { mimeType });
  return { bytes, ref: { sha256: stored.sha256, kind: "image", mimeType, size: bytes.length } };
}

function photoMessage(text: string, ...refs: AttachmentRef[]): NewMessage {
  return { role: "user", content: [{ type: "text", text }, ...refs.map((attachment) => ({ type: "attachment", attachment }))] };
}

/** Per message: its parts, each as "text:<text>" or "image:<bytes as base64>". */
function shapes(messages: ConversationMessage[]): string[][] {
  return messages.map((m) =>
    typeof m.content === "string"
      ? [`text:${m.content}`]
      : (m.content ?? []).map((part: ContentPart) =>
          part.type === "image_url" ? `image:${String((part.image_url as { url: string }).url)}` : `${part.type}:${String(part.text ?? "")}`,
        ),
  );
}

const url = (photo: Photo) => `image:data:image/png;base64,${photo.bytes.toString("base64")}`;
const note = (photo: Photo) => `text:[image: image/png, ${photo.bytes.length} bytes]`;

forEachBackend((backend) => {
  it("the newest 4 images of the request go as image parts with their bytes, older ones as placeholders, across turns", async () => {
    const { db } = await backend.fresh();
    await db.createSession({ id: SID, source: "telegram" });
    const photos: Photo[] = [];
    for (let n = 1; n <= 6; n++) {
      photos.push(await storePhoto(db, n));
      await db.appendTurn(SID, [photoMessage(`photo ${n}`, photos[n - 1]!.ref), { role: "assistant", content: `seen ${n}` }]);
    }
    const contexts = new TurnContexts(db, { windowFor: window(128_000) });
    const first = await contexts.assemble({ sessionId: SID, agent: visionAgent(), contextPrompt: "ctx" });
    const users = (messages: ConversationMessage[]) => shapes(messages.filter((m) => m.role === "user"));
    expect(users(first.messages)).toEqual([
      ["text:photo 1", note(photos[0]!)],
      ["text:photo 2", note(photos[1]!)],
      ["text:photo 3", url(photos[2]!)],
      ["text:photo 4", url(photos[3]!)],
      ["text:photo 5", url(photos[4]!)],
      ["text:photo 6", url(photos[5]!)],
    ]);
    expect(first.measure.images).toBe(4);
    const counter = await tokenCounterFor("gpt-4o");
    expect(first.measure.messageTokens).toBe(counter.countMessages(first.messages));

    // The next turn brings two photos in one message: the window of images moves on.
    const seventh = await storePhoto(db, 7);
    const eighth = await storePhoto(db, 8);
    photos.push(seventh, eighth);
    await db.appendMessage(SID, photoMessage("two more", seventh.ref, eighth.ref));
    const next = await contexts.assemble({ sessionId: SID, agent: visionAgent(), contextPrompt: "ctx" });
    expect(users(next.messages).slice(3)).toEqual([
      ["text:photo 4", note(photos[3]!)],
      ["text:photo 5", url(photos[4]!)],
      ["text:photo 6", url(photos[5]!)],
      ["text:two more", url(seventh), url(eighth)],
    ]);

    // maxImagesInContext: 2 sends the newest two; 0 none.
    const two = await new TurnContexts(db, { windowFor: window(128_000), maxImagesInContext: 2 }).assemble({
      sessionId: SID,
      agent: visionAgent(),
      contextPrompt: "",
    });
    expect(users(two.messages).at(-1)).toEqual(["text:two more", url(seventh), url(eighth)]);
    expect(users(two.messages).at(-2)).toEqual(["text:photo 6", note(photos[5]!)]);
    const none = await new TurnContexts(db, { windowFor: window(128_000), maxImagesInContext: 0 }).assemble({
      sessionId: SID,
      agent: visionAgent(),
      contextPrompt: "",
    });
    expect(none.measure.images).toBe(0);
    expect(JSON.stringify(none.messages)).not.toContain("image_url");
  });

  it("no image parts for an agent without acceptsImages or whose model takes none; no attachment part is ever left", async () => {
    const { db } = await backend.fresh();
    await db.createSession({ id: SID, source: "telegram" });
    const photo = await storePhoto(db, 1);
    await db.appendMessage(SID, photoMessage("look", photo.ref));
    const contexts = new TurnContexts(db, { windowFor: window(128_000) });
    for (const agent of [new EchoAgent(), visionAgent("off")]) {
      const assembled = await contexts.assemble({ sessionId: SID, agent, contextPrompt: "" });
      expect(shapes(assembled.messages)).toEqual([["text:look", note(photo)]]);
      expect(assembled.measure.images).toBe(0);
    }
    // The same contexts (one token cache) then for a model that takes images: the cached count is not the placeholder's choice.
    const withImage = await contexts.assemble({ sessionId: SID, agent: visionAgent(), contextPrompt: "" });
    expect(shapes(withImage.messages)).toEqual([["text:look", url(photo)]]);
    const counter = await tokenCounterFor("gpt-4o");
    expect(withImage.measure.messageTokens).toBe(counter.countMessages(withImage.messages));
    const again = await contexts.assemble({ sessionId: SID, agent: new EchoAgent(), contextPrompt: "" });
    expect(again.measure.messageTokens).toBe(counter.countMessages(again.messages));
    expect(again.measure.fullTokens).toBe(withImage.measure.fullTokens);
  });

  it("every other attachment goes as its placeholder; a blob that is not stored says so", async () => {
    const { db } = await backend.fresh();
    await db.createSession({ id: SID, source: "telegram" });
    const pdf = await db.putMedia({ bytes: Buffer.from("%PDF-1.4 fake") }, { mimeType: "application/pdf" });
    const voice = await db.putMedia({ bytes: Buffer.from("OggS voice") }, { mimeType: "audio/ogg" });
    const missing = "f".repeat(64);
    await db.appendMessage(SID, {
      role: "user",
      content: [
        { type: "text", text: "meet at noon" },
        { type: "attachment", attachment: { sha256: voice.sha256, kind: "audio", mimeType: "audio/ogg", size: 10, voice: true, meta: { transcribed: true } } },
        { type: "attachment", attachment: { sha256: pdf.sha256, kind: "file", mimeType: "application/pdf", size: 13, fileName: "plan.pdf" } },
        { type: "attachment", attachment: { sha256: missing, kind: "image", mimeType: "image/jpeg", size: 204_800, caption: "the harbour" } },
        { type: "attachment", attachment: { sha256: missing, kind: "video", mimeType: "video/mp4", size: 3_250_586 } },
        { type: "attachment", attachment: { sha256: pdf.sha256, kind: "image", mimeType: "image/svg+xml", size: 13 } },
      ],
    });
    const assembled = await new TurnContexts(db, { windowFor: window(128_000) }).assemble({ sessionId: SID, agent: visionAgent(), contextPrompt: "" });
    expect(shapes(assembled.messages)).toEqual([
      [
        "text:meet at noon",
        "text:[voice note: transcribed above]",
        "text:[file: plan.pdf, application/pdf, 13 bytes]",
        "text:[image: image/jpeg, 200 KB; bytes not stored]: the harbour",
        "text:[video: video/mp4, 3.1 MB; bytes not stored]",
        "text:[image: image/svg+xml, 13 bytes]",
      ],
    ]);
    expect(assembled.measure.images).toBe(0);
  });

  it("images are counted in the budget: fewer older turns fit beside them, and the request stays within it", async () => {
    const { db } = await backend.fresh();
    await db.createSession({ id: SID, source: "telegram" });
    const filler = "word ".repeat(400);
    for (let n = 1; n <= 12; n++)
      await db.appendTurn(SID, [
        { role: "user", content: `question ${n} ${filler}` },
        { role: "assistant", content: `answer ${n}` },
      ]);
    const photos = [await storePhoto(db, 1), await storePhoto(db, 2)];
    await db.appendMessage(SID, photoMessage("these two", photos[0]!.ref, photos[1]!.ref));
    // 8,192 tokens: about 6,100 for the messages; the 12 text turns (~410 tokens each) fit without images, not beside room for them.
    const contexts = new TurnContexts(db, { windowFor: window(6144 + 2048) });
    const text = await contexts.assemble({ sessionId: SID, agent: new EchoAgent(), contextPrompt: "" });
    const images = await contexts.assemble({ sessionId: SID, agent: visionAgent(), contextPrompt: "" });
    expect(images.measure.images).toBe(2);
    expect(images.messages.at(-1)!.content).toEqual([
      { type: "text", text: "these two" },
      { type: "image_url", image_url: { url: url(photos[0]!).slice("image:".length) } },
      { type: "image_url", image_url: { url: url(photos[1]!).slice("image:".length) } },
    ]);
    expect(images.measure.messageTokens).toBeLessThanOrEqual(images.measure.budget);
    expect(images.measure.messageTokens).toBeGreaterThanOrEqual(2 * IMAGE_PART_TOKENS);
    expect(text.measure.dropped).toBe(0);
    expect(images.measure.dropped).toBeGreaterThan(0);
  });

  it("a window too small for the newest message and 4 images sends fewer images rather than cutting the message", async () => {
    const { db } = await backend.fresh();
    await db.createSession({ id: SID, source: "telegram" });
    const photos = [await storePhoto(db, 1), await storePhoto(db, 2), await storePhoto(db, 3), await storePhoto(db, 4)];
    await db.appendMessage(SID, photoMessage("four photos", ...photos.map((p) => p.ref)));
    // 4,096 tokens: 3,072 after the reply's share; room for three images and the message, not four.
    const assembled = await new TurnContexts(db, { windowFor: window(4096) }).assemble({ sessionId: SID, agent: visionAgent(), contextPrompt: "" });
    expect(assembled.built.truncated).toBe(false);
    expect(assembled.measure.images).toBe(3);
    expect(shapes(assembled.messages)).toEqual([["text:four photos", note(photos[0]!), url(photos[1]!), url(photos[2]!), url(photos[3]!)]]);
    expect(assembled.measure.messageTokens).toBeLessThanOrEqual(assembled.measure.budget);
  });
});
