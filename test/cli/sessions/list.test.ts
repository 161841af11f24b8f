import { existsSync } from "node:fs";
import stringWidth from "string-width";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB, type SessionSummary } from "../../../src/index.js";
import { makeTempHome, nowSeconds, parseJson, type TempHome } from "./cli-harness.js";
import { addSession, DAY, HOUR, MIN } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

const localDate = (at: number): string => {
  const d = new Date(at * 1000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};

describe("threadline sessions list", { timeout: 120_000 }, () => {
  it("without titles: Preview, Last Active, Src, ID, newest first, with relative times", async () => {
    const ids = await t.seed(async (db) => [
      await addSession(db, { text: "just said this", ago: 10 }),
      await addSession(db, { text: "five minutes", ago: 5 * MIN + 10, source: "telegram" }),
      await addSession(db, { text: "three hours", ago: 3 * HOUR + 10 }),
      await addSession(db, { text: "a day ago", ago: 30 * HOUR }),
      await addSession(db, { text: "four days", ago: 4 * DAY + HOUR }),
      await addSession(db, { text: "a month ago", ago: 30 * DAY }),
    ]);
    const result = await t.run(["sessions", "list", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^Preview\s+Last Active\s+Src\s+ID$/u);
    expect(lines).toHaveLength(7);
    const expected = ["just now", "5m ago", "3h ago", "yesterday", "4d ago", localDate(nowSeconds() - 30 * DAY)];
    lines.slice(1).forEach((line, i) => {
      expect(line).toContain(ids[i]!);
      expect(line).toMatch(new RegExp(`\\s${expected[i]}\\s`, "u"));
    });
    expect(lines[2]).toMatch(/^five minutes\s+5m ago\s+telegram\s+\S+$/u);
    expect(result.stdout).not.toMatch(/more session/u);
  });

  it("with a title among the shown rows: Title, Preview, Last Active, ID", async () => {
    const [titled, plain] = await t.seed(async (db) => [
      await addSession(db, { text: "deploy the thing", title: "Deploy notes", ago: 60 }),
      await addSession(db, { text: "no title here", ago: 2 * HOUR }),
    ]);
    const result = await t.run(["sessions", "list", "--db", t.db]);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^Title\s+Preview\s+Last Active\s+ID$/u);
    expect(lines[1]).toMatch(new RegExp(`^Deploy notes\\s+deploy the thing\\s+1m ago\\s+${titled}$`, "u"));
    expect(lines[2]).toMatch(new RegExp(`^-\\s+no title here\\s+2h ago\\s+${plain}$`, "u"));
    expect(result.stdout).not.toMatch(/\bSrc\b/u);
  });

  it("aligns columns by display width: Japanese, emoji and combining marks do not shift them", async () => {
    await t.seed(async (db) => {
      await addSession(db, { text: "plain ascii preview", ago: 10 });
      await addSession(db, { text: "デプロイの手順を教えてください。本番サーバーの設定も確認したいです", ago: 10 });
      await addSession(db, { text: "👩‍💻 working with 👨‍👩‍👧 family ❤️ and 🇯🇵 flags, a long line of text here", ago: 10 });
      await addSession(db, { text: "Cafe\u0301 de\u0301ja\u0300 vu, re\u0301sume\u0301", ago: 10 });
    });
    const result = await t.run(["sessions", "list", "--db", t.db]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    const column = (line: string, needle: string): number => stringWidth(line.slice(0, line.indexOf(needle)));
    const at = column(lines[0]!, "Last Active");
    expect(lines.slice(1)).toHaveLength(4);
    for (const line of lines.slice(1)) expect(column(line, "just now")).toBe(at);
  });

  it("a compressed session's preview is never its summary: the first real user message, else (no user message yet)", async () => {
    await t.seed(async (db) => {
      const summary = (parent: string) => ({
        role: "user" as const,
        content: `[Summary of the earlier conversation (session ${parent})]\nWe planned the trip.`,
        platformMessageId: `summary:${parent}`,
        timestamp: nowSeconds() - 60,
      });
      const fresh = await db.createSession({ id: "cont_fresh", source: "cli", startedAt: nowSeconds() - 120 });
      await db.appendMessage(fresh.id, summary("root_a"));
      const used = await db.createSession({ id: "cont_used", source: "cli", startedAt: nowSeconds() - 120 });
      await db.appendMessage(used.id, summary("root_b"));
      await db.appendMessage(used.id, { role: "user", content: "and the hotel?", timestamp: nowSeconds() - 30 });
    });
    const result = await t.run(["sessions", "list", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("[Summary");
    expect(result.stdout).toMatch(/^\(no user message yet\) +\S.* cont_fresh$/mu);
    expect(result.stdout).toMatch(/^and the hotel\? +\S.* cont_used$/mu);
  });

  it("says how many more exist when --limit cut the list; --all shows every one", async () => {
    await t.seed(async (db) => {
      for (let i = 0; i < 7; i++) await addSession(db, { text: `session ${i}`, ago: (i + 1) * MIN });
    });
    const cut = await t.run(["sessions", "list", "--limit", "3", "--db", t.db]);
    expect(cut.code).toBe(0);
    expect(cut.stdout.split("\n").filter((l) => /^session \d/u.test(l))).toHaveLength(3);
    expect(cut.stdout).toContain("... 4 more sessions (use --limit 7 or --all to see them)");
    const all = await t.run(["sessions", "list", "--all", "--db", t.db]);
    expect(all.stdout.split("\n").filter((l) => /^session \d/u.test(l))).toHaveLength(7);
    expect(all.stdout).not.toContain("more session");
    const json = parseJson<{ sessions: SessionSummary[]; more: number }>(await t.run(["sessions", "list", "--limit", "6", "--json", "--db", t.db]));
    expect(json.sessions).toHaveLength(6);
    expect(json.more).toBe(1);
    expect(json.sessions[0]).toMatchObject({ source: "cli", preview: "session 0", title: null, messageCount: 1 });
  });

  it("filters by --source (repeatable or comma-separated)", async () => {
    await t.seed(async (db) => {
      await addSession(db, { text: "from cli", source: "cli" });
      await addSession(db, { text: "from telegram", source: "telegram" });
      await addSession(db, { text: "from discord", source: "discord" });
    });
    const one = parseJson<{ sessions: SessionSummary[] }>(await t.run(["sessions", "list", "--source", "telegram", "--json", "--db", t.db]));
    expect(one.sessions.map((s) => s.source)).toEqual(["telegram"]);
    const two = parseJson<{ sessions: SessionSummary[] }>(await t.run(["sessions", "list", "--source", "cli,discord", "--json", "--db", t.db]));
    expect(two.sessions.map((s) => s.source).sort()).toEqual(["cli", "discord"]);
    const none = await t.run(["sessions", "list", "--source", "slack", "--db", t.db]);
    expect(none.stdout).toBe("No sessions from slack.\n");
  });

  it("reads THREADLINE_DB when --db is not given, and rejects a bad --limit with exit 2", async () => {
    await t.seed((db) => addSession(db, { text: "via env" }));
    const viaEnv = await t.run(["sessions", "list"], { env: { THREADLINE_DB: t.db } });
    expect(viaEnv.stdout).toContain("via env");
    const bad = await t.run(["sessions", "list", "--limit", "0", "--db", t.db]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/--limit must be a whole number/u);
  });

  it("falls back to state.db in THREADLINE_HOME", async () => {
    // Missing: a first run, no sessions yet (exit 0), and it is not created; once it exists, it is read.
    const missing = await t.run(["sessions", "list"]);
    expect(missing).toEqual({ code: 0, stdout: "No sessions yet.\n", stderr: "" });
    expect(parseJson<{ location: string }>(await t.run(["sessions", "stats", "--json"])).location).toBe(`${t.home}/state.db`);
    expect(existsSync(`${t.home}/state.db`)).toBe(false);
    await (await openSessionDB(`${t.home}/state.db`)).close();
    const result = await t.run(["sessions", "list"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("No sessions yet.\n");
    const stats = parseJson<{ location: string }>(await t.run(["sessions", "stats", "--json"]));
    expect(stats.location).toBe(`${t.home}/state.db`);
    // An empty THREADLINE_DB counts as unset.
    const blank = parseJson<{ location: string }>(await t.run(["sessions", "stats", "--json"], { env: { THREADLINE_DB: "" } }));
    expect(blank.location).toBe(`${t.home}/state.db`);
  });
});
