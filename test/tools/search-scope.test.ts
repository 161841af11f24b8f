/**
 * `session_search`'s scope follows the person speaking (the call's `speaker`), and
 * `gateway.owner` makes the owner's identities on every platform one person; on both backends.
 */
import { expect, it } from "vitest";
import type { TurnSpeaker } from "../../src/agents/index.js";
import { sessionSearchTool, type OwnerIdentities } from "../../src/tools/index.js";
import { forEachBackend } from "../gateway/backends.js";

forEachBackend((backend) => {
  async function seeded() {
    const { db } = await backend.fresh();
    const say = async (id: string, source: string, userId: string | null, text: string, chat: { chatId?: string; chatType?: string } = {}) => {
      await db.createSession({ id, source, userId, ...chat });
      await db.appendTurn(id, [
        { role: "user", content: text },
        { role: "assistant", content: "ok" },
      ]);
    };
    await say("owner-tg", "telegram", "111", "heron note from the owner on telegram");
    await say("owner-api", "api-server", "me", "heron note from the owner on the api");
    await say("owner-cli", "cli", "alice", "heron note from the owner at the terminal");
    await say("stranger-tg", "telegram", "222", "heron note from a stranger");
    await say("other-cli", "cli", "bob", "heron note from another terminal user");
    await say("room-owner", "telegram", "111", "heron note of the owner in the room", { chatId: "-100", chatType: "group" });
    await say("room-stranger", "telegram", "222", "heron note of the stranger in the room", { chatId: "-100", chatType: "group" });
    // The shared thread alice opened (its stored user is alice), where others speak too.
    await say("thread", "telegram", "111", "thread opened", { chatId: "-100", chatType: "thread" });
    await db.recordAlias("telegram", "111", "111-alt");
    return db;
  }
  const speaker = (platform: string, userId: string | null, chatType = "dm", chatId: string | null = userId): TurnSpeaker => ({
    platform,
    userId,
    aliases: userId === null ? [] : [userId],
    chatType,
    chatId,
  });
  const OWNER: OwnerIdentities = { telegram: ["111"], "api-server": ["me"], cli: ["alice"] };

  async function search(sessionId: string, who: TurnSpeaker | undefined, options: { owner?: OwnerIdentities; scope?: "user" | "chat" } = {}): Promise<string> {
    const db = await seeded();
    const tool = sessionSearchTool(db, options);
    return tool.execute({ query: "heron", limit: 10 }, { sessionId, signal: new AbortController().signal, ...(who === undefined ? {} : { speaker: who }) });
  }
  const found = (text: string): string[] => [...new Set([...text.matchAll(/heron note ([^\n]*)/gu)].map((m) => m[1]!))].sort();

  it("searches as the speaker, not as the session's creator", async () => {
    // In the thread alice (111) opened, 222 speaks: 222's sessions of that chat, none of 111's.
    expect(found(await search("thread", speaker("telegram", "222", "thread", "-100")))).toEqual(["of the stranger in the room"]);
    expect(found(await search("thread", speaker("telegram", "111", "thread", "-100")))).toEqual(["of the owner in the room"]);
    // chat scope: the whole chat, whoever speaks.
    expect(found(await search("thread", speaker("telegram", "222", "thread", "-100"), { scope: "chat" }))).toEqual([
      "of the owner in the room",
      "of the stranger in the room",
    ]);
    // No speaker given (a library caller): the session's creator stands in, as before.
    expect(found(await search("thread", undefined))).toEqual(["of the owner in the room"]);
    // A speaker nobody knows finds nothing.
    expect(await search("thread", speaker("telegram", null, "thread", "-100"))).toMatch(/^No earlier sessions mention/u);
  });

  it("gateway.owner: in a direct chat the owner finds their sessions on every platform; nobody else's reach grows", async () => {
    expect(found(await search("owner-cli", speaker("cli", "alice"), { owner: OWNER }))).toEqual([
      "from the owner on telegram",
      "from the owner on the api",
      "of the owner in the room",
    ]);
    // By an alias of a listed id too.
    expect(found(await search("owner-tg", speaker("telegram", "111-alt"), { owner: OWNER }))).toEqual([
      "from the owner at the terminal",
      "from the owner on the api",
      "of the owner in the room",
    ]);
    // Without gateway.owner: the same platform only.
    expect(found(await search("owner-cli", speaker("cli", "alice")))).toEqual([]);
    // Strangers, and another terminal user, see only their own.
    expect(found(await search("stranger-tg", speaker("telegram", "222"), { owner: OWNER }))).toEqual(["of the stranger in the room"]);
    expect(found(await search("other-cli", speaker("cli", "bob"), { owner: OWNER }))).toEqual([]);
    // In a group the owner stays in the chat.
    expect(found(await search("room-owner", speaker("telegram", "111", "group", "-100"), { owner: OWNER }))).toEqual([]);
    expect(found(await search("thread", speaker("telegram", "111", "thread", "-100"), { owner: OWNER }))).toEqual(["of the owner in the room"]);
  });
});
