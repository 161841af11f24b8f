// Issue 26, point 1: a title argument acts on exactly the session holding that title, for every
// command (show, rename, delete, export --session-id, chat -r); only `-c <title>` goes on to the
// newest session of its compression chain, and only along real parent links. When a bare title
// could have meant other sessions too, the command says which one it took.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionDB } from "../../../src/index.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** "my project", "my project #2" and "my project #3": three unrelated sessions, oldest first. */
async function lookAlikes(db: SessionDB): Promise<[string, string, string]> {
  const base = await addSession(db, { id: "base_0001", text: "the original", title: "my project", ago: 300 });
  const two = await addSession(db, { id: "two_0002", text: "second", title: "my project #2", ago: 200 });
  const three = await addSession(db, { id: "three_0003", text: "third", title: "my project #3", ago: 100 });
  return [base, two, three];
}

const exists = (id: string): Promise<boolean> => t.seed(async (db) => (await db.getSession(id)) !== null);

describe("a title names exactly the session holding it", { timeout: 120_000 }, () => {
  it("sessions show <title> shows that session, and says which one it took among look-alikes", async () => {
    const [base, two, three] = await t.seed(lookAlikes);
    const result = await t.run(["sessions", "show", "my", "project", "--json", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(parseJson<{ session: { id: string } }>(result).session.id).toBe(base);
    expect(result.stderr).toBe(
      `threadline: took the session titled exactly "my project" (${base}); also like it: "my project #3" (${three}), "my project #2" (${two}). Name one by its full title or id to take it instead.\n`,
    );
    const numbered = await t.run(["sessions", "show", "my", "project", "#2", "--json", "--db", t.db]);
    expect(parseJson<{ session: { id: string } }>(numbered).session.id).toBe(two);
  });

  it("sessions delete <title> --yes deletes that session and no other", async () => {
    const [base, two, three] = await t.seed(lookAlikes);
    const result = await t.run(["sessions", "delete", "my", "project", "--yes", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Deleted session '${base}' ("my project").\n`);
    expect(result.stderr).toContain(`took the session titled exactly "my project" (${base})`);
    expect(await exists(base)).toBe(false);
    expect(await exists(two)).toBe(true);
    expect(await exists(three)).toBe(true);
  });

  it("sessions delete asks about the session by id and title", async () => {
    const [base, , three] = await t.seed(lookAlikes);
    const prompt = `Delete session '${base}' ("my project") and all its messages? [y/N]`;
    const result = await t.runInTerminal(["sessions", "delete", "my", "project", "--db", t.db], { waitFor: prompt, answer: "n" });
    expect(result.code).toBe(0);
    expect(result.output).toContain("Cancelled; nothing was deleted.");
    expect(await exists(base)).toBe(true);
    expect(await exists(three)).toBe(true);
  });

  it("sessions rename <title> <new> renames that session", async () => {
    const [hello, , hello3] = await t.seed(async (db) => [
      await addSession(db, { text: "a", title: "Hello there", ago: 30 }),
      await addSession(db, { text: "b", title: "Hello there #2", ago: 20 }),
      await addSession(db, { text: "c", title: "Hello there #3", ago: 10 }),
    ]);
    const result = await t.run(["sessions", "rename", "Hello there", "renamed", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Session '${hello}' is now titled "renamed".\n`);
    expect(await t.seed((db) => db.getTitle(hello!))).toBe("renamed");
    expect(await t.seed((db) => db.getTitle(hello3!))).toBe("Hello there #3");
  });

  it("sessions export --session-id <title> exports that session", async () => {
    const [base] = await t.seed(lookAlikes);
    const file = join(t.dir, "out.jsonl");
    const result = await t.run(["sessions", "export", file, "--session-id", "my project", "--db", t.db]);
    expect(result.code).toBe(0);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as { session: { id: string } }).session.id)).toEqual([base]);
  });

  it("a title nobody holds exactly is not found, and the error names the similar titles", async () => {
    const [, two, three] = await t.seed(async (db) => {
      await addSession(db, { text: "x", title: "Unrelated" });
      return lookAlikes(db).then(async (ids) => {
        await db.setTitle(ids[0], "renamed away");
        return ids;
      });
    });
    const result = await t.run(["sessions", "show", "my", "project", "--db", t.db]);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `threadline: No session is titled exactly "my project" (titles are case-sensitive) or has an id starting with it; similar titles: "my project #3" (${three}), "my project #2" (${two}). Name one of them.\n`,
    );
  });

  it("a title with no look-alikes takes its session silently", async () => {
    const id = await t.seed((db) => addSession(db, { text: "x", title: "Alone" }));
    const result = await t.run(["sessions", "show", "Alone", "--json", "--db", t.db]);
    expect(parseJson<{ session: { id: string } }>(result).session.id).toBe(id);
    expect(result.stderr).toBe("");
  });
});

describe("chat -r and -c with a title", { timeout: 120_000 }, () => {
  const resumedId = (stdout: string): string => {
    const match = /Resume it with: threadline chat --resume (\S+)/u.exec(stdout);
    if (match === null) throw new Error(`no resume hint in:\n${stdout}`);
    return match[1]!;
  };

  it("-r <title> opens exactly that session, not the newest look-alike", async () => {
    const [base, two] = await t.seed(lookAlikes);
    const env = { THREADLINE_DB: t.db };
    const r2 = await t.run(["-r", "my", "project", "#2"], { input: "", env });
    expect(r2.code).toBe(0);
    expect(resumedId(r2.stdout)).toBe(two);
    const r1 = await t.run(["chat", "-r", "my project"], { input: "", env });
    expect(resumedId(r1.stdout)).toBe(base);
    expect(r1.stderr).toContain(`took the session titled exactly "my project" (${base})`);
  });

  it("-c <title> continues the newest session of its compression chain, along parent links only", async () => {
    const { root, tip } = await t.seed(async (db) => {
      const root = await addSession(db, { id: "root_0001", text: "long talk", title: "Plan", ago: 400 });
      await db.endSession(root, "compression");
      const tip = (await db.createSession({ id: "tip_0002", source: "cli", parentSessionId: root, title: "Plan #2" })).id;
      await db.appendMessage(tip, { role: "user", content: "after the summary" });
      // Newer, titled like the chain, but not linked to it.
      await addSession(db, { id: "stray_0003", text: "unrelated", title: "Plan #3", ago: 0 });
      return { root, tip };
    });
    const result = await t.run(["-c", "Plan"], { input: "", env: { THREADLINE_DB: t.db } });
    expect(result.code).toBe(0);
    expect(resumedId(result.stdout)).toBe(tip);
    expect(result.stderr).toContain(`"Plan" was compressed into "Plan #2" (${tip}); continuing there`);
    expect(await t.seed(async (db) => (await db.getSession(root))?.messageCount)).toBe(1);
  });
});
