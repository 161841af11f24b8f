/**
 * `threadline/langchain` against the real `@langchain/core`: `RunnableWithMessageHistory` over
 * several turns with LangChain's fake chat models, history resumed by a new instance on a
 * new handle of the same database, round trips of every message kind, on a SQLite file and
 * on PostgreSQL.
 */
import { AIMessage, AIMessageChunk, ChatMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatPromptTemplate, MessagesPlaceholder } from "@langchain/core/prompts";
import { RunnableWithMessageHistory } from "@langchain/core/runnables";
import { FakeChatModel, FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { expect, it } from "vitest";
import { ThreadlineChatMessageHistory } from "../../src/bridges/langchain/index.js";
import type { SessionDB } from "../../src/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { waitFor } from "../support/wait-for.js";

const dicts = (messages: BaseMessage[]): unknown => JSON.parse(JSON.stringify(messages.map((m) => m.toDict())));

function chainOver(db: SessionDB, model: FakeChatModel | FakeStreamingChatModel): RunnableWithMessageHistory<Record<string, unknown>, BaseMessage> {
  const prompt = ChatPromptTemplate.fromMessages([["system", "You are terse."], new MessagesPlaceholder("history"), ["human", "{question}"]]);
  return new RunnableWithMessageHistory({
    runnable: prompt.pipe(model),
    getMessageHistory: (sessionId: string) => new ThreadlineChatMessageHistory({ db, sessionId }),
    inputMessagesKey: "question",
    historyMessagesKey: "history",
  });
}

forEachBackend((backend) => {
  it("RunnableWithMessageHistory keeps several turns; a new instance on a new handle resumes them", async () => {
    const { db, reopen } = await backend.fresh();
    const config = { configurable: { sessionId: "lc-1" } };
    const chain = chainOver(db, new FakeChatModel({}));
    const first = await chain.invoke({ question: "Plan a trip to Lisbon" }, config);
    // FakeChatModel answers with every message it was given: the prompt.
    expect(first.content).toBe("You are terse.\nPlan a trip to Lisbon");
    await waitFor(async () => (await db.getSession("lc-1"))?.messageCount === 2, { what: "the first turn stored" });
    const second = await chain.invoke({ question: "And the budget?" }, config);
    expect(second.content).toBe("You are terse.\nPlan a trip to Lisbon\nYou are terse.\nPlan a trip to Lisbon\nAnd the budget?");
    await waitFor(async () => (await db.getSession("lc-1"))?.messageCount === 4, { what: "the second turn stored" });

    // A restarted process: new handle, new chain, same session id.
    const other = await reopen();
    const resumed = chainOver(other, new FakeChatModel({}));
    const third = await resumed.invoke({ question: "Thanks" }, config);
    expect(String(third.content).split("\n")).toEqual(
      [
        "You are terse.",
        "Plan a trip to Lisbon",
        "You are terse.\nPlan a trip to Lisbon",
        "And the budget?",
        "You are terse.\nPlan a trip to Lisbon\nYou are terse.\nPlan a trip to Lisbon\nAnd the budget?",
        "Thanks",
      ]
        .join("\n")
        .split("\n"),
    );
    await waitFor(async () => (await other.getSession("lc-1"))?.messageCount === 6, { what: "the third turn stored" });
    const history = await new ThreadlineChatMessageHistory({ db: other, sessionId: "lc-1" }).getMessages();
    expect(history.map((m) => [m.getType(), m.content])).toEqual([
      ["human", "Plan a trip to Lisbon"],
      ["ai", first.content],
      ["human", "And the budget?"],
      ["ai", second.content],
      ["human", "Thanks"],
      ["ai", third.content],
    ]);

    const session = (await other.getSession("lc-1"))!;
    expect([session.source, session.title]).toEqual(["langchain", "Plan a trip to Lisbon"]);
    expect((await other.searchMessages("Lisbon", { sources: ["langchain"] })).length).toBeGreaterThan(0);
    expect((await other.listSessions({ sources: ["langchain"] })).items.map((s) => s.id)).toEqual(["lc-1"]);
  });

  it("a model's tool calls and the tool results round-trip, in natural shape, one write per addMessages", async () => {
    const { db, reopen } = await backend.fresh();
    // FakeStreamingChatModel answers with its first chunk's tool calls.
    const call = new AIMessageChunk({
      content: "",
      tool_calls: [
        { id: "call-1", name: "get_weather", args: { city: "Lisbon" }, type: "tool_call" },
        { id: "call-2", name: "get_time", args: {}, type: "tool_call" },
      ],
    });
    const model = new FakeStreamingChatModel({ responses: [new AIMessage("")], chunks: [call] });
    const chain = chainOver(db, model);
    const reply = await chain.invoke({ question: "Weather and time in Lisbon?" }, { configurable: { sessionId: "lc-tools" } });
    expect((reply as AIMessage).tool_calls?.map((c) => c.name)).toEqual(["get_weather", "get_time"]);
    await waitFor(async () => (await db.getSession("lc-tools"))?.messageCount === 2, { what: "the tool-call turn stored" });

    const history = new ThreadlineChatMessageHistory({ db, sessionId: "lc-tools" });
    const results: BaseMessage[] = [
      new ToolMessage({ content: '{"celsius":19}', tool_call_id: "call-1", name: "get_weather", artifact: { raw: [1, 2] }, status: "success" }),
      new ToolMessage({ content: "error: no clock", tool_call_id: "call-2", name: "get_time", status: "error" }),
      new AIMessage({
        content: "19 °C; the time is unknown.",
        id: "run-2",
        additional_kwargs: { reasoning_content: "one tool failed" },
        response_metadata: { model_name: "fake", finish_reason: "stop" },
        usage_metadata: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
      }),
    ];
    const before = await db.getMessages("lc-tools");
    await history.addMessages(results);
    const rows = await db.getMessages("lc-tools");
    expect(rows.slice(before.length).map((r) => r.id)).toEqual(rows.slice(before.length).map((_, i) => before.at(-1)!.id + 1 + i));
    expect(
      rows.map((r) => [r.role, r.toolCalls?.map((c) => [c.id, c.function.name, c.function.arguments]) ?? null, r.toolCallId, r.toolName, r.reasoning]),
    ).toEqual([
      ["user", null, null, null, null],
      [
        "assistant",
        [
          ["call-1", "get_weather", '{"city":"Lisbon"}'],
          ["call-2", "get_time", "{}"],
        ],
        null,
        null,
        null,
      ],
      ["tool", null, "call-1", "get_weather", null],
      ["tool", null, "call-2", "get_time", null],
      ["assistant", null, null, null, "one tool failed"],
    ]);
    expect((await db.getSession("lc-tools"))!.toolCallCount).toBe(2);

    const loaded = await new ThreadlineChatMessageHistory({ db: await reopen(), sessionId: "lc-tools" }).getMessages();
    expect(dicts(loaded.slice(1))).toEqual(dicts([reply, ...results]));
    expect(loaded[1]).toBeInstanceOf(AIMessage);
    expect((loaded[1] as AIMessage).tool_calls).toEqual((reply as AIMessage).tool_calls);
    expect((loaded[2] as ToolMessage).tool_call_id).toBe("call-1");
    expect((loaded[2] as ToolMessage).artifact).toEqual({ raw: [1, 2] });
  });

  it("every message kind round-trips; clear empties the history and keeps the session", async () => {
    const { db, reopen } = await backend.fresh();
    const messages: BaseMessage[] = [
      new SystemMessage({ content: "Be brief.", id: "s1" }),
      new HumanMessage({
        content: [
          { type: "text", text: "What is in this picture?" },
          { type: "image_url", image_url: { url: "https://example.com/a.png" } },
        ],
        id: "h1",
        name: "ana",
      }),
      new AIMessage({ content: [{ type: "text", text: "A cat." }], id: "a1" }),
      new ChatMessage({ content: "Looks right.", role: "critic" }),
      new HumanMessage("plain string"),
    ];
    const history = new ThreadlineChatMessageHistory({ db, sessionId: "lc-kinds", title: "Pictures", titler: null });
    await history.addMessages(messages);
    const loaded = await new ThreadlineChatMessageHistory({ db: await reopen(), sessionId: "lc-kinds" }).getMessages();
    expect(dicts(loaded)).toEqual(dicts(messages));
    expect(loaded.map((m) => m.constructor.name)).toEqual(["SystemMessage", "HumanMessage", "AIMessage", "ChatMessage", "HumanMessage"]);
    expect((await db.getMessages("lc-kinds")).map((r) => r.role)).toEqual(["system", "user", "assistant", "user", "user"]);

    await history.clear();
    expect(await history.getMessages()).toEqual([]);
    expect((await db.getSession("lc-kinds"))!.title).toBe("Pictures");
    expect(await new ThreadlineChatMessageHistory({ db, sessionId: "never" }).getMessages()).toEqual([]);
  });

  it("a bad message stores nothing of its batch; sessions written by others load naturally", async () => {
    const { db } = await backend.fresh();
    const history = new ThreadlineChatMessageHistory({ db, sessionId: "lc-bad", parentSessionId: null });
    await expect(history.addMessages([new HumanMessage("ok"), { content: "not a message" } as unknown as BaseMessage])).rejects.toThrow(
      /messages\[1\] cannot be stored: .*not a LangChain message/u,
    );
    expect(await db.getSession("lc-bad")).toBeNull();

    await db.createSession({ id: "gw", source: "cli" });
    await db.appendTurn("gw", [
      { role: "user", content: "time?" },
      { role: "assistant", content: null, toolCalls: [{ id: "c", type: "function", function: { name: "clock", arguments: '{"tz":"UTC"}' } }] },
      { role: "tool", toolCallId: "c", toolName: "clock", content: "12:00" },
      { role: "assistant", content: "Noon.", reasoning: "read it" },
    ]);
    const loaded = await new ThreadlineChatMessageHistory({ db, sessionId: "gw" }).getMessages();
    expect(loaded.map((m) => m.constructor.name)).toEqual(["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]);
    expect((loaded[1] as AIMessage).tool_calls).toEqual([{ id: "c", name: "clock", args: { tz: "UTC" }, type: "tool_call" }]);
    expect((loaded[2] as ToolMessage).tool_call_id).toBe("c");
    expect(loaded[3]!.additional_kwargs).toEqual({ reasoning_content: "read it" });
  });

  it("a branch gets its parent and a lineage-numbered title", async () => {
    const { db } = await backend.fresh();
    await new ThreadlineChatMessageHistory({ db, sessionId: "root", title: "Trip" }).addMessages([new HumanMessage("go")]);
    await new ThreadlineChatMessageHistory({ db, sessionId: "fork", title: "Trip", parentSessionId: "root", userId: "u1" }).addMessages([
      new HumanMessage("go"),
    ]);
    const fork = (await db.getSession("fork"))!;
    expect([fork.title, fork.parentSessionId, fork.userId, fork.source]).toEqual(["Trip #2", "root", "u1", "langchain"]);
  });
});
