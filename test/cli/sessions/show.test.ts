import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message, Session } from "../../../src/index.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession, addToolSession } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

describe("threadline sessions show", { timeout: 120_000 }, () => {
  it("shows metadata and the transcript with tool calls collapsed to a count and names", async () => {
    const id = await t.seed((db) => addToolSession(db, { id: "abc123_tools" }));
    const result = await t.run(["sessions", "show", id, "--db", t.db]);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/^Session\s+abc123_tools$/mu);
    expect(out).toMatch(/^Model\s+gpt-4o$/mu);
    expect(out).toMatch(/^Messages\s+7 \(3 tool calls\)$/mu);
    expect(out).toMatch(/^Tokens\s+1,200 in, 300 out$/mu);
    expect(out).toContain("  How do I deploy the staging server?");
    expect(out).toContain("  Let me check.\n  [3 tool calls: terminal, web_search]");
    expect(out).toContain("  Deployment done.");
    // Tool results, arguments and the system prompt stay hidden.
    expect(out).not.toContain("deployed OK");
    expect(out).not.toContain("./deploy.sh");
    expect(out).not.toContain("You are terse.");
  });

  it("shows a compression summary and a handoff note as what they are, not as user messages", async () => {
    const id = await t.seed(async (db) => {
      const session = await db.createSession({ id: "abc123_cont", source: "cli", startedAt: 1_000 });
      await db.appendMessage(session.id, {
        role: "user",
        content: "[Summary of the earlier conversation (session abc000_root)]\nWe chose SQLite.",
        platformMessageId: "summary:abc000_root",
        timestamp: 1_001,
      });
      await db.appendMessage(session.id, { role: "user", content: "And the schema?", timestamp: 1_002 });
      await db.appendMessage(session.id, {
        role: "user",
        content: "[System note: This conversation was handed off from the terminal to telegram; summarise where things stand and what is next.]",
        platformMessageId: "handoff:h-1",
        timestamp: 1_003,
      });
      await db.appendMessage(session.id, { role: "assistant", content: "We chose SQLite; the schema is next.", timestamp: 1_004 });
      return session.id;
    });
    const { stdout } = await t.run(["sessions", "show", id, "--db", t.db]);
    expect(stdout).toMatch(/^summary of the earlier conversation \(abc000_root\) · .*\n {2}We chose SQLite\.$/mu);
    expect(stdout).toMatch(
      /^system note · .*\n {2}This conversation was handed off from the terminal to telegram; summarise where things stand and what is next\.$/mu,
    );
    expect(stdout.match(/^user · /gmu)).toHaveLength(1);
    // --full shows the stored text as the model read it.
    const full = await t.run(["sessions", "show", id, "--full", "--db", t.db]);
    expect(full.stdout).toContain("  [Summary of the earlier conversation (session abc000_root)]\n  We chose SQLite.");
    expect(full.stdout).toContain("  [System note: This conversation was handed off");
  });

  it("--full shows every call with its arguments, every tool result and the system prompt", async () => {
    const id = await t.seed((db) => addToolSession(db));
    const { stdout } = await t.run(["sessions", "show", id, "--full", "--db", t.db]);
    expect(stdout).toContain("You are terse.");
    expect(stdout).toContain('→ terminal({"cmd":"ls deploy"})');
    expect(stdout).toContain('→ web_search({"q":"staging deploy"})');
    expect(stdout).toContain('→ terminal({"cmd":"./deploy.sh"})');
    expect(stdout).toMatch(/^tool \(terminal, c3\) · .*\n {2}deployed OK$/mu);
    expect(stdout).not.toContain("tool calls:");
  });

  it("finds a session by unique id prefix and by title", async () => {
    await t.seed(async (db) => {
      await addSession(db, { id: "prefix_alpha_1", text: "alpha text", title: "Alpha project" });
      await addSession(db, { id: "prefix_beta_1", text: "beta text" });
    });
    const byPrefix = await t.run(["sessions", "show", "prefix_b", "--db", t.db]);
    expect(byPrefix.code).toBe(0);
    expect(byPrefix.stdout).toMatch(/^Session\s+prefix_beta_1$/mu);
    const byTitle = await t.run(["sessions", "show", "Alpha project", "--db", t.db]);
    expect(byTitle.code).toBe(0);
    expect(byTitle.stdout).toMatch(/^Session\s+prefix_alpha_1$/mu);
    expect(byTitle.stdout).toMatch(/^Title\s+Alpha project$/mu);
  });

  it("an ambiguous prefix is an error naming the candidates (exit 2); an unknown one exits 3", async () => {
    await t.seed(async (db) => {
      await addSession(db, { id: "dup_one", text: "one" });
      await addSession(db, { id: "dup_two", text: "two" });
    });
    const ambiguous = await t.run(["sessions", "show", "dup_", "--db", t.db]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stdout).toBe("");
    expect(ambiguous.stderr).toMatch(/^threadline: "dup_" matches 2 sessions; give more of the id:/u);
    expect(ambiguous.stderr).toContain("dup_one");
    expect(ambiguous.stderr).toContain("dup_two");
    const missing = await t.run(["sessions", "show", "zzz", "--db", t.db, "--json"]);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(/No session with the id, id prefix or title "zzz"/u);
  });

  it("--json prints the session and every message", async () => {
    const id = await t.seed((db) => addToolSession(db));
    const json = parseJson<{ session: Session; messages: Message[] }>(await t.run(["sessions", "show", id, "--json", "--db", t.db]));
    expect(json.session.id).toBe(id);
    expect(json.session.toolCallCount).toBe(3);
    expect(json.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]);
    expect(json.messages[3]!.toolCalls!.map((c) => c.function.name)).toEqual(["web_search", "terminal"]);
  });
});
