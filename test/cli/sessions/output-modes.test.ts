import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ANSI, makeTempHome, type TempHome } from "./cli-harness.js";
import { addSession, addToolSession, DAY } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

async function seed(home: TempHome): Promise<{ tools: string; victim: string; named: string }> {
  return home.seed(async (db) => ({
    tools: await addToolSession(db),
    victim: await addSession(db, { id: "victim_1", text: "delete me" }),
    named: await addSession(db, { id: "named_1", text: "rename me", ended: true, ago: 200 * DAY }),
  }));
}

describe("threadline sessions: --json and NO_COLOR", { timeout: 120_000 }, () => {
  it("every subcommand prints parseable JSON on stdout with --json", async () => {
    const { tools } = await seed(t);
    const file = join(t.dir, "x.jsonl");
    const commands: string[][] = [
      ["list"],
      ["show", tools],
      ["search", "deploy*"],
      ["export", file],
      ["import", file],
      ["rename", "named_1", "A", "title"],
      ["delete", "victim_1", "--yes"],
      ["prune", "--dry-run"],
      ["prune", "--yes"],
      ["stats"],
    ];
    for (const args of commands) {
      const result = await t.run(["sessions", ...args, "--json", "--db", t.db]);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(() => JSON.parse(result.stdout), `sessions ${args.join(" ")} --json`).not.toThrow();
      expect(typeof JSON.parse(result.stdout)).toBe("object");
    }
  });

  it("colours with FORCE_COLOR, and NO_COLOR wins: no ANSI at all", async () => {
    const { tools } = await seed(t);
    const commands: string[][] = [["list"], ["show", tools], ["search", "deploy*"], ["stats"], ["prune", "--dry-run"]];
    const coloured = await t.run(["sessions", "list", "--db", t.db], { env: { NO_COLOR: undefined, FORCE_COLOR: "1" } });
    expect(coloured.stdout).toMatch(ANSI);
    for (const args of commands) {
      const result = await t.run(["sessions", ...args, "--db", t.db], { env: { NO_COLOR: "1", FORCE_COLOR: "1" } });
      expect(result.code).toBe(0);
      expect(result.stdout, `sessions ${args.join(" ")}`).not.toMatch(ANSI);
      expect(result.stderr).not.toMatch(ANSI);
    }
  });

  it("errors go to stderr with a non-zero exit, even with --json", async () => {
    const result = await t.run(["sessions", "show", "nope", "--json", "--db", t.db]);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^threadline: /u);
    const usage = await t.run(["sessions", "show", "--db", t.db]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      'threadline: missing argument <session> for "threadline sessions show". Usage: threadline sessions show [options] <session...>\n',
    );
  });
});
