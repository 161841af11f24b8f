import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession, addToolSession } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

async function seedMixed(home: TempHome): Promise<string[]> {
  return home.seed(async (db) => {
    const a = await addToolSession(db);
    const b = await addSession(db, { text: "telegram chat", source: "telegram", title: "Groceries", ended: true });
    const child = await db.createSession({ source: "cli", parentSessionId: b });
    await db.appendMessage(child.id, {
      role: "user",
      content: [
        { type: "text", text: "multi-part" },
        { type: "image_url", image_url: { url: "data:x" } },
      ],
    });
    return [a, b, child.id];
  });
}

describe("threadline sessions export / import", { timeout: 120_000 }, () => {
  it("round-trips: export, import into a fresh database, export again: identical", async () => {
    await seedMixed(t);
    const first = join(t.dir, "first.jsonl");
    const second = join(t.dir, "second.jsonl");
    const fresh = join(t.dir, "fresh.db");
    const exported = await t.run(["sessions", "export", first, "--db", t.db]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe(`Exported 3 sessions to ${first}\n`);
    // Not a terminal: no progress bar on stderr.
    expect(exported.stderr).toBe("");
    const imported = await t.run(["sessions", "import", first, "--db", fresh]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toBe("Imported 3 sessions, skipped 0 already present.\n");
    expect((await t.run(["sessions", "export", second, "--db", fresh])).code).toBe(0);
    const a = readFileSync(first, "utf8");
    expect(a.trim().split("\n")).toHaveLength(3);
    expect(readFileSync(second, "utf8")).toBe(a);
  });

  it("import is idempotent: the second run skips every session", async () => {
    await seedMixed(t);
    const file = join(t.dir, "all.jsonl");
    const fresh = join(t.dir, "fresh.db");
    await t.run(["sessions", "export", file, "--db", t.db]);
    await t.run(["sessions", "import", file, "--db", fresh]);
    const again = await t.run(["sessions", "import", file, "--db", fresh, "--json"]);
    expect(again.code).toBe(0);
    expect(parseJson(again)).toEqual({ file, imported: 0, skipped: 3, errors: [] });
    const db = await openSessionDB(fresh);
    try {
      expect((await db.getStats()).totalSessions).toBe(3);
    } finally {
      await db.close();
    }
  });

  it("reports bad lines with their numbers, imports the rest, exits 1", async () => {
    await t.seed((db) => addSession(db, { id: "good_one", text: "fine" }));
    const file = join(t.dir, "mixed.jsonl");
    await t.run(["sessions", "export", file, "--db", t.db]);
    const good = readFileSync(file, "utf8").trim();
    writeFileSync(file, `${[good, "{not json", "", '{"format":"something-else"}'].join("\n")}\n`);
    const fresh = join(t.dir, "fresh.db");
    const result = await t.run(["sessions", "import", file, "--db", fresh]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("Imported 1 session, skipped 0 already present.\n");
    expect(result.stderr).toMatch(/^threadline: 2 bad lines were not imported:\n {2}line 2: .+\n {2}line 4: .+\n$/u);
    const json = await t.run(["sessions", "import", file, "--db", join(t.dir, "fresh2.db"), "--json"]);
    expect(json.code).toBe(1);
    const report = parseJson<{ imported: number; errors: Array<{ line: number; message: string }> }>(json);
    expect(report.imported).toBe(1);
    expect(report.errors.map((e) => e.line)).toEqual([2, 4]);
  });

  it("exports to stdout with '-' (summary on stderr) and imports from stdin with '-'", async () => {
    const [, b] = await seedMixed(t);
    const out = await t.run(["sessions", "export", "-", "--source", "telegram", "--db", t.db]);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ format: "threadline.session", version: 1, session: { id: b, source: "telegram" } });
    expect(out.stderr).toBe("Exported 1 session to stdout\n");
    const fresh = join(t.dir, "fresh.db");
    const imported = await t.run(["sessions", "import", "-", "--db", fresh, "--json"], { input: out.stdout });
    expect(parseJson(imported)).toEqual({ file: "-", imported: 1, skipped: 0, errors: [] });
  });

  it("--session-id takes an id prefix or a title; --json summarises", async () => {
    const [, b] = await seedMixed(t);
    const file = join(t.dir, "one.jsonl");
    const result = await t.run(["sessions", "export", file, "--session-id", "Groceries", "--json", "--db", t.db]);
    expect(parseJson(result)).toEqual({ exported: 1, file });
    expect(JSON.parse(readFileSync(file, "utf8")).session.id).toBe(b);
  });

  it("--session-id takes the rest of the line: a multi-word title needs no quotes", async () => {
    const id = await t.seed((db) => addSession(db, { text: "plans", title: "my project" }));
    await t.seed((db) => addSession(db, { text: "other", title: "my" }));
    const file = join(t.dir, "one.jsonl");
    const result = await t.run(["sessions", "export", file, "--session-id", "my", "project", "--json", "--db", t.db]);
    expect(result.stderr).toBe("");
    expect(parseJson(result)).toEqual({ exported: 1, file });
    expect(JSON.parse(readFileSync(file, "utf8")).session.id).toBe(id);
    // FILE after the title is taken as part of it: the error says where FILE goes.
    const late = await t.run(["sessions", "export", "--session-id", "my", "project", file, "--db", t.db]);
    expect(late.code).toBe(2);
    expect(late.stderr).toMatch(
      /^threadline: missing argument <file> for "threadline sessions export"\. --session-id takes the rest of the line \("my project .*one\.jsonl"\): put <file> before it\./u,
    );
    expect(late.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("a missing input file exits 3 with a clear message", async () => {
    const result = await t.run(["sessions", "import", join(t.dir, "nope.jsonl"), "--db", t.db]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/No such file: .*nope\.jsonl/u);
  });

  it("draws a progress bar on a terminal for a large export and import", async () => {
    await t.seed(async (db) => {
      for (let i = 0; i < 120; i++) await addSession(db, { text: `bulk ${i}` });
    });
    const file = join(t.dir, "bulk.jsonl");
    const exported = await t.runInTerminal(["sessions", "export", file, "--db", t.db]);
    expect(exported.code).toBe(0);
    expect(exported.output).toMatch(/Exporting .* 100% \| 120\/120/u);
    expect(exported.output).toContain(`Exported 120 sessions to ${file}`);
    const imported = await t.runInTerminal(["sessions", "import", file, "--db", join(t.dir, "bulk.db")]);
    expect(imported.code).toBe(0);
    expect(imported.output).toMatch(/Importing .* 100% \| 120\/120/u);
    expect(imported.output).toContain("Imported 120 sessions, skipped 0 already present.");
  });
});
