/**
 * `threadline/ai-sdk` against the real `ai` package: `streamText` and `generateText` with the
 * SDK's own mock model (`MockLanguageModelV3`) and a real tool, UI message streams, and
 * round trips of every part kind, on a SQLite file and on PostgreSQL, read back through a
 * second handle (as another process would).
 */
import { generateText, jsonSchema, readUIMessageStream, stepCountIs, streamText, tool, type ModelMessage, type UIMessage } from "ai";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV3, convertArrayToReadableStream } from "ai/test";
import { describe, expect, it } from "vitest";
import { AiSdkChatStore } from "../../src/bridges/ai-sdk/index.js";
import { ConflictError, type SessionDB } from "../../src/index.js";
import { forEachBackend } from "../gateway/backends.js";
import { waitFor } from "../support/wait-for.js";

type StreamPart = LanguageModelV3StreamPart;

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

/** A model that answers step 1 with reasoning and a weather tool call, step 2 with text. */
function weatherModel(): MockLanguageModelV3 {
  let call = 0;
  return new MockLanguageModelV3({
    modelId: "mock-weather",
    doStream: async () => {
      call += 1;
      const chunks: StreamPart[] =
        call % 2 === 1
          ? [
              { type: "stream-start", warnings: [] },
              { type: "reasoning-start", id: "r1" },
              { type: "reasoning-delta", id: "r1", delta: "The user wants the weather; " },
              { type: "reasoning-delta", id: "r1", delta: "call the tool." },
              { type: "reasoning-end", id: "r1" },
              { type: "text-start", id: "t1" },
              { type: "text-delta", id: "t1", delta: "Let me check." },
              { type: "text-end", id: "t1" },
              { type: "tool-call", toolCallId: `call-${call}`, toolName: "weather", input: JSON.stringify({ city: "Paris" }) },
              { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: usage(10, 5) },
            ]
          : [
              { type: "stream-start", warnings: [] },
              { type: "text-start", id: "t2" },
              { type: "text-delta", id: "t2", delta: "It is 21 °C and sunny in Paris." },
              { type: "text-end", id: "t2" },
              { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(20, 8) },
            ];
      return { stream: convertArrayToReadableStream(chunks) };
    },
    doGenerate: async () => {
      call += 1;
      return call % 2 === 1
        ? {
            content: [
              { type: "reasoning", text: "The user wants the weather; call the tool." },
              { type: "text", text: "Let me check." },
              { type: "tool-call", toolCallId: `call-${call}`, toolName: "weather", input: JSON.stringify({ city: "Paris" }) },
            ],
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage: usage(10, 5),
            warnings: [],
          }
        : {
            content: [{ type: "text", text: "Tomorrow: 19 °C." }],
            finishReason: { unified: "stop", raw: "stop" },
            usage: usage(20, 8),
            warnings: [],
          };
    },
  });
}

const weather = tool({
  description: "Current weather of a city",
  inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  execute: async ({ city }) => ({ city, celsius: 21, sky: "sunny" }),
});

/** The store's method calls, forwarded unchanged to the real store. */
function recording(db: SessionDB): { db: SessionDB; calls: string[] } {
  const calls: string[] = [];
  const proxy = new Proxy(db, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(key));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { db: proxy, calls };
}

/** A UI message with every part kind the AI SDK has. */
const richAssistant: UIMessage = {
  id: "msg-rich",
  role: "assistant",
  metadata: { createdAt: 1_700_000_000_000, model: "m1", nested: { a: [1, 2, null] } },
  parts: [
    { type: "step-start" },
    { type: "reasoning", text: "First thought.", state: "done", providerMetadata: { anthropic: { signature: "sig-1" } } },
    { type: "reasoning", text: "Second thought\nwith a newline.", state: "done" },
    { type: "text", text: "Looking it up.", state: "done", providerMetadata: { openai: { itemId: "it_1" } } },
    { type: "tool-weather", toolCallId: "c1", state: "output-available", input: { city: "Paris" }, output: { celsius: 21 }, providerExecuted: false },
    { type: "tool-weather", toolCallId: "c2", state: "output-error", input: { city: "Atlantis" }, errorText: "No such city" },
    { type: "tool-note", toolCallId: "c3", state: "output-available", input: "free text input", output: "plain string output" },
    {
      type: "tool-delete",
      toolCallId: "c4",
      state: "output-denied",
      input: { path: "/" },
      approval: { id: "ap-1", approved: false, reason: "too dangerous" },
    },
    { type: "dynamic-tool", toolName: "mcp_search", toolCallId: "c5", state: "output-available", input: { q: "x" }, output: [1, "two", { three: 3 }] },
    { type: "step-start" },
    { type: "source-url", sourceId: "s1", url: "https://example.com/paris", title: "Paris" },
    { type: "source-document", sourceId: "s2", mediaType: "application/pdf", title: "Report", filename: "r.pdf" },
    { type: "text", text: "Paris: 21 °C.", state: "done" },
    { type: "text", text: "Second text part.", state: "done" },
    { type: "file", mediaType: "image/png", url: "data:image/png;base64,iVBORw0KGgo=", filename: "chart.png" },
    { type: "data-weather", id: "d1", data: { city: "Paris", celsius: 21 } },
    { type: "tool-weather", toolCallId: "c6", state: "approval-requested", input: { city: "Rome" }, approval: { id: "ap-2" } },
    { type: "tool-weather", toolCallId: "c7", state: "input-streaming", input: undefined },
  ],
};

const richUser: UIMessage = {
  id: "msg-user",
  role: "user",
  metadata: { sentAt: "2025-01-01T00:00:00Z" },
  parts: [
    { type: "text", text: "What's the weather in Paris? 天気" },
    { type: "file", mediaType: "application/pdf", url: "https://example.com/doc.pdf", filename: "doc.pdf" },
    { type: "file", mediaType: "image/jpeg", url: "https://example.com/p.jpg" },
  ],
};

forEachBackend((backend) => {
  it("streamText with a tool: onFinish stores the turn in one appendTurn, in natural shape, and the next turn continues from a new handle", async () => {
    const { db, reopen } = await backend.fresh();
    const rec = recording(db);
    const chats = new AiSdkChatStore(rec.db);
    const user: ModelMessage = { role: "user", content: "What's the weather in Paris?" };
    const result = streamText({
      model: weatherModel(),
      tools: { weather },
      stopWhen: stepCountIs(3),
      messages: [user],
      onFinish: chats.onFinish("chat-1", { messages: [user] }),
    });
    await result.consumeStream();
    const response = await result.response;
    expect(await result.text).toBe("It is 21 °C and sunny in Paris.");
    // Wait for onFinish to have written (it runs when the stream ends).
    await waitFor(async () => (await db.getSession("chat-1"))?.title != null, { what: "the turn and its title" });
    expect(rec.calls.filter((c) => c === "appendTurn")).toHaveLength(1);
    expect(rec.calls.filter((c) => c === "appendMessage" || c === "replaceMessages")).toHaveLength(0);

    const session = (await db.getSession("chat-1"))!;
    expect(session.source).toBe("ai-sdk");
    expect(session.title).toBe("What's the weather in Paris");
    expect(session.model).toBe("mock-weather");
    expect(session.usage).toMatchObject({ inputTokens: 30, outputTokens: 13, apiCalls: 2 });
    const rows = await db.getMessages("chat-1");
    expect(rows.map((r) => [r.role, r.content, r.toolCalls?.map((c) => c.function), r.toolCallId, r.toolName, r.reasoning, r.finishReason])).toEqual([
      ["user", "What's the weather in Paris?", undefined, null, null, null, null],
      ["assistant", "Let me check.", [{ name: "weather", arguments: '{"city":"Paris"}' }], null, null, "The user wants the weather; call the tool.", null],
      ["tool", '{"city":"Paris","celsius":21,"sky":"sunny"}', undefined, "call-1", "weather", null, null],
      ["assistant", "It is 21 °C and sunny in Paris.", undefined, null, null, null, "stop"],
    ]);
    // What the SDK gave is what comes back.
    const other = await reopen();
    const resumed = new AiSdkChatStore(other);
    expect(await resumed.loadModelMessages("chat-1")).toEqual([user, ...response.messages]);
    // Search and listing see it like any other session.
    const hits = await other.searchMessages("sunny");
    expect(hits.map((h) => [h.sessionId, h.source])).toContainEqual(["chat-1", "ai-sdk"]);
    const listed = await other.listSessions({ sources: ["ai-sdk"] });
    expect(listed.items.map((s) => [s.id, s.preview])).toEqual([["chat-1", "What's the weather in Paris?"]]);

    // Turn 2 from the new handle: the user message stored first, the reply by onFinish.
    const next: ModelMessage = { role: "user", content: "And tomorrow?" };
    await resumed.appendModelMessages("chat-1", [next]);
    const second = await generateText({
      model: weatherModel(),
      tools: { weather },
      stopWhen: stepCountIs(3),
      messages: await resumed.loadModelMessages("chat-1"),
      onFinish: resumed.onFinish("chat-1"),
    });
    const history = await resumed.loadModelMessages("chat-1");
    expect(history).toEqual([user, ...response.messages, next, ...second.response.messages]);
    expect((await other.getSession("chat-1"))!.messageCount).toBe(8);
  });

  it("UI messages from a real UI message stream load back deep-equal, with ids and metadata", async () => {
    const { db, reopen } = await backend.fresh();
    const chats = new AiSdkChatStore(db, { titler: null });
    const user: UIMessage = { id: "u1", role: "user", metadata: { at: 1 }, parts: [{ type: "text", text: "Weather in Paris?" }] };
    let finished: UIMessage[] | null = null;
    const onFinish = chats.uiOnFinish("chat-ui", { title: "Trip planning" });
    const result = streamText({ model: weatherModel(), tools: { weather }, stopWhen: stepCountIs(3), prompt: "Weather in Paris?" });
    const stream = result.toUIMessageStream({
      originalMessages: [user],
      generateMessageId: () => "a1",
      messageMetadata: ({ part }) => (part.type === "finish" ? { finishedBy: "mock" } : undefined),
      onFinish: async (event) => {
        await onFinish(event);
        finished = event.messages;
      },
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream })) last = message;
    await waitFor(() => finished !== null, { what: "the UI stream's onFinish" });
    expect(last!.parts.map((p) => p.type)).toEqual(["step-start", "reasoning", "text", "tool-weather", "step-start", "text"]);
    const loaded = await new AiSdkChatStore(await reopen()).loadUIMessages("chat-ui");
    expect(loaded).toEqual(finished);
    expect(loaded).toEqual([user, last]);
    expect((await db.getSession("chat-ui"))!.title).toBe("Trip planning");
    // Saving the same list again writes nothing.
    expect(await chats.saveUIMessages("chat-ui", finished!)).toEqual({ action: "unchanged", written: 0 });
  });

  it("every UI part kind round-trips exactly, and the rows read naturally", async () => {
    const { db, reopen } = await backend.fresh();
    const chats = new AiSdkChatStore(db);
    const system: UIMessage = { id: "sys", role: "system", parts: [{ type: "text", text: "Be brief." }] };
    await chats.appendUIMessages("chat-rich", [system, richUser, richAssistant]);
    const loaded = await new AiSdkChatStore(await reopen()).loadUIMessages("chat-rich");
    expect(loaded).toEqual([system, richUser, richAssistant]);
    // deep-equal including absent keys: the input-streaming part has no input
    expect(JSON.parse(JSON.stringify(loaded))).toStrictEqual(JSON.parse(JSON.stringify([system, richUser, richAssistant])));

    const rows = await db.getMessages("chat-rich");
    expect(rows.map((r) => r.role)).toEqual(["system", "user", "assistant", "tool", "tool", "tool", "tool", "tool", "assistant"]);
    expect(rows.every((r, i) => r.platformMessageId === ["sys", "msg-user", ...Array(7).fill("msg-rich")][i])).toBe(true);
    const step1 = rows[2]!;
    expect(step1.content).toBe("Looking it up.");
    expect(step1.reasoning).toBe("First thought.\nSecond thought\nwith a newline.");
    expect(step1.toolCalls!.map((c) => [c.id, c.function.name])).toEqual([
      ["c1", "weather"],
      ["c2", "weather"],
      ["c3", "note"],
      ["c4", "delete"],
      ["c5", "mcp_search"],
    ]);
    expect(rows.slice(3, 8).map((r) => [r.toolCallId, r.content])).toEqual([
      ["c1", '{"celsius":21}'],
      ["c2", "No such city"],
      ["c3", "plain string output"],
      ["c4", "Tool call denied: too dangerous"],
      ["c5", '[1,"two",{"three":3}]'],
    ]);
    expect(rows[8]!.content).toEqual([
      { type: "text", text: "Paris: 21 °C." },
      { type: "text", text: "Second text part." },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
    ]);
    expect(rows[8]!.toolCalls!.map((c) => [c.id, c.function.arguments])).toEqual([
      ["c6", '{"city":"Rome"}'],
      ["c7", ""],
    ]);
    // Texts are stored once: the envelope holds no copy of them.
    expect(JSON.stringify(rows[2]!.reasoningDetails)).not.toContain("Looking it up");
    expect(JSON.stringify(rows[2]!.reasoningDetails)).not.toContain("First thought");
    // The conversation a model would get is ordinary OpenAI shape.
    const conversation = await db.getConversation("chat-rich");
    expect(conversation[1]).toMatchObject({ role: "user", content: [{ type: "text" }, { type: "file" }, { type: "image_url" }] });
    expect((await db.searchMessages("天気")).map((h) => h.sessionId)).toEqual(["chat-rich"]);
  });

  it("saveUIMessages appends, rewrites a continued message in one write, and refuses a list that would drop the history", async () => {
    const { db } = await backend.fresh();
    const rec = recording(db);
    const chats = new AiSdkChatStore(rec.db);
    const u1: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "Delete the temp files" }] };
    const a1: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [{ type: "tool-rm", toolCallId: "c1", state: "approval-requested", input: { path: "/tmp" }, approval: { id: "ap1" } }],
    };
    expect(await chats.saveUIMessages("chat-save", [u1, a1])).toEqual({ action: "appended", written: 2 });
    const firstRows = await db.getMessages("chat-save");
    // The user approves; the same assistant message continues.
    const a1done: UIMessage = {
      ...a1,
      parts: [
        {
          type: "tool-rm",
          toolCallId: "c1",
          state: "output-available",
          input: { path: "/tmp" },
          output: { removed: 3 },
          approval: { id: "ap1", approved: true },
        },
        { type: "step-start" },
        { type: "text", text: "Removed 3 files." },
      ],
    };
    rec.calls.length = 0;
    expect(await chats.saveUIMessages("chat-save", [u1, a1done])).toEqual({ action: "replaced", written: 1 });
    expect(rec.calls.filter((c) => ["appendTurn", "appendMessage", "replaceMessages", "clearMessages"].includes(c))).toEqual(["replaceMessages"]);
    expect(await chats.loadUIMessages("chat-save")).toEqual([u1, a1done]);
    // The unchanged user row kept its time.
    expect((await db.getMessages("chat-save"))[0]!.timestamp).toBe(firstRows[0]!.timestamp);

    // A client that sends only its last message: refused, nothing changes.
    const u2: UIMessage = { id: "u2", role: "user", parts: [{ type: "text", text: "Thanks" }] };
    const error = await chats.saveUIMessages("chat-save", [u2]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as Error).message).toMatch(/appendUIMessages/u);
    expect(await chats.loadUIMessages("chat-save")).toEqual([u1, a1done]);
    await chats.appendUIMessages("chat-save", [u2]);
    expect(await chats.loadUIMessages("chat-save")).toEqual([u1, a1done, u2]);
  });

  it("every model message part kind round-trips, binary data included", async () => {
    const { db, reopen } = await backend.fresh();
    const chats = new AiSdkChatStore(db);
    const messages: ModelMessage[] = [
      { role: "system", content: "You are terse.", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },
      {
        role: "user",
        content: [
          { type: "text", text: "Describe these." },
          { type: "image", image: new Uint8Array([1, 2, 3, 250]), mediaType: "image/png" },
          { type: "image", image: new URL("https://example.com/a.png") },
          { type: "file", data: "JVBERi0x", mediaType: "application/pdf", filename: "a.pdf" },
          { type: "file", data: "https://example.com/b.txt", mediaType: "text/plain" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Hmm.", providerOptions: { anthropic: { signature: "s" } } },
          { type: "text", text: "Searching." },
          { type: "tool-call", toolCallId: "w1", toolName: "web_search", input: { q: "a" }, providerExecuted: true },
          { type: "tool-result", toolCallId: "w1", toolName: "web_search", output: { type: "json", value: { hits: 2 } } },
          { type: "tool-call", toolCallId: "t1", toolName: "lookup", input: { id: 7 } },
          { type: "tool-call", toolCallId: "t2", toolName: "rm", input: {} },
          { type: "tool-approval-request", approvalId: "ap", toolCallId: "t2" },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "t1", toolName: "lookup", output: { type: "text", value: "found" } },
          { type: "tool-approval-response", approvalId: "ap", approved: false, reason: "no" },
          { type: "tool-result", toolCallId: "t2", toolName: "rm", output: { type: "execution-denied", reason: "no" } },
        ],
      },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "t3", toolName: "x", output: { type: "error-json", value: { code: 1 } } }] },
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap9", approved: true }] },
      { role: "assistant", content: "Done." },
    ];
    await chats.appendModelMessages("chat-model", messages);
    const loaded = await new AiSdkChatStore(await reopen()).loadModelMessages("chat-model");
    expect(loaded).toEqual(messages);
    expect((loaded[1]!.content as Array<{ image?: unknown }>)[1]!.image).toBeInstanceOf(Uint8Array);
    const rows = await db.getMessages("chat-model");
    expect(rows.map((r) => [r.role, r.toolCallId])).toEqual([
      ["system", null],
      ["user", null],
      ["assistant", null],
      ["tool", "w1"],
      ["tool", "t1"],
      ["tool", "t2"],
      ["tool", "t3"],
      ["tool", null],
      ["assistant", null],
    ]);
    expect(rows[5]!.content).toBe("Tool call denied: no");
  });

  it("sessions written by others load naturally; bad input is refused and stores nothing", async () => {
    const { db } = await backend.fresh();
    await db.createSession({ id: "gw-1", source: "telegram" });
    await db.appendTurn("gw-1", [
      { role: "user", content: "hi", platformMessageId: "42" },
      { role: "assistant", content: null, toolCalls: [{ id: "c", type: "function", function: { name: "clock", arguments: '{"tz":"UTC"}' } }] },
      { role: "tool", toolCallId: "c", toolName: "clock", content: "12:00" },
      { role: "assistant", content: "It is noon.", reasoning: "read the clock" },
    ]);
    const chats = new AiSdkChatStore(db);
    const ui = await chats.loadUIMessages("gw-1");
    expect(ui).toEqual([
      { id: "42", role: "user", parts: [{ type: "text", text: "hi" }] },
      {
        id: expect.stringMatching(/^threadline-\d+$/u),
        role: "assistant",
        parts: [
          { type: "dynamic-tool", toolName: "clock", toolCallId: "c", state: "output-available", input: { tz: "UTC" }, output: "12:00" },
          { type: "reasoning", text: "read the clock" },
          { type: "text", text: "It is noon." },
        ],
      },
    ]);
    expect(await chats.loadModelMessages("gw-1")).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c", toolName: "clock", input: { tz: "UTC" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c", toolName: "clock", output: { type: "text", value: "12:00" } }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "read the clock" },
          { type: "text", text: "It is noon." },
        ],
      },
    ]);
    expect(await chats.loadUIMessages("never-written")).toEqual([]);
    const bad = { id: "x", role: "robot", parts: [] } as unknown as UIMessage;
    const ok: UIMessage = { id: "ok", role: "user", parts: [{ type: "text", text: "fine" }] };
    await expect(chats.appendUIMessages("chat-bad", [ok, bad])).rejects.toThrow(/messages\[1\].*role "robot"/u);
    expect(await db.getSession("chat-bad")).toBeNull();
  });

  it("a chat branches from another with a title in its lineage", async () => {
    const { db } = await backend.fresh();
    const chats = new AiSdkChatStore(db, { userId: "tenant-a" });
    const u: UIMessage = { id: "u", role: "user", parts: [{ type: "text", text: "plan a trip" }] };
    await chats.appendUIMessages("root", [u], { title: "Trip" });
    await chats.appendUIMessages("branch", [u], { title: "Trip", parentSessionId: "root" });
    const branch = (await db.getSession("branch"))!;
    expect([branch.title, branch.parentSessionId, branch.userId, branch.source]).toEqual(["Trip #2", "root", "tenant-a", "ai-sdk"]);
    expect((await db.getDescendants("root")).map((s) => s.id)).toEqual(["branch"]);
  });
});

describe("threadline/ai-sdk without a model", () => {
  it("loads nothing of the ai package at run time", async () => {
    const { readFileSync, readdirSync } = await import("node:fs");
    const dir = new URL("../../src/bridges/ai-sdk/", import.meta.url);
    for (const name of readdirSync(dir)) {
      const text = readFileSync(new URL(name, dir), "utf8");
      for (const m of text.matchAll(/^\s*import\s+(type\s+)?[^;]*?from\s+["']ai(?:\/[^"']*)?["']/gmu)) expect(m[1], `${name}: ${m[0]}`).toBe("type ");
    }
  });
});
