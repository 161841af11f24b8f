/**
 * Contract: appending, reading, replacing and clearing messages; the OpenAI-shaped
 * conversation; the per-session counters.
 *
 * @module
 */

import { expect } from "vitest";
import type { ContentPart, NewMessage, SessionDB, ToolCall } from "../../../src/store/contract.js";
import { InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { assistant, contractArea, expectReject, nowSeconds, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

function toolCall(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
}

async function counters(db: SessionDB, id: string): Promise<{ messages: number; toolCalls: number }> {
  const s = await db.getSession(id);
  if (!s) throw new Error(`session ${id} vanished`);
  return { messages: s.messageCount, toolCalls: s.toolCallCount };
}

export function messagesTests(init: SessionDBTestInitializer): void {
  contractArea(init, "messages", (test, { db }) => {
    test("appendMessage returns increasing ids; getMessages returns them in order", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const got: number[] = [];
      for (let i = 0; i < 10; i++) got.push(await db().appendMessage("s", user(`m${i}`, 1000 + i)));
      for (let i = 1; i < got.length; i++) expect(got[i]!).toBeGreaterThan(got[i - 1]!);
      const messages = await db().getMessages("s");
      expect(messages.map((m) => m.id)).toEqual(got);
      expect(messages.map((m) => m.content)).toEqual(got.map((_, i) => `m${i}`));
      expect(messages.every((m) => m.sessionId === "s")).toBe(true);
    });

    test("getMessages pages with afterId, limit and offset (visible rows only unless includeRewound)", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().createSession({ id: "other", source: "cli" });
      const got: number[] = [];
      for (let i = 0; i < 6; i++) {
        got.push(await db().appendMessage("s", i % 2 === 0 ? user(`q${i}`, 1000 + i) : assistant(`a${i}`, 1000 + i)));
        await db().appendMessage("other", user(`x${i}`, 1000 + i));
      }
      const contents = async (options: Parameters<SessionDB["getMessages"]>[1]) => (await db().getMessages("s", options)).map((m) => m.content);
      expect(await contents({ limit: 2 })).toEqual(["q0", "a1"]);
      expect(await contents({ limit: 2, afterId: got[1]! })).toEqual(["q2", "a3"]);
      expect(await contents({ afterId: got[3]! })).toEqual(["q4", "a5"]);
      expect(await contents({ limit: 2, offset: 2 })).toEqual(["q2", "a3"]);
      expect(await contents({ offset: 5 })).toEqual(["a5"]);
      expect(await contents({ afterId: got[5]! })).toEqual([]);
      expect(await contents({ afterId: 0, limit: 1000 })).toHaveLength(6);
      await db().rewind("s"); // hides q4, a5
      expect(await contents({ afterId: got[3]! })).toEqual([]);
      expect(await contents({ afterId: got[3]!, includeRewound: true })).toEqual(["q4", "a5"]);
      await expectReject(() => db().getMessages("s", { limit: 0 }), InvalidInputError, /limit/);
      await expectReject(() => db().getMessages("s", { limit: 1001 }), InvalidInputError, /limit/);
      await expectReject(() => db().getMessages("s", { offset: -1 }), InvalidInputError, /offset/);
      await expectReject(() => db().getMessages("s", { afterId: -1 }), InvalidInputError, /afterId/);
      await expectReject(() => db().getMessages("s", { afterId: 1.5 }), InvalidInputError, /afterId/);
      await expectReject(() => db().getMessages("s", { lastMessages: 2, limit: 2 }), InvalidInputError, /lastMessages/);
      await expectReject(() => db().getMessages("missing", { limit: 2 }), NotFoundError);
    });

    test("every field of a message round-trips", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const calls = [toolCall("call_1", "web_search", { q: "weather" }), toolCall("call_2", "read_file", { path: "/a" })];
      const reasoningDetails = [{ type: "reasoning.summary", summary: "thought", index: 0 }, { signature: "abc==" }];
      const id = await db().appendMessage("s", {
        role: "assistant",
        content: "Let me check.",
        toolCalls: calls,
        tokenCount: 42,
        finishReason: "tool_calls",
        reasoning: "The user wants the weather.",
        reasoningDetails,
        platformMessageId: "tg-1234",
        timestamp: 1_700_000_000.123456,
      });
      const toolId = await db().appendMessage("s", {
        role: "tool",
        content: "sunny, 21°C",
        toolCallId: "call_1",
        toolName: "web_search",
        timestamp: 1_700_000_001.5,
      });
      const [a, t] = await db().getMessages("s");
      expect(a).toEqual({
        id,
        sessionId: "s",
        role: "assistant",
        content: "Let me check.",
        toolCalls: calls,
        toolCallId: null,
        toolName: null,
        tokenCount: 42,
        finishReason: "tool_calls",
        reasoning: "The user wants the weather.",
        reasoningDetails,
        platformMessageId: "tg-1234",
        timestamp: 1_700_000_000.123456,
        rewoundAt: null,
      });
      expect(t).toEqual({
        id: toolId,
        sessionId: "s",
        role: "tool",
        content: "sunny, 21°C",
        toolCalls: null,
        toolCallId: "call_1",
        toolName: "web_search",
        tokenCount: null,
        finishReason: null,
        reasoning: null,
        reasoningDetails: null,
        platformMessageId: null,
        timestamp: 1_700_000_001.5,
        rewoundAt: null,
      });
    });

    test("structured content parts round-trip as given", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const parts: ContentPart[] = [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "low" } },
        { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
        { type: "text", text: "Answer in 日本語 😀" },
      ];
      await db().appendMessage("s", { role: "user", content: parts, timestamp: 10 });
      await db().appendMessage("s", { role: "assistant", content: null, toolCalls: [toolCall("c", "f", {})], timestamp: 11 });
      const [m, n] = await db().getMessages("s");
      expect(m?.content).toEqual(parts);
      expect(n?.content).toBeNull();
    });

    test("omitted optional fields are stored as null", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", { role: "assistant", toolCalls: [toolCall("c", "f", {})] });
      const [m] = await db().getMessages("s");
      expect(m).toMatchObject({
        content: null,
        toolCallId: null,
        toolName: null,
        tokenCount: null,
        finishReason: null,
        reasoning: null,
        reasoningDetails: null,
        platformMessageId: null,
        rewoundAt: null,
      });
    });

    test("every role is accepted; text with special characters is stored exactly", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const texts = ["", "  padded  \n", "quote ' \" back\\slash %_*", "emoji 😀👍🏽 and 中文", "\r\n\t"];
      const roles = ["system", "developer", "user", "assistant", "tool"] as const;
      for (const [i, text] of texts.entries()) {
        await db().appendMessage("s", { role: roles[i % roles.length]!, content: text, timestamp: 100 + i });
      }
      const messages = await db().getMessages("s");
      expect(messages.map((m) => m.content)).toEqual(texts);
      expect(messages.map((m) => m.role)).toEqual(texts.map((_, i) => roles[i % roles.length]));
    });

    test("a NUL character inside content round-trips", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("before\u0000after"));
      expect((await db().getMessages("s"))[0]?.content).toBe("before\u0000after");
    });

    test("timestamps are stored as given; the default is now", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("a", 1_234_567_890.987654));
      const before = nowSeconds();
      await db().appendMessage("s", user("b"));
      const after = nowSeconds();
      const [a, b] = await db().getMessages("s");
      expect(a?.timestamp).toBe(1_234_567_890.987654);
      expect(b?.timestamp).toBeGreaterThanOrEqual(before - 1);
      expect(b?.timestamp).toBeLessThanOrEqual(after + 1);
    });

    test("messages of one session never show in another", async () => {
      await db().createSession({ id: "a", source: "cli" });
      await db().createSession({ id: "b", source: "cli" });
      await db().appendMessage("a", user("for a"));
      await db().appendMessage("b", user("for b"));
      expect((await db().getMessages("a")).map((m) => m.content)).toEqual(["for a"]);
      expect((await db().getMessages("b")).map((m) => m.content)).toEqual(["for b"]);
    });

    test("appendTurn writes all messages contiguously and returns their ids in order", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("before", 1));
      const turn: NewMessage[] = [
        user("question", 2),
        { role: "assistant", content: null, toolCalls: [toolCall("c1", "search", { q: "x" })], timestamp: 3 },
        { role: "tool", content: "found", toolCallId: "c1", toolName: "search", timestamp: 4 },
        assistant("answer", 5),
      ];
      const turnIds = await db().appendTurn("s", turn);
      expect(turnIds).toHaveLength(4);
      for (let i = 1; i < turnIds.length; i++) expect(turnIds[i]!).toBeGreaterThan(turnIds[i - 1]!);
      const messages = await db().getMessages("s");
      expect(messages.map((m) => m.id).slice(1)).toEqual(turnIds);
      expect(messages.map((m) => m.content)).toEqual(["before", "question", null, "found", "answer"]);
      expect(await counters(db(), "s")).toEqual({ messages: 5, toolCalls: 1 });
    });

    test("appendTurn is all or nothing: an invalid message writes nothing", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("kept", 1));
      const before = await db().getSession("s");
      await expectReject(
        () =>
          db().appendTurn("s", [
            user("first of turn", 2),
            { role: "assistant", content: null, toolCalls: [toolCall("c1", "f", {})], timestamp: 3 },
            { role: "" as never, content: "bad role", timestamp: 4 },
          ]),
        InvalidInputError,
        /role/i,
      );
      await expectReject(() => db().appendTurn("s", [user("ok", 5), { role: "robot" as never, content: "x", timestamp: 6 }]), InvalidInputError, /role/i);
      expect((await db().getMessages("s", { includeRewound: true })).map((m) => m.content)).toEqual(["kept"]);
      expect(await db().getSession("s")).toEqual(before);
    });

    test("concurrent appendTurn calls stay contiguous", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await Promise.all(
        Array.from({ length: 10 }, (_, t) =>
          t % 2 === 0 ? db().appendTurn("s", [user(`t${t}-0`), assistant(`t${t}-1`), assistant(`t${t}-2`)]) : db().appendMessage("s", user(`single${t}`)),
        ),
      );
      const contents = (await db().getMessages("s")).map((m) => String(m.content));
      expect(contents).toHaveLength(5 * 3 + 5);
      for (let t = 0; t < 10; t += 2) {
        const start = contents.indexOf(`t${t}-0`);
        expect(contents.slice(start, start + 3)).toEqual([`t${t}-0`, `t${t}-1`, `t${t}-2`]);
      }
    });

    test("getConversation returns the OpenAI chat shape", async () => {
      await db().createSession({ id: "s", source: "cli", systemPrompt: "Be nice." });
      const calls = [toolCall("call_9", "web_search", { q: "news" })];
      const parts: ContentPart[] = [
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: "https://x/y.png" } },
      ];
      await db().appendTurn("s", [
        { role: "user", content: parts, platformMessageId: "p1", timestamp: 1 },
        { role: "assistant", content: null, toolCalls: calls, tokenCount: 9, timestamp: 2 },
        { role: "tool", content: "headline", toolCallId: "call_9", toolName: "web_search", timestamp: 3 },
        {
          role: "assistant",
          content: "Here is the news.",
          reasoning: "summarise",
          reasoningDetails: { kind: "summary" },
          finishReason: "stop",
          timestamp: 4,
        },
      ]);
      const expected = [
        { role: "user", content: parts },
        { role: "assistant", content: null, tool_calls: calls },
        { role: "tool", content: "headline", tool_call_id: "call_9", name: "web_search" },
        { role: "assistant", content: "Here is the news.", reasoning: "summarise", reasoning_details: { kind: "summary" } },
      ];
      // JSON round trip: absent keys must be absent (or undefined), never null.
      const conversation = JSON.parse(JSON.stringify(await db().getConversation("s")));
      expect(conversation).toStrictEqual(expected);
      const withPrompt = JSON.parse(JSON.stringify(await db().getConversation("s", { includeSystemPrompt: true })));
      expect(withPrompt).toStrictEqual([{ role: "system", content: "Be nice." }, ...expected]);
    });

    test("getConversation with includeSystemPrompt and no system prompt adds nothing", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", user("hi"));
      expect(JSON.parse(JSON.stringify(await db().getConversation("s", { includeSystemPrompt: true })))).toStrictEqual([{ role: "user", content: "hi" }]);
    });

    test("replaceMessages swaps the whole transcript and returns the new ids", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const oldIds = await db().appendTurn("s", [
        user("old question", 1),
        { role: "assistant", content: null, toolCalls: [toolCall("a", "f", {}), toolCall("b", "g", {})], timestamp: 2 },
        { role: "tool", content: "r", toolCallId: "a", toolName: "f", timestamp: 3 },
      ]);
      expect(await counters(db(), "s")).toEqual({ messages: 3, toolCalls: 2 });
      const newIds = await db().replaceMessages("s", [
        user("summary of earlier conversation", 10),
        { role: "assistant", content: "ok", toolCalls: [toolCall("c", "h", {})], timestamp: 11 },
      ]);
      expect(newIds).toHaveLength(2);
      const messages = await db().getMessages("s", { includeRewound: true });
      expect(messages.map((m) => m.id)).toEqual(newIds);
      expect(messages.map((m) => m.content)).toEqual(["summary of earlier conversation", "ok"]);
      for (const id of oldIds) expect(newIds).not.toContain(id);
      expect(await counters(db(), "s")).toEqual({ messages: 2, toolCalls: 1 });
      const session = await db().getSession("s");
      expect(session?.preview).toBe("summary of earlier conversation");
      expect(session?.lastActiveAt).toBe(11);
    });

    test("replaceMessages is all or nothing", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendTurn("s", [user("keep me", 1), assistant("and me", 2)]);
      const before = await db().getSession("s");
      await expectReject(() => db().replaceMessages("s", [user("new", 3), { role: "" as never, content: "x" }]), InvalidInputError);
      expect((await db().getMessages("s")).map((m) => m.content)).toEqual(["keep me", "and me"]);
      expect(await db().getSession("s")).toEqual(before);
    });

    test("clearMessages deletes every message and returns how many", async () => {
      await db().createSession({ id: "s", source: "cli", startedAt: 50 });
      await db().appendTurn("s", [
        user("q", 100),
        { role: "assistant", content: null, toolCalls: [toolCall("a", "f", {})], timestamp: 101 },
        { role: "tool", content: "r", toolCallId: "a", toolName: "f", timestamp: 102 },
      ]);
      expect(await db().clearMessages("s")).toBe(3);
      expect(await db().getMessages("s", { includeRewound: true })).toEqual([]);
      expect(await db().getConversation("s")).toEqual([]);
      const session = await db().getSession("s");
      expect(session?.messageCount).toBe(0);
      expect(session?.toolCallCount).toBe(0);
      expect(session?.preview).toBeNull();
      expect(session?.lastActiveAt).toBe(50);
      expect(await db().clearMessages("s")).toBe(0);
      // The session still works afterwards.
      await db().appendMessage("s", user("fresh start", 200));
      expect(await counters(db(), "s")).toEqual({ messages: 1, toolCalls: 0 });
    });

    test("messageCount and toolCallCount stay exact through every operation", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().createSession({ id: "other", source: "cli" });
      expect(await counters(db(), "s")).toEqual({ messages: 0, toolCalls: 0 });

      await db().appendMessage("s", user("u1", 1));
      await db().appendMessage("s", {
        role: "assistant",
        content: null,
        toolCalls: [toolCall("a", "f", {}), toolCall("b", "f", {}), toolCall("c", "g", {})],
        timestamp: 2,
      });
      expect(await counters(db(), "s")).toEqual({ messages: 2, toolCalls: 3 });

      await db().appendTurn("s", [
        { role: "tool", content: "ra", toolCallId: "a", toolName: "f", timestamp: 3 },
        { role: "tool", content: "rb", toolCallId: "b", toolName: "f", timestamp: 4 },
        { role: "tool", content: "rc", toolCallId: "c", toolName: "g", timestamp: 5 },
        assistant("done", 6),
      ]);
      expect(await counters(db(), "s")).toEqual({ messages: 6, toolCalls: 3 });

      await db().appendTurn("s", [user("u2", 7), { role: "assistant", content: "x", toolCalls: [toolCall("d", "h", {})], timestamp: 8 }]);
      expect(await counters(db(), "s")).toEqual({ messages: 8, toolCalls: 4 });

      // A failed turn changes nothing.
      await expectReject(() => db().appendTurn("s", [user("u3"), { role: "" as never }]), InvalidInputError);
      expect(await counters(db(), "s")).toEqual({ messages: 8, toolCalls: 4 });

      // Rewind hides the last turn (2 messages, 1 tool call); restore brings it back.
      await db().rewind("s");
      expect(await counters(db(), "s")).toEqual({ messages: 6, toolCalls: 3 });
      await db().restoreRewound("s");
      expect(await counters(db(), "s")).toEqual({ messages: 8, toolCalls: 4 });

      // Empty toolCalls arrays count nothing.
      await db().appendMessage("s", { role: "assistant", content: "plain", toolCalls: [], timestamp: 9 });
      expect(await counters(db(), "s")).toEqual({ messages: 9, toolCalls: 4 });

      await db().replaceMessages("s", [user("r1", 10), { role: "assistant", content: "r2", toolCalls: [toolCall("e", "f", {})], timestamp: 11 }]);
      expect(await counters(db(), "s")).toEqual({ messages: 2, toolCalls: 1 });

      await db().clearMessages("s");
      expect(await counters(db(), "s")).toEqual({ messages: 0, toolCalls: 0 });
      expect(await counters(db(), "other")).toEqual({ messages: 0, toolCalls: 0 });

      // The counters always agree with the messages themselves.
      await db().appendTurn("s", [user("z", 12), { role: "assistant", content: null, toolCalls: [toolCall("f", "f", {})], timestamp: 13 }]);
      const messages = await db().getMessages("s");
      expect(await counters(db(), "s")).toEqual({
        messages: messages.length,
        toolCalls: messages.reduce((n, m) => n + (m.toolCalls?.length ?? 0), 0),
      });
    });

    test("lastActiveAt and preview follow the transcript", async () => {
      await db().createSession({ id: "s", source: "cli", startedAt: 100 });
      expect((await db().getSession("s"))?.lastActiveAt).toBe(100);
      await db().appendMessage("s", { role: "system", content: "sys", timestamp: 150 });
      await db().appendMessage("s", assistant("greeting first", 160));
      expect((await db().getSession("s"))?.preview).toBeNull();
      await db().appendMessage("s", user("first user words", 200));
      await db().appendMessage("s", user("second user words", 300));
      const session = await db().getSession("s");
      expect(session?.lastActiveAt).toBe(300);
      expect(session?.preview).toBe("first user words");
      await db().endSession("s", "done", { endedAt: 400 });
      expect((await db().getSession("s"))?.lastActiveAt).toBe(400);
    });

    test("message ids are never reused, even after the newest rows are deleted", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const first = await db().appendTurn("s", [user("one", 1), user("two", 2), user("three", 3)]);
      const highest = () => Math.max(...first);
      await db().clearMessages("s");
      const afterClear = await db().appendMessage("s", user("four", 4));
      expect(afterClear).toBeGreaterThan(highest());
      const replaced = await db().replaceMessages("s", [user("five", 5)]);
      expect(replaced[0]).toBeGreaterThan(afterClear);
      await db().createSession({ id: "t", source: "cli" });
      const doomed = await db().appendMessage("t", user("six", 6));
      await db().deleteSession("t");
      expect(await db().appendMessage("s", user("seven", 7))).toBeGreaterThan(doomed);
    });

    test("reading messages of an unknown session is a NotFoundError", async () => {
      await expectReject(() => db().getMessages("ghost"), NotFoundError);
      await expectReject(() => db().getConversation("ghost"), NotFoundError);
    });
  });
}
