import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession, addToolSession, HOUR } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

interface SearchJson {
  query: string;
  totalHits: number;
  sessions: Array<{ sessionId: string; title: string | null; source: string; hits: Array<{ role: string; snippet: string; messageId: number }> }>;
}

describe("threadline sessions search", { timeout: 120_000 }, () => {
  it("groups hits by session, with snippets", async () => {
    const [tools, other] = await t.seed(async (db) => [
      await addToolSession(db),
      await addSession(db, { text: "please rollback the deployment", source: "telegram", title: "Rollback", ago: 2 * HOUR }),
      await addSession(db, { text: "unrelated chatter" }),
    ]);
    const result = await t.run(["sessions", "search", "deploy*", "--db", t.db]);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/^5 hits in 2 sessions$/mu);
    // One header per session, its hits indented under it.
    const blocks = out.trim().split("\n\n").slice(1);
    expect(blocks).toHaveLength(2);
    const toolsBlock = blocks.find((b) => b.startsWith(tools!))!;
    const otherBlock = blocks.find((b) => b.startsWith(other!))!;
    expect(toolsBlock.split("\n")).toHaveLength(5);
    expect(toolsBlock).toMatch(/^ {2}user · \d+m ago: How do I \*\*deploy\*\* the staging server\?$/mu);
    expect(otherBlock.split("\n")[0]).toMatch(/Rollback\s+telegram · 2h ago$/u);
    expect(otherBlock).toContain("please rollback the **deployment**");
    expect(out).not.toContain("unrelated");
  });

  it("filters by --role and --source, honours --limit, and prints JSON", async () => {
    await t.seed(async (db) => {
      await addToolSession(db);
      await addSession(db, { text: "deploy from telegram", source: "telegram" });
    });
    const users = parseJson<SearchJson>(await t.run(["sessions", "search", "deploy*", "--role", "user", "--json", "--db", t.db]));
    expect(users.query).toBe("deploy*");
    expect(users.totalHits).toBe(2);
    expect(users.sessions.flatMap((s) => s.hits.map((h) => h.role))).toEqual(["user", "user"]);
    expect(users.sessions.flatMap((s) => s.hits.map((h) => h.snippet))).toContain(">>>deploy<<< from telegram");
    const telegram = parseJson<SearchJson>(await t.run(["sessions", "search", "deploy*", "--source", "telegram", "--json", "--db", t.db]));
    expect(telegram.sessions.map((s) => s.source)).toEqual(["telegram"]);
    const limited = parseJson<SearchJson>(await t.run(["sessions", "search", "deploy*", "--limit", "2", "--json", "--db", t.db]));
    expect(limited.totalHits).toBe(2);
    const badRole = await t.run(["sessions", "search", "x", "--role", "robot", "--db", t.db]);
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toMatch(/--role must be one of system, developer, user, assistant, tool/u);
  });

  it("--discover returns what the session_search tool sees; a blank query lists recent sessions", async () => {
    await t.seed(async (db) => {
      await addToolSession(db);
      await addSession(db, { text: "please rollback the deployment", source: "telegram", title: "Rollback", ago: 2 * HOUR });
    });
    const found = await t.run(["sessions", "search", "--discover", "rollback", "--db", t.db]);
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/^## Rollback — session /mu);
    expect(found.stdout).toContain(">> user: please rollback the deployment");
    const json = parseJson<{ mode: string; sessions: Array<{ title: string | null }> }>(
      await t.run(["sessions", "search", "--discover", "--json", "--db", t.db]),
    );
    expect(json.mode).toBe("browse");
    expect(json.sessions.length).toBe(2);
    const blank = await t.run(["sessions", "search", "--db", t.db]);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toMatch(/Give something to search for/);
  });

  it("says so when nothing matches", async () => {
    await t.seed((db) => addSession(db, { text: "hello" }));
    const result = await t.run(["sessions", "search", "kubernetes", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('No matches for "kubernetes".\n');
  });
});
