import { cpSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Executions } from "../../../src/executions/index.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";

const FIXTURES = fileURLToPath(new URL("../../executions/fixtures/", import.meta.url));

interface Report {
  from: string;
  dir: string;
  imported: string[];
  skipped: Array<{ file: string; reason: string; alreadyPresent: boolean }>;
}

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

describe("threadline sessions import --from aurite", () => {
  it("imports an Aurite cache directory through the execution importer, once", async () => {
    const dir = join(FIXTURES, "aurite-cache");
    const first = await t.run(["sessions", "import", "--from", "aurite", dir, "--db", t.db, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const report = parseJson<Report>(first);
    expect(report.from).toBe("aurite");
    expect(report.skipped).toEqual([]);
    const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
    expect(report.imported.length).toBeGreaterThanOrEqual(files.length);
    await t.seed(async (db) => {
      const ex = new Executions(db);
      for (const id of report.imported) expect(await ex.getSession(id), id).not.toBeNull();
    });
    const again = await t.run(["sessions", "import", "--from", "aurite", dir, "--db", t.db]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`Imported 0 execution sessions from ${dir}; ${files.length} already present.\n`);
  });

  it("names every bad file on stderr and exits 1; the good files are imported", async () => {
    const dir = join(t.dir, "history");
    cpSync(join(FIXTURES, "history"), dir, { recursive: true });
    const result = await t.run(["sessions", "import", "--from", "aurite", dir, "--db", t.db]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Imported 6 execution sessions from .*history; 0 already present\.\n$/u);
    expect(result.stderr).toMatch(/^threadline: 5 files were not imported:\n {2}bad-time\.json: .*created_at/u);
    for (const file of ["broken.json", "missing-id.json", "robot.json", "zz-duplicate.json"]) expect(result.stderr).toContain(`  ${file}: `);
    const json = parseJson<Report>(await t.run(["sessions", "import", "--from", "aurite", dir, "--db", t.db, "--json"]));
    expect(json.imported).toEqual([]);
    expect(
      json.skipped
        .filter((s) => s.alreadyPresent)
        .map((s) => s.file)
        .sort(),
    ).toEqual([
      "agent-1a2b3c4d.json",
      "agent-legacy.json",
      "agent-nightly.json",
      "workflow-nightly-0.json",
      "workflow-nightly-1.json",
      "workflow-nightly.json",
    ]);
    expect(json.skipped.filter((s) => !s.alreadyPresent).map((s) => s.file)).toEqual([
      "bad-time.json",
      "broken.json",
      "missing-id.json",
      "robot.json",
      "zz-duplicate.json",
    ]);
  });

  it("refuses options that belong to another format, and an unknown format", async () => {
    const dir = join(FIXTURES, "aurite-cache");
    const dry = await t.run(["sessions", "import", "--from", "aurite", dir, "--dry-run", "--db", t.db]);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toBe("threadline: --dry-run works with --from hermes only (not --from aurite).\n");
    const user = await t.run(["sessions", "import", "x.jsonl", "--user", "u1", "--db", t.db]);
    expect(user.code).toBe(2);
    expect(user.stderr).toBe("threadline: --user works with --from aurite only (not --from jsonl).\n");
    const bogus = await t.run(["sessions", "import", "--from", "langchain", dir, "--db", t.db]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/option "--from <format>" argument "langchain" is invalid\. Allowed choices are jsonl, hermes, aurite\./u);
    const missing = await t.run(["sessions", "import", "--from", "aurite", join(t.dir, "nope"), "--db", t.db]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/No directory at .*nope/u);
  });

  it("--user owns what it imports", async () => {
    const dir = join(FIXTURES, "aurite-cache");
    const report = parseJson<Report>(await t.run(["sessions", "import", "--from", "aurite", dir, "--user", "alice", "--db", t.db, "--json"]));
    await t.seed(async (db) => {
      const ex = new Executions(db);
      for (const id of report.imported) expect((await ex.getSession(id, { userId: "alice" }))?.id, id).toBe(id);
      await expect(ex.getSession(report.imported[0]!, { userId: "bob" })).rejects.toThrow(/not found/u);
    });
  });
});
