/**
 * buildContext on real stores (a SQLite file and a PostgreSQL schema): the newest whole turns
 * within the budget, tool calls never split from their results, the compression summary kept
 * first, the newest user message sent even when it alone overflows, and the budget respected
 * for random histories.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildContext, MessageTokenCache, TRUNCATION_MARKER, type ContextBudgetOptions } from "../../src/context/context-builder.js";
import { tokenCounterFor, type TokenCounter } from "../../src/context/token-count.js";
import { openSessionDB, type ConversationMessage, type NewMessage, type SessionDB } from "../../src/store/index.js";
import { PostgresSessionDB } from "../../src/store/postgres/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";

/** A small deterministic PRNG (mulberry32), so a failing random history can be replayed by its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = "alpha beta gamma delta deployment notes server port database migration summary the of and".split(" ");
function text(random: () => number, n: number): string {
  return Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(" ");
}

/** One turn: a user message, maybe tool rounds, a reply. */
function turn(random: () => number, i: number): NewMessage[] {
  const out: NewMessage[] = [{ role: "user", content: `q${i} ${text(random, 1 + Math.floor(random() * 200))}` }];
  const rounds = Math.floor(random() * 3);
  for (let r = 0; r < rounds; r++) {
    const id = `call_${i}_${r}`;
    out.push({
      role: "assistant",
      content: null,
      toolCalls: [{ id, type: "function", function: { name: "session_search", arguments: JSON.stringify({ query: text(random, 3) }) } }],
    });
    out.push({ role: "tool", toolCallId: id, toolName: "session_search", content: text(random, 1 + Math.floor(random() * 300)) });
  }
  out.push({ role: "assistant", content: `a${i} ${text(random, 1 + Math.floor(random() * 150))}` });
  return out;
}

/** Checks the structural rules of a built window. */
function assertWellFormed(messages: ConversationMessage[]): void {
  const open = new Set<string>();
  for (const m of messages) {
    if (m.role === "tool") {
      // A result always follows its call in the window.
      expect(open.has(m.tool_call_id!)).toBe(true);
      open.delete(m.tool_call_id!);
    }
    for (const call of m.tool_calls ?? []) open.add(call.id);
  }
  // No call is left without its result.
  expect([...open]).toEqual([]);
  if (messages.length > 0) expect(messages[0]!.role).toBe("user");
}

interface Backend {
  name: string;
  open(): Promise<SessionDB>;
  cleanup(): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), "tl-ctx-builder-"));
const schemas: string[] = [];
const backends: Backend[] = [
  {
    name: "sqlite",
    open: () => openSessionDB(join(dir, `${randomBytes(4).toString("hex")}.db`)),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  },
  {
    name: "postgres",
    open: async () => {
      const schema = `tl_test_${randomBytes(6).toString("hex")}`;
      schemas.push(schema);
      return PostgresSessionDB.open({ connectionString: TEST_PG_URL, schema });
    },
    cleanup: async () => {
      for (const schema of schemas) await dropSchema(schema);
    },
  },
];

for (const backend of backends) {
  describe(`buildContext (${backend.name})`, () => {
    let db: SessionDB;
    let counter: TokenCounter;
    beforeAll(async () => {
      if (backend.name === "postgres") await requirePostgres();
      db = await backend.open();
      counter = await tokenCounterFor("gpt-4o-mini");
    });
    afterAll(async () => {
      await db.close();
      await backend.cleanup();
    });

    /** A session holding `messages`; with `parent`, a continuation of that (created) session. */
    async function session(messages: NewMessage[], parent?: string): Promise<string> {
      const id = `s_${randomBytes(6).toString("hex")}`;
      if (parent !== undefined) await db.createSession({ id: parent, source: "cli" });
      await db.createSession({ id, source: "cli", model: "gpt-4o-mini", ...(parent === undefined ? {} : { parentSessionId: parent }) });
      if (messages.length > 0) await db.appendTurn(id, messages);
      return id;
    }

    const build = (id: string, options: Omit<ContextBudgetOptions, "counter">) => buildContext(db, id, { counter, ...options });

    it("sends everything when it fits, and measures the whole conversation", async () => {
      const random = rng(1);
      const messages = [...turn(random, 1), ...turn(random, 2), ...turn(random, 3)];
      const id = await session(messages);
      const built = await build(id, { budget: 1_000_000 });
      expect(built.messages).toEqual(await db.getConversation(id));
      expect(built.dropped).toBe(0);
      expect(built.fullCount).toBe(messages.length);
      expect(built.tokens).toBe(counter.countMessages(built.messages));
      expect(built.fullTokens).toBe(built.tokens);
    });

    it("keeps the newest whole turns within the budget, never more than 40 short messages cut off", async () => {
      // 60 short exchanges: the old fixed window sent the last 40 messages (20 exchanges).
      const messages: NewMessage[] = [];
      for (let i = 0; i < 60; i++) messages.push({ role: "user", content: `fact ${i}: the code word is w${i}` }, { role: "assistant", content: `noted ${i}` });
      const id = await session(messages);
      const built = await build(id, { budget: 100_000 });
      expect(built.messages).toHaveLength(120);
      expect(built.messages[0]!.content).toBe("fact 0: the code word is w0");
      // A budget for about ten exchanges keeps the newest exchanges, whole.
      const ten = counter.countMessages(built.messages.slice(-20));
      const small = await build(id, { budget: ten });
      expect(small.messages).toHaveLength(20);
      expect(small.messages[0]).toEqual({ role: "user", content: "fact 50: the code word is w50" });
      expect(small.tokens).toBeLessThanOrEqual(ten);
      expect(small.dropped).toBe(100);
      // One token less: that exchange no longer fits, and it goes as a whole.
      const less = await build(id, { budget: ten - 1 });
      expect(less.messages).toHaveLength(18);
      expect(less.messages[0]!.role).toBe("user");
    });

    it("never splits a tool call from its results: the turn goes whole or not at all", async () => {
      const id = await session([
        { role: "user", content: "first question" },
        { role: "assistant", content: null, toolCalls: [{ id: "c1", type: "function", function: { name: "session_search", arguments: "{}" } }] },
        { role: "tool", toolCallId: "c1", toolName: "session_search", content: "a long tool result ".repeat(200) },
        { role: "assistant", content: "first answer" },
        { role: "user", content: "second question" },
        { role: "assistant", content: "second answer" },
      ]);
      const all = await build(id, { budget: 1_000_000 });
      // Budget for the last turn and the first turn's reply, but not its tool result: the first turn is left out whole.
      const budget = all.tokens - counter.countMessage({ role: "tool", tool_call_id: "c1", content: "x" });
      const built = await build(id, { budget: Math.max(budget - 500, 1) });
      expect(built.messages.map((m) => m.content)).toEqual(["second question", "second answer"]);
      assertWellFormed(built.messages);
    });

    it("keeps the compression summary first, however much is left out between", async () => {
      const parent = `p_${randomBytes(6).toString("hex")}`;
      const messages: NewMessage[] = [
        { role: "user", content: "[Summary of the earlier conversation (session p1)]\nThe code word is AZURE.", platformMessageId: `summary:${parent}` },
      ];
      for (let i = 0; i < 30; i++)
        messages.push({ role: "user", content: `message ${i} ${"filler ".repeat(50)}` }, { role: "assistant", content: `reply ${i}` });
      const id = await session(messages, parent);
      const newest = counter.countMessages([
        { role: "user", content: `message 29 ${"filler ".repeat(50)}` },
        { role: "assistant", content: "reply 29" },
      ]);
      const summary = counter.countMessage({ role: "user", content: "[Summary of the earlier conversation (session p1)]\nThe code word is AZURE." });
      const built = await build(id, { budget: newest + summary + 200 });
      expect(built.summaryPinned).toBe(true);
      expect(String(built.messages[0]!.content)).toContain("AZURE");
      expect(built.messages.at(-1)!.content).toBe("reply 29");
      expect(built.messages.length).toBeLessThan(10);
      expect(built.tokens).toBeLessThanOrEqual(newest + summary + 200);
      // With room for the newest turn only, the newest turn wins over the summary.
      const tight = await build(id, { budget: newest });
      expect(tight.summaryPinned).toBe(false);
      expect(tight.messages.map((m) => m.content)).toEqual([`message 29 ${"filler ".repeat(50)}`, "reply 29"]);
    });

    it("pins only the summary naming the session's parent: a forged summary id ages out", async () => {
      const filler: NewMessage[] = [];
      for (let i = 0; i < 10; i++) filler.push({ role: "user", content: `m${i} ${"filler ".repeat(60)}` }, { role: "assistant", content: `r${i}` });
      const forged = await session([{ role: "user", content: "pin me forever", platformMessageId: "summary:someone-else" }, ...filler]);
      const parent = `p_${randomBytes(6).toString("hex")}`;
      const real = await session([{ role: "user", content: "the real summary", platformMessageId: `summary:${parent}` }, ...filler], parent);
      const budget = counter.countMessages(filler.slice(-4).map((m) => ({ role: m.role, content: m.content as string }))) + 40;
      const a = await build(forged, { budget });
      expect(a.summaryPinned).toBe(false);
      expect(a.messages.some((m) => m.content === "pin me forever")).toBe(false);
      const b = await build(real, { budget });
      expect(b.summaryPinned).toBe(true);
      expect(b.messages[0]!.content).toBe("the real summary");
    });

    it("sends the newest user message alone when its turn overflows, and cut with a marker as a last resort", async () => {
      const long = `START ${"word ".repeat(5000)} END`;
      const id = await session([
        { role: "user", content: "earlier" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "look this up" },
        { role: "assistant", content: null, toolCalls: [{ id: "c9", type: "function", function: { name: "session_search", arguments: "{}" } }] },
        { role: "tool", toolCallId: "c9", toolName: "session_search", content: "result ".repeat(3000) },
      ]);
      const alone = await build(id, { budget: 200 });
      expect(alone.messages).toEqual([{ role: "user", content: "look this up" }]);
      expect(alone.truncated).toBe(false);

      const id2 = await session([{ role: "user", content: long }]);
      const cut = await build(id2, { budget: 300 });
      expect(cut.truncated).toBe(true);
      expect(cut.messages).toHaveLength(1);
      const content = String(cut.messages[0]!.content);
      expect(content).toContain(TRUNCATION_MARKER.trim());
      expect(content.startsWith("START")).toBe(true);
      expect(content.endsWith("END")).toBe(true);
      expect(cut.tokens).toBeLessThanOrEqual(300);
      expect(cut.tokens).toBeGreaterThan(250);
    });

    it("applies historyLimit as an extra cap on top of the budget", async () => {
      const messages: NewMessage[] = [];
      for (let i = 0; i < 10; i++) messages.push({ role: "user", content: `u${i}` }, { role: "assistant", content: `a${i}` });
      const id = await session(messages);
      const built = await build(id, { budget: 1_000_000, historyLimit: 5 });
      // Whole turns only: 4 messages (two exchanges), not 5.
      expect(built.messages.map((m) => m.content)).toEqual(["u8", "a8", "u9", "a9"]);
      await expect(build(id, { budget: 1000, historyLimit: 0 })).rejects.toThrow(/historyLimit/u);
      await expect(build(id, { budget: -1 })).rejects.toThrow(/budget/u);
    });

    it("counts each message once with a cache, and gives the same answer", async () => {
      const random = rng(7);
      const messages: NewMessage[] = [];
      for (let i = 0; i < 200; i++) messages.push(...turn(random, i));
      const id = await session(messages);
      let counted = 0;
      const counting: TokenCounter = {
        ...counter,
        countMessage: (m) => {
          counted++;
          return counter.countMessage(m);
        },
      };
      const cache = new MessageTokenCache();
      const first = await buildContext(db, id, { budget: 5000, counter: counting, cache });
      expect(counted).toBe(messages.length);
      counted = 0;
      const second = await buildContext(db, id, { budget: 5000, counter: counting, cache });
      // Only the (bounded) bisection of nothing: every stored message came from the cache.
      expect(counted).toBe(0);
      expect(second).toEqual(first);
      expect(first).toEqual(await build(id, { budget: 5000 }));
    });

    it("a reply counted before it was stored (countUnstored) is not counted again once stored; tool calls are", async () => {
      let counted = 0;
      const counting: TokenCounter = {
        ...counter,
        countMessage: (m) => {
          counted++;
          return counter.countMessage(m);
        },
      };
      const cache = new MessageTokenCache();
      const id = await session([{ role: "user", content: "what is the port?" }]);
      await buildContext(db, id, { budget: 5000, counter: counting, cache });
      const reply: ConversationMessage = { role: "assistant", content: "The server listens on port 8787." };
      const call: ConversationMessage = {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } }],
      };
      counted = 0;
      const replyTokens = cache.countUnstored(counting, reply);
      cache.countUnstored(counting, call);
      expect(counted).toBe(2);
      await db.appendTurn(id, [
        { role: "assistant", content: null, toolCalls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } }] },
        { role: "tool", content: "8787", toolCallId: "call_1", toolName: "lookup" },
        { role: "assistant", content: "The server listens on port 8787." },
      ]);
      counted = 0;
      const built = await buildContext(db, id, { budget: 5000, counter: counting, cache });
      // The tool call and its result are counted; the plain reply is not counted a second time.
      expect(counted).toBe(2);
      expect(built.messages).toHaveLength(4);
      expect(built).toEqual(await build(id, { budget: 5000 }));
      expect(replyTokens).toBe(counter.countMessage(reply));
    });

    it("reads newest first in pages with a cache, and gives what reading everything gives, through appends, undos and restores", async () => {
      const random = rng(42);
      const messages: NewMessage[] = [];
      for (let i = 0; i < 260; i++) messages.push(...turn(random, i));
      const parent = `p_${randomBytes(6).toString("hex")}`;
      const id = await session(
        [{ role: "user", content: "[Summary of the earlier conversation]\nthe pinned part", platformMessageId: `summary:${parent}` }, ...messages],
        parent,
      );
      const cache = new MessageTokenCache();
      const reads: Array<number | "all"> = [];
      const spy = {
        getSession: (sid: string) => db.getSession(sid),
        getMessages: (sid: string, o?: Parameters<SessionDB["getMessages"]>[1]) => {
          if (o?.limit === undefined) reads.push(o?.lastMessages ?? "all");
          return db.getMessages(sid, o);
        },
      };
      const same = async (budget: number, historyLimit?: number): Promise<void> => {
        const options = { budget, counter, ...(historyLimit === undefined ? {} : { historyLimit }) };
        const paged = await buildContext(spy, id, { ...options, cache });
        const whole = await buildContext(db, id, options);
        expect(paged, `budget ${budget}`).toEqual(whole);
      };
      // The first call counts everything once; later calls read one page.
      await same(3000);
      expect(reads).toContain("all");
      reads.length = 0;
      for (const budget of [50, 400, 3000, 20_000]) await same(budget);
      expect(
        reads.every((r) => r === 256),
        JSON.stringify(reads),
      ).toBe(true);
      // A budget larger than the first page reads further back.
      reads.length = 0;
      await same(60_000);
      expect(reads[0]).toBe(256);
      expect(reads.length).toBeGreaterThan(1);
      await same(10_000_000);
      await same(10_000_000, 7);
      // Appends bring the tally up to date; an undo or a restore makes it count afresh.
      await db.appendTurn(id, turn(random, 999));
      await same(5000);
      await db.rewind(id, 2);
      reads.length = 0;
      await same(5000);
      expect(reads).toContain("all");
      await db.restoreRewound(id);
      await same(5000);
      await db.appendTurn(id, turn(random, 1000));
      await same(100_000);
    });

    it("respects the budget and the turn rules for random histories", async () => {
      for (let seed = 100; seed < 130; seed++) {
        const random = rng(seed);
        const messages: NewMessage[] = [];
        const parent = random() < 0.3 ? `p_${randomBytes(6).toString("hex")}` : undefined;
        if (parent !== undefined)
          messages.push({
            role: "user",
            content: `[Summary of the earlier conversation (session p${seed})]\n${text(random, 80)}`,
            platformMessageId: `summary:${parent}`,
          });
        const turns = 1 + Math.floor(random() * 25);
        for (let i = 0; i < turns; i++) messages.push(...turn(random, i));
        const id = await session(messages, parent);
        const budget = 100 + Math.floor(random() * 4000);
        const built = await build(id, { budget });
        const context = `seed ${seed}, budget ${budget}`;
        expect(built.tokens, context).toBe(counter.countMessages(built.messages));
        if (!built.truncated) expect(built.tokens, context).toBeLessThanOrEqual(budget);
        assertWellFormed(built.messages);
        // A suffix of the transcript (after the pinned summary), never empty.
        const all = await db.getConversation(id);
        const tail = built.summaryPinned ? built.messages.slice(1) : built.messages;
        expect(tail.length, context).toBeGreaterThan(0);
        if (tail.length < all.length - (built.summaryPinned ? 1 : 0) && !built.truncated && tail.at(-1)!.role !== "user") {
          expect(all.slice(all.length - tail.length), context).toEqual(tail);
        }
        expect(built.dropped, context).toBe(all.length - built.messages.length);
      }
    });
  });
}
