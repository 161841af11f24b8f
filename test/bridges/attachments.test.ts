/**
 * A session a gateway wrote with a photo and a voice note (attachment parts) read through every
 * bridge: no codec fails on them, and none hands an `attachment` part (which no model or SDK
 * knows) to its framework: each becomes its text placeholder. On a SQLite file and on PostgreSQL.
 */
import { expect, it } from "vitest";
import { AiSdkChatStore } from "../../src/bridges/ai-sdk/index.js";
import { ThreadlineChatMessageHistory } from "../../src/bridges/langchain/index.js";
import { ThreadlineSession } from "../../src/bridges/openai-agents/index.js";
import type { SessionDB } from "../../src/index.js";
import { forEachBackend } from "../gateway/backends.js";

const PHOTO = { sha256: "a".repeat(64), kind: "image", mimeType: "image/jpeg", size: 204_800, caption: "the harbour" } as const;
const VOICE = { sha256: "b".repeat(64), kind: "audio", mimeType: "audio/ogg", size: 12_288, voice: true, meta: { transcribed: true } } as const;
const PHOTO_TEXT = "[image: image/jpeg, 200 KB]: the harbour";
const VOICE_TEXT = "[voice note: transcribed above]";

async function gatewaySession(db: SessionDB, id: string): Promise<void> {
  await db.createSession({ id, source: "telegram" });
  await db.appendTurn(id, [
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "attachment", attachment: { ...PHOTO } },
        { type: "text", text: "and listen: meet at noon" },
        { type: "attachment", attachment: { ...VOICE } },
      ],
      platformMessageId: "7",
    },
    { role: "assistant", content: "A harbour; noon it is." },
  ]);
}

forEachBackend((backend) => {
  it("the AI SDK codecs read attachment parts as their placeholders (model and UI messages)", async () => {
    const { db } = await backend.fresh();
    await gatewaySession(db, "gw-media");
    const chats = new AiSdkChatStore(db);
    const model = await chats.loadModelMessages("gw-media");
    expect(model[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "text", text: PHOTO_TEXT },
        { type: "text", text: "and listen: meet at noon" },
        { type: "text", text: VOICE_TEXT },
      ],
    });
    const ui = await chats.loadUIMessages("gw-media");
    expect(ui[0]).toEqual({
      id: "7",
      role: "user",
      parts: [
        { type: "text", text: "look" },
        { type: "text", text: PHOTO_TEXT },
        { type: "text", text: "and listen: meet at noon" },
        { type: "text", text: VOICE_TEXT },
      ],
    });
  });

  it("LangChain history gives a human message whose content has placeholders, no attachment part", async () => {
    const { db } = await backend.fresh();
    await gatewaySession(db, "gw-media");
    const [human, ai] = await new ThreadlineChatMessageHistory({ db, sessionId: "gw-media" }).getMessages();
    expect(human!.getType()).toBe("human");
    expect(human!.content).toEqual([
      { type: "text", text: "look" },
      { type: "text", text: PHOTO_TEXT },
      { type: "text", text: "and listen: meet at noon" },
      { type: "text", text: VOICE_TEXT },
    ]);
    expect(ai!.content).toBe("A harbour; noon it is.");
  });

  it("the OpenAI Agents session gives input_text placeholders", async () => {
    const { db } = await backend.fresh();
    await gatewaySession(db, "gw-media");
    const items = await new ThreadlineSession(db, { sessionId: "gw-media" }).getItems();
    expect(items[0]).toEqual({
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "look" },
        { type: "input_text", text: PHOTO_TEXT },
        { type: "input_text", text: "and listen: meet at noon" },
        { type: "input_text", text: VOICE_TEXT },
      ],
    });
  });
});
