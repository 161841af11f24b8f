import { expect, it } from "vitest";
import { OpenAiCompatibleAgent } from "../../src/agents/index.js";
import { InvalidInputError } from "../../src/store/index.js";
import { formatSessionSearch, sessionSearch, sessionSearchTool } from "../../src/tools/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer } from "../support/fake-openai-server.js";

forEachBackend((backend) => {
  async function seeded() {
    const { db } = await backend.fresh();
    const turn = async (id: string, user: string, reply: string) => {
      await db.appendTurn(id, [
        { role: "user", content: user },
        { role: "assistant", content: reply },
      ]);
    };
    // A compressed chain: root → child, both mention kubernetes.
    await db.createSession({ id: "root", source: "telegram", title: "Cluster work", startedAt: 1000 });
    await turn("root", "set up kubernetes for staging", "ok, kubernetes staging cluster planned");
    await db.createSession({ id: "child", source: "telegram", parentSessionId: "root", startedAt: 2000 });
    await db.endSession("root", "compression");
    await turn("child", "continue the kubernetes rollout", "rolling out kubernetes now");
    await db.createSession({ id: "other", source: "cli", userId: "me", startedAt: 3000 });
    await turn("other", "first question about gardening", "plant in spring");
    await turn("other", "and kubernetes again?", "yes kubernetes");
    await turn("other", "last thing: compost", "turn it weekly");
    await db.createSession({ id: "current", source: "cli", userId: "me", startedAt: 4000 });
    await turn("current", "where did we talk about kubernetes", "let me look");
    return db;
  }

  it("groups hits by lineage root, leaves out the current session, returns windows and bookends", async () => {
    const db = await seeded();
    const result = await sessionSearch(db, "kubernetes", { currentSessionId: "current" });
    expect(result.mode).toBe("search");
    expect(result.sessions.map((s) => s.rootSessionId).sort()).toEqual(["other", "root"]);
    const chain = result.sessions.find((s) => s.rootSessionId === "root")!;
    expect(chain.matchCount).toBe(4); // two messages each in root and child: one chain
    expect(chain.startedAt).toBe(1000);
    const other = result.sessions.find((s) => s.rootSessionId === "other")!;
    expect(other.window.some((m) => m.match && /kubernetes/.test(m.text))).toBe(true);
    expect(other.bookends.first.map((m) => m.text)).toEqual(["first question about gardening", "plant in spring"]);
    expect(other.bookends.last.map((m) => m.text)).toEqual(["last thing: compost", "turn it weekly"]);
    expect(formatSessionSearch(result)).toMatch(/## Cluster work|## \(untitled\)/);
  });

  it("top N: default 3, at most 10; blank query browses recent sessions", async () => {
    const db = await seeded();
    for (let i = 0; i < 5; i++) {
      await db.createSession({ id: `s${i}`, source: "cli", startedAt: 5000 + i });
      await db.appendTurn(`s${i}`, [
        { role: "user", content: `kubernetes note ${i}` },
        { role: "assistant", content: "noted" },
      ]);
    }
    expect((await sessionSearch(db, "kubernetes")).sessions).toHaveLength(3);
    expect((await sessionSearch(db, "kubernetes", { limit: 10 })).sessions.length).toBeGreaterThan(3);
    await expect(sessionSearch(db, "kubernetes", { limit: 11 })).rejects.toBeInstanceOf(InvalidInputError);
    const browse = await sessionSearch(db, "  ", { currentSessionId: "s4", limit: 2 });
    expect(browse.mode).toBe("browse");
    expect(browse.sessions.map((s) => s.sessionId)).toEqual(["s3", "s2"]);
  });

  it("stays under the character budget; a summariser replaces the windows", async () => {
    const { db } = await backend.fresh();
    for (let i = 0; i < 3; i++) {
      await db.createSession({ id: `big${i}`, source: "cli" });
      await db.appendTurn(`big${i}`, [
        { role: "user", content: `needle ${"x".repeat(5000)}` },
        { role: "assistant", content: "y".repeat(5000) },
      ]);
    }
    const cut = await sessionSearch(db, "needle", { charBudget: 2000 });
    expect(cut.sessions).toHaveLength(3);
    expect(cut.truncated).toBe(true);
    expect(cut.chars).toBeLessThanOrEqual(2000);
    const summarised = await sessionSearch(db, "needle", { summarise: async (s) => `digest of ${s.sessionId}` });
    expect(summarised.sessions.every((s) => s.summary?.startsWith("digest of") && s.window.length === 0)).toBe(true);
  });

  it("the agent can call session_search as a tool", async () => {
    const db = await seeded();
    const fake = await startFakeOpenAiServer({ title: null });
    try {
      fake.enqueue(fakeToolCallReply([{ name: "session_search", arguments: JSON.stringify({ query: "compost" }) }]), fakeTextReply("Found it."));
      const agent = new OpenAiCompatibleAgent({ baseUrl: fake.url, model: "m", tools: [sessionSearchTool(db)] });
      const result = await agent.runTurn({
        messages: [{ role: "user", content: "what did I say about compost?" }],
        contextPrompt: "",
        signal: new AbortController().signal,
        sessionId: "current",
      });
      const tool = result.messages.find((m) => m.role === "tool");
      expect(tool?.toolName).toBe("session_search");
      expect(String(tool?.content)).toMatch(/turn it weekly/);
      expect(result.messages.at(-1)?.content).toBe("Found it.");
      const sent = fake.chatRequests()[0]!.body as { tools?: Array<{ function: { name: string } }> };
      expect(sent.tools?.[0]?.function.name).toBe("session_search");
    } finally {
      await fake.close();
    }
  });

  it("the tool searches only the asking user's sessions: their aliases included, same platform only, nothing for a session without a user", async () => {
    const { db } = await backend.fresh();
    const say = async (id: string, source: string, userId: string | null, text: string, extra: Record<string, string> = {}) => {
      await db.createSession({ id, source, userId, ...extra });
      await db.appendTurn(id, [
        { role: "user", content: text },
        { role: "assistant", content: "noted" },
      ]);
    };
    await db.recordAlias("whatsapp", "15551234567", "999999999999999");
    await say("phone", "whatsapp", "15551234567", "parcel tracking number alpha");
    await say("lid", "whatsapp", "999999999999999", "parcel arrives tuesday");
    await say("stranger", "whatsapp", "15550000000", "parcel for someone else");
    await say("same-id-elsewhere", "telegram", "15551234567", "parcel on another platform");
    await say("asking", "whatsapp", "999999999999999", "where is my parcel");
    await say("anonymous", "whatsapp", null, "parcel?");
    const run = async (sessionId: string, scope?: "user" | "chat" | "all") => {
      const tool = sessionSearchTool(db, scope ? { scope } : {});
      return tool.execute({ query: "parcel", limit: 10 }, { sessionId, signal: new AbortController().signal });
    };
    const mine = await run("asking");
    expect(mine).toMatch(/tracking number alpha/u);
    expect(mine).toMatch(/arrives tuesday/u);
    expect(mine).not.toMatch(/someone else|another platform/u);
    expect(await run("anonymous")).toMatch(/^No earlier sessions mention "parcel"\.$/u);
    expect(await run("asking", "all")).toMatch(/someone else/u);
    expect(() => sessionSearchTool(db, { scope: "everyone" as "all" })).toThrow(InvalidInputError);
  });
});
