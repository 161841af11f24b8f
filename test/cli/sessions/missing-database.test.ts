import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { makeTempHome, type TempHome } from "./cli-harness.js";
import { addSession } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

const READING: Array<[string, string[]]> = [
  ["list", ["sessions", "list"]],
  ["show", ["sessions", "show", "abc"]],
  ["search", ["sessions", "search", "deploy"]],
  ["export", ["sessions", "export", "-"]],
  ["stats", ["sessions", "stats"]],
  ["browse", ["sessions", "browse"]],
  ["rename", ["sessions", "rename", "abc", "new title"]],
  ["delete", ["sessions", "delete", "abc", "--yes"]],
  ["prune", ["sessions", "prune", "--yes"]],
];

describe("a database that does not exist", { timeout: 120_000 }, () => {
  it.each(READING)("sessions %s refuses it (exit 3, naming the path) and creates nothing", async (_name, args) => {
    const typo = join(t.dir, "typo", "dir", "state.db");
    const result = await t.run([...args, "--db", typo]);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^threadline: No database at /u);
    expect(result.stderr).toContain(typo);
    expect(existsSync(join(t.dir, "typo"))).toBe(false);
  });

  it("THREADLINE_DB naming a missing file is refused the same way", async () => {
    const typo = join(t.dir, "nothere.db");
    const result = await t.run(["sessions", "list"], { env: { THREADLINE_DB: typo } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(typo);
    expect(existsSync(typo)).toBe(false);
  });

  it("the default database missing is a first run: no sessions yet (exit 0), creates nothing (first-run.test.ts has every command)", async () => {
    const result = await t.run(["sessions", "list"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("No sessions yet.\n");
    expect(existsSync(join(t.home, "state.db"))).toBe(false);
    expect(existsSync(t.home)).toBe(false);
  });

  it("an existing empty database still reads as empty; import creates a missing one", async () => {
    const empty = join(t.dir, "empty.db");
    await (await openSessionDB(empty)).close();
    const list = await t.run(["sessions", "list", "--db", empty]);
    expect(list.code).toBe(0);
    expect(list.stdout).toBe("No sessions yet.\n");
    const source = await t.seed((db) => addSession(db, { text: "carried over", id: "moved_1" }));
    expect(source).toBe("moved_1");
    const exported = await t.run(["sessions", "export", "-", "--db", t.db]);
    const fresh = join(t.dir, "new", "dir", "state.db");
    const imported = await t.run(["sessions", "import", "-", "--db", fresh], { input: exported.stdout });
    expect(imported.code).toBe(0);
    expect(existsSync(fresh)).toBe(true);
    expect((await t.run(["sessions", "list", "--db", fresh])).stdout).toContain("carried over");
  });
});
