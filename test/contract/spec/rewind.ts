/**
 * Contract: rewinding user turns (or the last messages) by soft delete, restoring them, and their visibility
 * everywhere (messages, conversation, counters, preview, search, context, export).
 *
 * @module
 */

import { expect } from "vitest";
import type { NewMessage, SessionDB } from "../../../src/store/contract.js";
import { InvalidInputError, NotFoundError } from "../../../src/store/errors.js";
import { assistant, collect, contractArea, expectReject, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** Three user turns; turn 2 starts with a multi-part user message and holds one tool call. */
const THREE_TURNS: NewMessage[] = [
  user("first question", 10),
  assistant("first answer", 11),
  {
    role: "user",
    content: [
      { type: "text", text: "line one" },
      { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
      { type: "text", text: "line two" },
    ],
    timestamp: 20,
  },
  {
    role: "assistant",
    content: null,
    toolCalls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }],
    timestamp: 21,
  },
  { role: "tool", content: "tool output", toolCallId: "c1", toolName: "lookup", timestamp: 22 },
  assistant("second answer", 23),
  user("third question", 30),
  assistant("third answer", 31),
];

async function seed(db: SessionDB, id = "s"): Promise<number[]> {
  await db.createSession({ id, source: "cli", startedAt: 1 });
  const out: number[] = [];
  for (const m of THREE_TURNS) out.push(await db.appendMessage(id, m));
  return out;
}

async function visibleTexts(db: SessionDB, id = "s"): Promise<unknown[]> {
  return (await db.getMessages(id)).map((m) => (typeof m.content === "string" || m.content === null ? m.content : "[parts]"));
}

export function rewindTests(init: SessionDBTestInitializer): void {
  contractArea(init, "rewind", (test, { db }) => {
    test("rewind() hides the last user turn and reports it", async () => {
      const allIds = await seed(db());
      expect(await db().rewind("s")).toEqual({ rewound: 2, turnsUndone: 1, targetText: "third question" });
      expect(await visibleTexts(db())).toEqual(["first question", "first answer", "[parts]", null, "tool output", "second answer"]);
      const all = await db().getMessages("s", { includeRewound: true });
      expect(all.map((m) => m.id)).toEqual(allIds);
      expect(all.slice(0, 6).every((m) => m.rewoundAt === null)).toBe(true);
      for (const m of all.slice(6)) expect(typeof m.rewoundAt).toBe("number");
      const session = await db().getSession("s");
      expect(session?.messageCount).toBe(6);
      expect(session?.toolCallCount).toBe(1);
      expect(session?.lastActiveAt).toBe(23);
    });

    test("rewind(2) undoes two turns; the target text joins text parts with a newline", async () => {
      await seed(db());
      expect(await db().rewind("s", 2)).toEqual({ rewound: 6, turnsUndone: 2, targetText: "line one\nline two" });
      expect(await visibleTexts(db())).toEqual(["first question", "first answer"]);
      const session = await db().getSession("s");
      expect(session?.messageCount).toBe(2);
      expect(session?.toolCallCount).toBe(0);
      expect(session?.lastActiveAt).toBe(11);
    });

    test("turns below 1 act as 1", async () => {
      await seed(db());
      expect(await db().rewind("s", 0)).toEqual({ rewound: 2, turnsUndone: 1, targetText: "third question" });
      expect(await db().rewind("s", -3)).toEqual({ rewound: 4, turnsUndone: 1, targetText: "line one\nline two" });
      expect(await visibleTexts(db())).toEqual(["first question", "first answer"]);
    });

    test("asking for more turns than exist undoes all of them", async () => {
      await seed(db());
      expect(await db().rewind("s", 10)).toEqual({ rewound: 8, turnsUndone: 3, targetText: "first question" });
      expect(await db().getMessages("s")).toEqual([]);
      const session = await db().getSession("s");
      expect(session?.messageCount).toBe(0);
      expect(session?.preview).toBeNull();
      expect(session?.lastActiveAt).toBe(1);
      expect(await db().rewind("s")).toEqual({ rewound: 0, turnsUndone: 0, targetText: null });
    });

    test("messages before the first user message are not part of a turn", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendTurn("s", [{ role: "system", content: "rules", timestamp: 1 }, assistant("welcome", 2), user("hello", 3), assistant("hi", 4)]);
      expect(await db().rewind("s", 5)).toEqual({ rewound: 2, turnsUndone: 1, targetText: "hello" });
      expect(await visibleTexts(db())).toEqual(["rules", "welcome"]);
    });

    test("a session without user messages has nothing to rewind", async () => {
      await db().createSession({ id: "empty", source: "cli" });
      expect(await db().rewind("empty")).toEqual({ rewound: 0, turnsUndone: 0, targetText: null });
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", assistant("monologue"));
      expect(await db().rewind("s")).toEqual({ rewound: 0, turnsUndone: 0, targetText: null });
      expect(await visibleTexts(db())).toEqual(["monologue"]);
    });

    test("rewound rows are hidden from getConversation", async () => {
      await seed(db());
      await db().rewind("s", 2);
      expect(await db().getConversation("s")).toEqual([
        { role: "user", content: "first question" },
        { role: "assistant", content: "first answer" },
      ]);
    });

    test("appending after a rewind continues the visible transcript", async () => {
      const seeded = await seed(db());
      await db().rewind("s");
      const newId = await db().appendMessage("s", user("third question, rephrased", 40));
      expect(newId).toBeGreaterThan(Math.max(...seeded));
      expect((await visibleTexts(db())).slice(-2)).toEqual(["second answer", "third question, rephrased"]);
      expect((await db().getMessages("s", { includeRewound: true })).map((m) => m.id)).toEqual([...seeded, newId]);
      expect((await db().getSession("s"))?.messageCount).toBe(7);
      // The next rewind undoes the new turn, not the already rewound one.
      expect(await db().rewind("s")).toEqual({ rewound: 1, turnsUndone: 1, targetText: "third question, rephrased" });
    });

    test("restoreRewound brings back the latest rewind only; all:true brings back everything", async () => {
      await seed(db());
      await db().rewind("s"); // turn 3: 2 rows
      await db().rewind("s"); // turn 2: 4 rows
      expect(await db().restoreRewound("s")).toBe(4);
      expect((await visibleTexts(db())).length).toBe(6);
      expect((await visibleTexts(db())).at(-1)).toBe("second answer");
      expect((await db().getSession("s"))?.messageCount).toBe(6);
      expect(await db().restoreRewound("s")).toBe(2);
      expect((await visibleTexts(db())).length).toBe(8);
      expect(await db().restoreRewound("s")).toBe(0);
    });

    test("restoreRewound({ all: true }) restores every rewound row and the counters", async () => {
      await seed(db());
      await db().rewind("s");
      await db().rewind("s");
      expect(await db().restoreRewound("s", { all: true })).toBe(6);
      const all = await db().getMessages("s");
      expect(all).toHaveLength(8);
      expect(all.every((m) => m.rewoundAt === null)).toBe(true);
      const session = await db().getSession("s");
      expect(session?.messageCount).toBe(8);
      expect(session?.toolCallCount).toBe(1);
      expect(session?.lastActiveAt).toBe(31);
      expect(await db().restoreRewound("s", { all: true })).toBe(0);
    });

    test("the preview skips rewound user messages, in getSession and listSessions", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendTurn("s", [user("only question", 1), assistant("answer", 2)]);
      await db().rewind("s");
      expect((await db().getSession("s"))?.preview).toBeNull();
      expect((await db().listSessions()).items.find((r) => r.id === "s")?.preview).toBeNull();
      expect((await db().listSessions()).items.find((r) => r.id === "s")?.messageCount).toBe(0);
      await db().appendMessage("s", user("new question", 3));
      expect((await db().getSession("s"))?.preview).toBe("new question");
      await db().restoreRewound("s");
      expect((await db().getSession("s"))?.preview).toBe("only question");
    });

    test("rewound rows never appear in search results or context", async () => {
      await db().createSession({ id: "s", source: "cli" });
      const [apple, banana] = await db().appendTurn("s", [user("apple question", 10), assistant("banana answer", 11)]);
      await db().appendTurn("s", [user("cherry question", 20), assistant("durian answer", 21)]);
      await db().rewind("s");
      expect(await db().searchMessages("cherry")).toEqual([]);
      expect(await db().searchMessages("durian OR cherry")).toEqual([]);
      let hits = await db().searchMessages("banana");
      expect(hits).toHaveLength(1);
      expect(hits[0]?.context.before?.id).toBe(apple);
      expect(hits[0]?.context.after).toBeNull();

      const [elder, fig] = await db().appendTurn("s", [user("elderberry question", 30), assistant("fig answer", 31)]);
      hits = await db().searchMessages("banana");
      expect(hits[0]?.context.after?.id).toBe(elder);
      expect(hits[0]?.context.after?.content).toBe("elderberry question");
      hits = await db().searchMessages("elderberry");
      expect(hits[0]?.context.before?.id).toBe(banana);
      expect(hits[0]?.context.after?.id).toBe(fig);
      expect((await db().searchMessages("question")).map((h) => h.messageId).sort((a, b) => a - b)).toEqual([apple, elder]);
    });

    test("rewound rows are left out of exports unless includeRewound", async () => {
      await seed(db());
      await db().rewind("s");
      const [plain] = await collect(db().exportSessions({ sessionId: "s" }));
      expect(plain?.messages.map((m) => m.content)).not.toContain("third question");
      expect(plain?.messages).toHaveLength(6);
      const [full] = await collect(db().exportSessions({ sessionId: "s", includeRewound: true }));
      expect(full?.messages).toHaveLength(8);
      expect(full?.messages.slice(6).map((m) => m.content)).toEqual(["third question", "third answer"]);
      for (const m of full?.messages.slice(6) ?? []) expect(typeof m.rewoundAt).toBe("number");
    });

    test("rewind and restore of an unknown session are NotFoundErrors", async () => {
      await expectReject(() => db().rewind("ghost"), NotFoundError);
      await expectReject(() => db().restoreRewound("ghost"), NotFoundError);
      await expectReject(() => db().rewindMessages("ghost"), NotFoundError);
    });

    test("rewindMessages() hides the last message whatever its role and returns it", async () => {
      const ids = await seed(db());
      const [popped] = await db().rewindMessages("s");
      expect(popped?.id).toBe(ids[7]);
      expect(popped?.content).toBe("third answer");
      expect(typeof popped?.rewoundAt).toBe("number");
      expect((await visibleTexts(db())).at(-1)).toBe("third question");
      const session = await db().getSession("s");
      expect(session?.messageCount).toBe(7);
      expect(session?.lastActiveAt).toBe(30);
      // A tool result, then its call: counters follow.
      await db().rewindMessages("s", 3);
      expect((await db().getMessages("s")).map((m) => m.id)).toEqual(ids.slice(0, 4));
      expect((await db().getSession("s"))?.toolCallCount).toBe(1);
      const [call] = await db().rewindMessages("s");
      expect(call?.toolCalls?.[0]?.id).toBe("c1");
      expect((await db().getSession("s"))?.toolCallCount).toBe(0);
    });

    test("rewindMessages(n) returns the hidden messages oldest first; more than exist hides all", async () => {
      const ids = await seed(db());
      const two = await db().rewindMessages("s", 2);
      expect(two.map((m) => m.id)).toEqual(ids.slice(6));
      const rest = await db().rewindMessages("s", 100);
      expect(rest.map((m) => m.id)).toEqual(ids.slice(0, 6));
      expect(await db().getMessages("s")).toEqual([]);
      const session = await db().getSession("s");
      expect(session?.messageCount).toBe(0);
      expect(session?.preview).toBeNull();
      expect(await db().rewindMessages("s")).toEqual([]);
    });

    test("rewindMessages() skips rows already rewound; restoreRewound brings back its batch", async () => {
      const ids = await seed(db());
      await db().rewind("s"); // turn 3: ids[6], ids[7]
      const [popped] = await db().rewindMessages("s", 0); // below 1 acts as 1
      expect(popped?.id).toBe(ids[5]);
      expect(await db().restoreRewound("s")).toBe(1);
      expect((await db().getMessages("s")).map((m) => m.id)).toEqual(ids.slice(0, 6));
      expect((await db().getSession("s"))?.messageCount).toBe(6);
      await expectReject(() => db().rewindMessages("s", Number.NaN), InvalidInputError, /count/);
    });

    test("messages hidden by rewindMessages leave search and come back with restore", async () => {
      await db().createSession({ id: "s", source: "cli" });
      await db().appendTurn("s", [user("apple question", 10), assistant("banana answer", 11)]);
      await db().rewindMessages("s");
      expect(await db().searchMessages("banana")).toEqual([]);
      expect((await db().searchMessages("apple"))[0]?.context.after).toBeNull();
      await db().restoreRewound("s");
      expect(await db().searchMessages("banana")).toHaveLength(1);
    });
  });
}
