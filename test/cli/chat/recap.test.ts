import { describe, expect, it } from "vitest";
import { buildRecap, collapseToolCalls, cutAssistantText, cutUserText, recapOneLiner, renderRecapPanel, type RecapMessage } from "../../../src/cli/recap.js";
import type { ToolCall } from "../../../src/store/index.js";

const call = (name: string, n = 0): ToolCall => ({ id: `call_${name}_${n}`, type: "function", function: { name, arguments: "{}" } });
const user = (content: string): RecapMessage => ({ role: "user", content });
const assistant = (content: string | null, toolCalls: ToolCall[] | null = null): RecapMessage => ({ role: "assistant", content, toolCalls });
const tool = (content: string): RecapMessage => ({ role: "tool", content });

/** `n` exchanges: "question i" / "answer i". */
function exchanges(n: number): RecapMessage[] {
  return Array.from({ length: n }, (_, i) => [user(`question ${i + 1}`), assistant(`answer ${i + 1}`)]).flat();
}

describe("cutUserText", () => {
  it("keeps text of up to 300 characters whole", () => {
    const text = "a".repeat(300);
    expect(cutUserText(text)).toBe(text);
  });

  it("cuts longer text at 300 characters and marks the cut with …", () => {
    const text = `${"b".repeat(299)}cdef`;
    expect(cutUserText(text)).toBe(`${"b".repeat(299)}c…`);
    expect([...cutUserText("x".repeat(1000))].length).toBe(301);
  });

  it("counts characters, not UTF-16 units", () => {
    const text = "😀".repeat(301);
    expect(cutUserText(text)).toBe(`${"😀".repeat(300)}…`);
  });

  it("folds whitespace and newlines onto one line", () => {
    expect(cutUserText("  line one\n\n  line\ttwo  ")).toBe("line one line two");
  });
});

describe("cutAssistantText", () => {
  it("keeps up to 3 lines whole", () => {
    expect(cutAssistantText("one\ntwo\nthree")).toBe("one\ntwo\nthree");
  });

  it("cuts after 3 lines with …", () => {
    expect(cutAssistantText("one\ntwo\nthree\nfour\nfive")).toBe("one\ntwo\nthree…");
  });

  it("does not count blank lines", () => {
    expect(cutAssistantText("one\n\ntwo\n\n\nthree")).toBe("one\ntwo\nthree");
    expect(cutAssistantText("one\n\ntwo\n\nthree\n\nfour")).toBe("one\ntwo\nthree…");
  });

  it("cuts at 200 characters with …", () => {
    const text = "w".repeat(250);
    expect(cutAssistantText(text)).toBe(`${"w".repeat(200)}…`);
    expect(cutAssistantText("z".repeat(200))).toBe("z".repeat(200));
  });

  it("applies the character cut to the 3 kept lines together", () => {
    const line = "l".repeat(90);
    expect(cutAssistantText(`${line}\n${line}\n${line}`)).toBe(`${line}\n${line}\n${"l".repeat(18)}…`);
  });
});

describe("collapseToolCalls", () => {
  it("counts calls and lists distinct names in call order", () => {
    expect(collapseToolCalls([call("terminal", 1), call("web_search"), call("terminal", 2)])).toBe("[3 tool calls: terminal, web_search]");
  });

  it("uses the singular for one call", () => {
    expect(collapseToolCalls([call("terminal")])).toBe("[1 tool call: terminal]");
  });
});

describe("buildRecap", () => {
  it("shows every exchange of a short session, user then assistant", () => {
    const recap = buildRecap(exchanges(2));
    expect(recap.rows).toEqual([
      { kind: "user", text: "question 1" },
      { kind: "assistant", text: "answer 1" },
      { kind: "user", text: "question 2" },
      { kind: "assistant", text: "answer 2" },
    ]);
    expect(recap.hiddenMessages).toBe(0);
    expect(recap.exchanges).toBe(2);
  });

  it("keeps the last 10 exchanges and says how many earlier messages were left out", () => {
    const recap = buildRecap(exchanges(13));
    expect(recap.exchanges).toBe(10);
    expect(recap.hiddenMessages).toBe(6);
    expect(recap.rows[0]).toEqual({ kind: "earlier", count: 6, text: "... 6 earlier messages ..." });
    expect(recap.rows[1]).toEqual({ kind: "user", text: "question 4" });
    expect(recap.rows.at(-1)).toEqual({ kind: "assistant", text: "answer 13" });
    expect(recap.rows.filter((r) => r.kind === "user")).toHaveLength(10);
  });

  it("has no earlier line at exactly 10 exchanges, and a singular one for one message", () => {
    expect(buildRecap(exchanges(10)).rows.some((r) => r.kind === "earlier")).toBe(false);
    const recap = buildRecap([user("lonely first"), ...exchanges(10)]);
    expect(recap.rows[0]).toEqual({ kind: "earlier", count: 1, text: "... 1 earlier message ..." });
  });

  it("hides system, developer and tool rows (and does not count them as earlier messages)", () => {
    const messages: RecapMessage[] = [
      { role: "system", content: "you are helpful" },
      { role: "developer", content: "be brief" },
      user("look it up"),
      assistant(null, [call("web_search")]),
      tool("search results: lots of text"),
      assistant("Found it."),
    ];
    const recap = buildRecap(messages);
    expect(recap.rows).toEqual([
      { kind: "user", text: "look it up" },
      { kind: "tools", text: "[1 tool call: web_search]" },
      { kind: "assistant", text: "Found it." },
    ]);
    const text = JSON.stringify(recap.rows);
    expect(text).not.toMatch(/helpful|be brief|search results/);
  });

  it("collapses every tool call of an exchange into one line before the reply", () => {
    const messages: RecapMessage[] = [
      user("deploy it"),
      assistant("Checking.", [call("terminal", 1)]),
      tool("ok"),
      assistant(null, [call("web_search"), call("terminal", 2)]),
      tool("ok"),
      tool("ok"),
      assistant("Deployed."),
    ];
    expect(buildRecap(messages).rows).toEqual([
      { kind: "user", text: "deploy it" },
      { kind: "tools", text: "[3 tool calls: terminal, web_search]" },
      { kind: "assistant", text: "Checking.\nDeployed." },
    ]);
  });

  it("applies the user and assistant cuts", () => {
    const recap = buildRecap([user("u".repeat(400)), assistant("1\n2\n3\n4")]);
    expect(recap.rows[0]).toEqual({ kind: "user", text: `${"u".repeat(300)}…` });
    expect(recap.rows[1]).toEqual({ kind: "assistant", text: "1\n2\n3…" });
  });

  it("shows an assistant message before any user message, and text of structured content", () => {
    const recap = buildRecap([
      assistant("Welcome back."),
      {
        role: "user",
        content: [
          { type: "text", text: "what is this?" },
          { type: "image_url", image_url: { url: "x" } },
        ],
      },
      assistant("A cat."),
    ]);
    expect(recap.rows).toEqual([
      { kind: "assistant", text: "Welcome back." },
      { kind: "user", text: "what is this? [image_url]" },
      { kind: "assistant", text: "A cat." },
    ]);
  });

  it("is empty for an empty transcript", () => {
    expect(buildRecap([])).toEqual({ rows: [], exchanges: 0, hiddenMessages: 0 });
  });

  it("honours other limits", () => {
    const recap = buildRecap(exchanges(5), { exchanges: 2, userChars: 5, assistantChars: 3 });
    expect(recap.rows).toEqual([
      { kind: "earlier", count: 6, text: "... 6 earlier messages ..." },
      { kind: "user", text: "quest…" },
      { kind: "assistant", text: "ans…" },
      { kind: "user", text: "quest…" },
      { kind: "assistant", text: "ans…" },
    ]);
  });
});

describe("renderRecapPanel", () => {
  const session = { id: "20260314_101500_a1b2c3", title: "Deploy", messageCount: 26, lastActiveAt: 1_000_000 - 300 };

  it("frames the rows with the session name, and ends with the count and last activity", () => {
    const text = renderRecapPanel(buildRecap(exchanges(13)), session, { now: 1_000_000 });
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe("╭─ Previous conversation · Deploy (20260314_101500_a1b2c3)");
    expect(lines[1]).toBe("│ ... 6 earlier messages ...");
    expect(lines).toContain("│ You: question 4");
    expect(lines).toContain("│ Assistant: answer 13");
    expect(lines.at(-1)).toBe("╰─ 26 messages · last active 5m ago");
    expect(text).not.toMatch(/\u001b\[/u);
  });

  it("wraps long lines under their label and keeps assistant lines apart", () => {
    const recap = buildRecap([user(`${"word ".repeat(30)}end`), assistant("first line\nsecond line")]);
    const lines = renderRecapPanel(recap, { ...session, title: null }, { now: 1_000_000, width: 40 }).split("\n");
    expect(lines[0]).toBe("╭─ Previous conversation · 20260314_101500_a1b2c3");
    const userLines = lines.filter((l) => l.includes("word"));
    expect(userLines.length).toBeGreaterThan(1);
    // The header names the session whole; every row fits the width.
    for (const line of lines.slice(1)) expect([...line].length).toBeLessThanOrEqual(40);
    expect(userLines[1]!.startsWith("│      ")).toBe(true);
    expect(lines).toContain("│ Assistant: first line");
    expect(lines).toContain("│            second line");
  });

  it("colours only when asked", () => {
    expect(renderRecapPanel(buildRecap(exchanges(1)), session, { now: 1_000_000, color: true })).toMatch(/\u001b\[/u);
  });
});

describe("recapOneLiner", () => {
  it("names the session, its size and last activity", () => {
    expect(recapOneLiner({ id: "20260314_101500_a1b2c3", title: "Deploy", messageCount: 1, lastActiveAt: 0 }, 30)).toBe(
      'Resumed session 20260314_101500_a1b2c3 "Deploy" (1 message, last active just now).',
    );
    expect(recapOneLiner({ id: "20260314_101500_a1b2c3", title: null, messageCount: 4, lastActiveAt: 0 }, 7200)).toBe(
      "Resumed session 20260314_101500_a1b2c3 (4 messages, last active 2h ago).",
    );
  });
});

describe("recap of a compressed or handed-off session", () => {
  const summary: RecapMessage = {
    role: "user",
    content: "[Summary of the earlier conversation (session 20261127_100000_abc123)]\nWe chose SQLite and planned the schema.",
    platformMessageId: "summary:20261127_100000_abc123",
  };
  const note: RecapMessage = {
    role: "user",
    content: "[System note: This conversation was handed off from the terminal to telegram; summarise where things stand and what is next.]",
    platformMessageId: "handoff:h-1",
  };

  it("shows the summary and the handoff note as what they are, never as the user's words", () => {
    const recap = buildRecap([summary, user("next step?"), assistant("Write the migration."), note, assistant("We are writing the migration.")]);
    expect(recap.rows).toEqual([
      { kind: "summary", text: "We chose SQLite and planned the schema." },
      { kind: "user", text: "next step?" },
      { kind: "assistant", text: "Write the migration." },
      { kind: "note", text: "This conversation was handed off from the terminal to telegram; summarise where things stand and what is next." },
      { kind: "assistant", text: "We are writing the migration." },
    ]);
    const panel = renderRecapPanel(recap, { id: "s1", title: null, messageCount: 5, lastActiveAt: 0 }, { width: 200, now: 60 });
    expect(panel).toContain("│ Summary: We chose SQLite and planned the schema.");
    expect(panel).toContain("│ System note: This conversation was handed off from the terminal to telegram;");
    expect(panel).toContain("│ You: next step?");
    expect(panel.match(/You:/gu)).toHaveLength(1);
  });

  it("a user message that merely looks like a summary (no marker) is still the user's", () => {
    const recap = buildRecap([{ role: "user", content: "[Summary of the earlier conversation (session x)]\nmine" }]);
    expect(recap.rows[0]?.kind).toBe("user");
  });
});
