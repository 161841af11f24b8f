/**
 * ThreadlineSession (threadline/openai-agents) on real stores, SQLite files and PostgreSQL:
 * the round trip of every item kind, the natural message shape the rest of Threadline sees,
 * the Session methods (window, pop, clear), session creation (source, titles, lineage) and
 * concurrency within a process.
 */
import { expect, it } from "vitest";
import type { AgentInputItem } from "@openai/agents";
import { ThreadlineSession } from "../../../src/bridges/openai-agents/index.js";
import type { MessageWindowOptions, SessionDB } from "../../../src/store/contract.js";
import { ConflictError, InvalidInputError } from "../../../src/store/errors.js";
import { forEachBackend } from "../../gateway/backends.js";
import { ITEMS, asJson } from "./fixtures/agent-items.js";

const texts = (items: AgentInputItem[]): unknown[] =>
  items.map((i) => {
    const item = i as { content?: unknown; type?: string };
    return typeof item.content === "string" ? item.content : item.type;
  });

const userItem = (text: string): AgentInputItem => ({ type: "message", role: "user", content: text });
const assistantItem = (text: string): AgentInputItem =>
  ({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] }) as AgentInputItem;

forEachBackend((backend) => {
  it("every item kind comes back exactly as stored, in one call and from a fresh handle", async () => {
    const { db, reopen } = await backend.fresh();
    const all = Object.values(ITEMS);
    const session = new ThreadlineSession(db, { titler: null });
    await session.addItems(all.slice(0, 5));
    await session.addItems(all.slice(5));
    expect(await session.getItems()).toStrictEqual(asJson(all));
    const again = new ThreadlineSession(await reopen(), { sessionId: await session.getSessionId() });
    expect(await again.getItems()).toStrictEqual(asJson(all));
    for (const [name, item] of Object.entries(ITEMS)) {
      const one = new ThreadlineSession(db, { titler: null });
      await one.addItems([item]);
      expect(await one.getItems(), name).toStrictEqual([asJson(item)]);
      expect(await one.popItem(), name).toStrictEqual(asJson(item));
    }
    // The common kinds keep only what their message fields cannot say; the others are kept whole.
    const derivedByKind = (await db.getMessages(await session.getSessionId())).map(
      (m) => (m.reasoningDetails as { openaiAgents: { derived: string[] } }).openaiAgents.derived.length > 0,
    );
    const common = ["userText", "userNoType", "userParts", "system", "assistant", "assistantRefusal", "functionCall", "functionCallNamespaced"];
    const commonToo = ["resultText", "resultString", "resultStructured", "reasoningRaw", "reasoningSummary"];
    expect(Object.keys(ITEMS).filter((_, i) => derivedByKind[i])).toEqual([...common, ...commonToo]);
  });

  it("the common items are stored in Threadline's own message shape: visible to listing, search and counters", async () => {
    const { db } = await backend.fresh();
    const session = new ThreadlineSession(db, { titler: null });
    await session.addItems([ITEMS.userText!, ITEMS.reasoningRaw!, ITEMS.functionCall!, ITEMS.resultText!, ITEMS.assistant!]);
    const id = await session.getSessionId();
    const messages = await db.getMessages(id);
    expect(messages.map((m) => [m.role, m.content, m.toolCalls, m.toolCallId, m.toolName, m.reasoning])).toEqual([
      ["user", "What is the weather in Oslo?", null, null, null, null],
      ["assistant", null, null, null, null, "thinking hard\nabout Oslo"],
      ["assistant", null, [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }], null, null, null],
      ["tool", [{ type: "text", text: "sunny in Oslo" }], null, "call_1", "get_weather", null],
      ["assistant", [{ type: "text", text: "It is sunny in Oslo.", providerData: { role: "assistant" } }], null, null, null, null],
    ]);
    const stored = await db.getSession(id);
    expect(stored).toMatchObject({ source: "openai-agents", messageCount: 5, toolCallCount: 1, preview: "What is the weather in Oslo?" });
    expect((await db.listSessions({ sources: ["openai-agents"] })).items.map((s) => s.id)).toEqual([id]);
    for (const [query, role] of [
      ["weather", "user"],
      ["sunny", "tool"],
      ["It is sunny", "assistant"],
    ] as const) {
      expect(
        (await db.searchMessages(`"${query}"`, { roles: [role] })).map((h) => h.sessionId),
        query,
      ).toEqual([id]);
    }
    // What the mapping cannot say in those fields is kept beside them, not as a second copy.
    expect(messages[2]?.reasoningDetails).toEqual({
      openaiAgents: {
        item: { type: "function_call", status: "completed", providerData: asJson(ITEMS.functionCall as { providerData: unknown }).providerData },
        derived: ["callId", "name", "arguments"],
      },
    });
  });

  it("getItems(limit) reads a bounded window: the latest limit items, oldest first", async () => {
    const { db } = await backend.fresh();
    const windows: MessageWindowOptions[] = [];
    // The real store, with its getMessages calls recorded.
    const recording = new Proxy(db, {
      get(target, key, receiver) {
        if (key === "getMessages") {
          return (id: string, options: MessageWindowOptions = {}) => {
            windows.push(options);
            return target.getMessages(id, options);
          };
        }
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as SessionDB;
    const session = new ThreadlineSession(recording, { titler: null });
    await session.addItems(["q1", "a1", "q2", "a2", "q3"].map((t) => (t.startsWith("q") ? userItem(t) : assistantItem(t))));
    windows.length = 0;
    expect(texts(await session.getItems(2))).toEqual(["message", "q3"]);
    expect((await session.getItems(2)).map((i) => (i as { content: unknown }).content)).toEqual([[{ type: "output_text", text: "a2" }], "q3"]);
    expect(windows).toEqual([{ lastMessages: 2 }, { lastMessages: 2 }]);
    expect(await session.getItems(0)).toEqual([]);
    expect(await session.getItems(-1)).toEqual([]);
    expect(await session.getItems(50)).toHaveLength(5);
    expect(await session.getItems(Number.POSITIVE_INFINITY)).toHaveLength(5);
    await expect(session.getItems(1.5)).rejects.toBeInstanceOf(InvalidInputError);
    await expect(session.getItems(Number.NaN)).rejects.toThrow(/whole number/);
  });

  it("popItem soft-deletes the latest item and returns it; restoreRewound brings it back", async () => {
    const { db } = await backend.fresh();
    const session = new ThreadlineSession(db, { titler: null });
    expect(await session.popItem()).toBeUndefined();
    await session.addItems([ITEMS.userText!, ITEMS.functionCall!, ITEMS.resultText!, ITEMS.assistant!]);
    expect(await session.popItem()).toStrictEqual(asJson(ITEMS.assistant));
    expect(await session.popItem()).toStrictEqual(asJson(ITEMS.resultText));
    expect(await session.getItems()).toStrictEqual(asJson([ITEMS.userText, ITEMS.functionCall]));
    const id = await session.getSessionId();
    expect((await db.getSession(id))?.messageCount).toBe(2);
    expect(await db.restoreRewound(id)).toBe(1);
    expect(await session.getItems()).toStrictEqual(asJson([ITEMS.userText, ITEMS.functionCall, ITEMS.resultText]));
    await session.popItem();
    await session.popItem();
    expect(await session.popItem()).toStrictEqual(asJson(ITEMS.userText));
    expect(await session.popItem()).toBeUndefined();
    expect(await session.getItems()).toEqual([]);
  });

  it("clearSession deletes the messages and keeps the session, its title and its lineage", async () => {
    const { db } = await backend.fresh();
    const parent = new ThreadlineSession(db, { title: "Trip planning" });
    await parent.addItems([userItem("first")]);
    const session = new ThreadlineSession(db, { parentSessionId: await parent.getSessionId() });
    await session.addItems([userItem("q"), assistantItem("a")]);
    const id = await session.getSessionId();
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await db.getMessages(id, { includeRewound: true })).toEqual([]);
    expect(await db.getSession(id)).toMatchObject({ title: "Trip planning #2", parentSessionId: await parent.getSessionId(), messageCount: 0 });
    await session.addItems([userItem("again")]);
    expect(texts(await session.getItems())).toEqual(["again"]);
    // A session that was never written to has nothing to clear, and is not created by it.
    const untouched = new ThreadlineSession(db);
    await untouched.clearSession();
    expect((await db.listSessions()).items).toHaveLength(2);
  });

  it("creates sessions on the first write, titled by option, by lineage or by the titler", async () => {
    const { db } = await backend.fresh();
    const reader = new ThreadlineSession(db, { sessionId: "not-yet" });
    expect(await reader.getItems()).toEqual([]);
    expect(await db.getSession("not-yet")).toBeNull();

    const named = new ThreadlineSession(db, { sessionId: "named", title: "Support", userId: "u1", model: "gpt-x", systemPrompt: "Be kind." });
    expect(await named.getSessionId()).toBe("named");
    expect(await db.getSession("named")).toMatchObject({ source: "openai-agents", title: "Support", userId: "u1", model: "gpt-x", systemPrompt: "Be kind." });
    const sameTitle = new ThreadlineSession(db, { title: "Support" });
    await sameTitle.addItems([userItem("hi")]);
    expect((await db.getSession(await sameTitle.getSessionId()))?.title).toBe("Support (2)");

    const heuristic = new ThreadlineSession(db, { source: "my-app" });
    await heuristic.addItems([userItem("Hi! Can you explain how Postgres advisory locks work?")]);
    const hid = await heuristic.getSessionId();
    expect((await db.getSession(hid))?.title).toBeNull(); // no reply yet
    await heuristic.addItems([assistantItem("They are application-defined locks.")]);
    expect(await db.getSession(hid)).toMatchObject({ source: "my-app", title: "Explain how Postgres advisory locks work" });

    const silent = new ThreadlineSession(db, { titler: null });
    await silent.addItems([userItem("Explain advisory locks"), assistantItem("Sure.")]);
    expect((await db.getSession(await silent.getSessionId()))?.title).toBeNull();

    const failing = new ThreadlineSession(db, { titler: { proposeTitle: () => Promise.reject(new Error("model down")) } });
    await failing.addItems([userItem("q"), assistantItem("a")]);
    expect((await db.getSession(await failing.getSessionId()))?.title).toBeNull();
  });

  it("continues a session written by something else, reading its messages as SDK items", async () => {
    const { db } = await backend.fresh();
    await db.createSession({ id: "gw", source: "telegram" });
    await db.appendTurn("gw", [
      { role: "user", content: "look it up" },
      {
        role: "assistant",
        content: "Let me check.",
        reasoning: "need the tool",
        toolCalls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }],
      },
      { role: "tool", content: "found it", toolCallId: "c1", toolName: "lookup" },
      { role: "assistant", content: "Found it." },
    ]);
    const session = new ThreadlineSession(db, { sessionId: "gw" });
    expect(await session.getItems()).toEqual([
      { type: "message", role: "user", content: "look it up" },
      { type: "reasoning", content: [], rawContent: [{ type: "reasoning_text", text: "need the tool" }] },
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Let me check." }] },
      { type: "function_call", callId: "c1", name: "lookup", arguments: "{}", status: "completed" },
      { type: "function_call_result", callId: "c1", name: "lookup", status: "completed", output: "found it" },
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Found it." }] },
    ]);
    // A window of messages yields at least as many items; the latest `limit` of them are returned.
    expect(texts(await session.getItems(3))).toEqual(["function_call", "function_call_result", "message"]);
    await session.addItems([userItem("thanks")]);
    expect((await db.getSession("gw"))?.source).toBe("telegram");
  });

  it("bad items are InvalidInputErrors naming the item, and nothing is written", async () => {
    const { db } = await backend.fresh();
    const session = new ThreadlineSession(db, { sessionId: "s" });
    await session.addItems([userItem("kept")]);
    const binary = { type: "message", role: "user", content: [{ type: "input_image", image: new Uint8Array([1, 2]) }] };
    await expect(session.addItems([userItem("x"), binary as unknown as AgentInputItem])).rejects.toThrow(/items\[1\]\.content\[0\]\.image is a Uint8Array/);
    await expect(session.addItems([{ content: "no role" } as unknown as AgentInputItem])).rejects.toThrow(/items\[0\] has neither/);
    await expect(session.addItems(["text" as unknown as AgentInputItem])).rejects.toBeInstanceOf(InvalidInputError);
    await expect(session.addItems([{ type: "unknown", n: Number.NaN } as unknown as AgentInputItem])).rejects.toThrow(/items\[0\]\.n is NaN/);
    expect(texts(await session.getItems())).toEqual(["kept"]);
    // undefined properties are dropped, as JSON drops them.
    await session.addItems([{ type: "message", role: "user", content: "u", providerData: undefined } as AgentInputItem]);
    expect((await session.getItems(1))[0]).toStrictEqual({ type: "message", role: "user", content: "u" });
  });

  it("an ended session refuses new items with the store's ConflictError", async () => {
    const { db } = await backend.fresh();
    const session = new ThreadlineSession(db, { sessionId: "done" });
    await session.addItems([userItem("q")]);
    await db.endSession("done", "user_exit");
    await expect(session.addItems([userItem("more")])).rejects.toBeInstanceOf(ConflictError);
  });

  it("concurrent calls on one session id in one process: one session, every item once, in call order", async () => {
    const { db } = await backend.fresh();
    const a = new ThreadlineSession(db, { sessionId: "busy", titler: null });
    const b = new ThreadlineSession(db, { sessionId: "busy", titler: null });
    const calls = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).addItems([userItem(`m${i}`)]));
    await Promise.all(calls);
    expect(texts(await a.getItems())).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
    // A pop queued between writes sees exactly the writes queued before it.
    const [, popped] = await Promise.all([a.addItems([userItem("last")]), b.popItem(), a.addItems([userItem("after")])]);
    expect(popped).toStrictEqual(userItem("last"));
    expect(texts(await b.getItems(2))).toEqual(["m39", "after"]);
  });

  it("replaceHistoryWithCompaction replaces the history in one transaction", async () => {
    const { db } = await backend.fresh();
    const session = new ThreadlineSession(db, { titler: null });
    await session.addItems([userItem("old 1"), assistantItem("old 2")]);
    await session.replaceHistoryWithCompaction([ITEMS.compaction!, userItem("kept")]);
    expect(await session.getItems()).toStrictEqual(asJson([ITEMS.compaction, userItem("kept")]));
    await expect(session.replaceHistoryWithCompaction([ITEMS.compaction!, 7 as unknown as AgentInputItem])).rejects.toThrow(/items\[1\]/);
    expect(await session.getItems()).toHaveLength(2);
  });
});
