/**
 * The cut plan of a compression (pure): properties over many generated conversations (a
 * seeded generator: fast-check is not a dependency), plus the rules spelled out.
 */
import { describe, expect, it } from "vitest";
import { planCompression, TAIL_SOFT_CEILING, type PlanMessage } from "../../src/context/index.js";

/** Mulberry32: a small deterministic generator. */
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

/** A well-formed conversation: turns of user → (assistant with tool calls → tool results)* → assistant. */
function conversation(random: () => number, options: { tools: boolean; summary: boolean }): PlanMessage[] {
  const out: PlanMessage[] = [];
  const tokens = (): number => 1 + Math.floor(random() ** 3 * 400);
  if (options.summary) out.push({ role: "user", hasToolCalls: false, isSummary: true, tokens: tokens() });
  const turns = Math.floor(random() * 40);
  for (let t = 0; t < turns; t++) {
    out.push({ role: "user", hasToolCalls: false, isSummary: false, tokens: tokens() });
    if (options.tools) {
      const rounds = random() < 0.4 ? Math.floor(random() * 3) : 0;
      for (let r = 0; r < rounds; r++) {
        out.push({ role: "assistant", hasToolCalls: true, isSummary: false, tokens: tokens() });
        const results = 1 + Math.floor(random() * 3);
        for (let k = 0; k < results; k++) out.push({ role: "tool", hasToolCalls: false, isSummary: false, tokens: tokens() });
      }
    }
    if (random() < 0.95) out.push({ role: "assistant", hasToolCalls: false, isSummary: false, tokens: tokens() });
  }
  return out;
}

const sum = (ms: PlanMessage[], from: number, to: number): number => ms.slice(from, to).reduce((s, m) => s + m.tokens, 0);

describe("planCompression", () => {
  it("properties: a partition; tool calls never split from their results; head and tail as protected; the tail within its ceiling or one turn", () => {
    const random = rng(28);
    for (let run = 0; run < 3000; run++) {
      const tools = random() < 0.6;
      const messages = conversation(random, { tools, summary: random() < 0.3 });
      const options = {
        protectFirstN: Math.floor(random() * 5),
        protectLastN: 1 + Math.floor(random() * 25),
        tailBudget: Math.floor(random() * 3000),
      };
      const plan = planCompression(messages, options);
      const n = messages.length;
      const where = `run ${run}: ${JSON.stringify({ options, plan, roles: messages.map((m) => m.role[0]).join("") })}`;
      // A partition of [0, n).
      expect(0 <= plan.summaryEnd && plan.summaryEnd <= plan.headEnd && plan.headEnd <= plan.tailStart && plan.tailStart <= n, where).toBe(true);
      expect(plan.middleCount, where).toBe(plan.tailStart - plan.headEnd);
      // Only a leading summary is set apart.
      expect(plan.summaryEnd, where).toBe(n > 0 && messages[0]!.isSummary ? 1 : 0);
      // The head holds protectFirstN messages (more only to keep tool results with their call).
      expect(plan.headEnd - plan.summaryEnd, where).toBeGreaterThanOrEqual(Math.min(options.protectFirstN, n - plan.summaryEnd));
      if (plan.headEnd > plan.summaryEnd + options.protectFirstN) expect(messages[plan.headEnd - 1]!.role, where).toBe("tool");
      // No section starts with tool results (a call is never cut from its results).
      for (const start of [plan.headEnd, plan.tailStart]) if (start < n) expect(messages[start]!.role, where).not.toBe("tool");
      if (plan.middleCount > 0) {
        // The tail keeps the newest message, and starts at a user message when the plan could.
        expect(plan.tailStart, where).toBeLessThan(n);
        const tail = sum(messages, plan.tailStart, n);
        const usersInTail = messages.slice(plan.tailStart + 1).filter((m) => m.role === "user").length;
        // Over its ceiling only when it is (part of) the last turn: nothing more could be cut.
        if (tail > options.tailBudget * TAIL_SOFT_CEILING) expect(usersInTail, where).toBe(0);
        if (!tools) expect(messages[plan.tailStart]!.role === "user" || usersInTail === 0, where).toBe(true);
      }
    }
  });

  it("keeps protectLastN recent messages while they fit 1.5 × the budget, and more while the budget allows", () => {
    const flat = (n: number, tokens: number): PlanMessage[] =>
      Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", hasToolCalls: false, isSummary: false, tokens }));
    // 100 messages of 10 tokens, budget 100: the count floor (20) wins within 150 tokens → 15 messages, then aligned to a user message.
    const plan = planCompression(flat(100, 10), { protectFirstN: 3, protectLastN: 20, tailBudget: 100 });
    expect(plan.headEnd).toBe(3);
    expect(100 - plan.tailStart).toBe(14); // 15 fit the ceiling; the 15th from the end is an assistant message → one less
    // A large budget keeps more than protectLastN.
    expect(100 - planCompression(flat(100, 10), { protectFirstN: 3, protectLastN: 20, tailBudget: 400 }).tailStart).toBe(40);
    // Everything fits: nothing to compress.
    expect(planCompression(flat(10, 10), { protectFirstN: 3, protectLastN: 20, tailBudget: 1000 }).middleCount).toBe(0);
  });

  it("never starts the tail between an assistant's tool calls and their results", () => {
    const m = (role: string, tokens = 10, hasToolCalls = false): PlanMessage => ({ role, hasToolCalls, isSummary: false, tokens });
    const messages = [m("user"), m("assistant"), m("user"), m("assistant", 10, true), m("tool", 500), m("tool", 10), m("assistant"), m("user"), m("assistant")];
    const plan = planCompression(messages, { protectFirstN: 1, protectLastN: 4, tailBudget: 40 });
    expect(messages[plan.tailStart]!.role).toBe("user");
    expect(plan.tailStart).toBe(7);
  });
});
