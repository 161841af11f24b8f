import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, type TempHome } from "../sessions/cli-harness.js";
import { seedDatabase, truncateFile, zeroMiddleLeaf } from "../../support/damaged-sqlite.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** The one message every command prints for a damaged file. */
function expectCorruptMessage(result: { code: number | null; stdout: string; stderr: string }, db: string): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^threadline: The database file .* is damaged/u);
  expect(lines[0]).toContain(db);
  expect(lines[0]).toContain(`threadline doctor --repair --db ${db}`);
}

describe("a damaged database file gets one clear message from every command", { timeout: 180_000 }, () => {
  it("zeroed page in the sessions table: list, show, search, stats and export all say the same", async () => {
    await seedDatabase(t.db, { sessions: 120, messages: 2 });
    const { ids } = zeroMiddleLeaf(t.db, "sessions");
    const commands = [
      ["sessions", "list", "--all"],
      ["sessions", "show", ids[0]!],
      ["sessions", "search", "deployment", "--limit", "100"],
      ["sessions", "stats"],
      ["sessions", "export", `${t.dir}/out.jsonl`],
    ];
    for (const args of commands) {
      expectCorruptMessage(await t.run([...args, "--db", t.db]), t.db);
    }
  });

  it("zeroed page in the messages table: show of an affected session says it too", async () => {
    const seeded = await seedDatabase(t.db);
    const { rowids } = zeroMiddleLeaf(t.db, "messages");
    const victim = seeded.sessionIds.find((id) => seeded.messageIds.get(id)!.includes(rowids[0]!))!;
    expectCorruptMessage(await t.run(["sessions", "show", victim, "--db", t.db]), t.db);
  });

  it("a truncated file: every command says it at open", async () => {
    await seedDatabase(t.db);
    truncateFile(t.db, 0.5);
    for (const args of [
      ["sessions", "list"],
      ["sessions", "stats"],
      ["sessions", "search", "deployment"],
    ]) {
      expectCorruptMessage(await t.run([...args, "--db", t.db]), t.db);
    }
  });
});
