import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession, DAY } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** Two old ended sessions (cli, telegram), an old live one, a recent ended one. */
async function seedAges(home: TempHome): Promise<{ oldCli: string; oldTelegram: string; oldLive: string; recent: string }> {
  return home.seed(async (db) => ({
    oldCli: await addSession(db, { id: "old_cli", text: "old cli", ago: 120 * DAY, ended: true }),
    oldTelegram: await addSession(db, { id: "old_tg", text: "old telegram", source: "telegram", ago: 100 * DAY, ended: true }),
    oldLive: await addSession(db, { id: "old_live", text: "old but live", ago: 200 * DAY }),
    recent: await addSession(db, { id: "recent", text: "recent", ago: 10 * DAY, ended: true }),
  }));
}

const remaining = (home: TempHome): Promise<string[]> =>
  home.seed(async (db) => (await db.listSessions({ includeChildren: true, limit: 100 })).items.map((s) => s.id).sort());

interface PruneJson {
  dryRun: boolean;
  olderThanDays: number;
  sources: string[];
  sessions: Array<{ id: string }>;
  pruned: number;
  vacuumed: boolean;
  databaseBytesBefore: number | null;
  databaseBytesAfter: number | null;
  reclaimedBytes: number | null;
}

describe("threadline sessions prune", { timeout: 120_000 }, () => {
  it("--dry-run lists the ended sessions older than the cutoff and deletes nothing", async () => {
    await seedAges(t);
    const result = await t.run(["sessions", "prune", "--dry-run", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Would prune 2 ended sessions not active for 90 days:/u);
    expect(result.stdout).toContain("old_cli");
    expect(result.stdout).toContain("old_tg");
    expect(result.stdout).not.toContain("old_live");
    expect(result.stdout).not.toMatch(/\brecent\b/u);
    expect(result.stdout).toContain("Dry run: nothing was deleted.");
    expect(await remaining(t)).toHaveLength(4);
    const json = parseJson<PruneJson>(await t.run(["sessions", "prune", "--dry-run", "--older-than", "5", "--json", "--db", t.db]));
    expect(json).toMatchObject({ dryRun: true, olderThanDays: 5, pruned: 0, reclaimedBytes: null });
    expect(json.sessions.map((s) => s.id).sort()).toEqual(["old_cli", "old_tg", "recent"]);
  });

  it("asks first on a terminal: 'y' prunes and reports the space reclaimed", async () => {
    await seedAges(t);
    const prompt = "Prune 2 ended sessions not active for 90 days? [y/N]";
    const result = await t.runInTerminal(["sessions", "prune", "--db", t.db], { waitFor: prompt, answer: "y" });
    expect(result.code).toBe(0);
    expect(result.output).toContain("Pruned 2 session(s).");
    expect(result.output).toMatch(/Reclaimed \d+(\.\d)? (B|KiB|MiB) \(database .+ → .+\)\./u);
    expect(await remaining(t)).toEqual(["old_live", "recent"]);
  });

  it("on a terminal, lists what it will delete (count, oldest, newest, a sample) before asking", async () => {
    await seedAges(t);
    const prompt = "Prune 2 ended sessions not active for 90 days? [y/N]";
    const result = await t.runInTerminal(["sessions", "prune", "--db", t.db], { waitFor: prompt, answer: "n" });
    expect(result.code).toBe(0);
    const before = result.output.slice(0, result.output.indexOf(prompt));
    expect(before).toContain("2 ended sessions not active for 90 days will be deleted, with all their messages:");
    expect(before).toMatch(/Oldest: +old_cli, last active \d{4}-\d\d-\d\d/u);
    expect(before).toMatch(/Newest: +old_tg, last active \d{4}-\d\d-\d\d/u);
    // The sample: a table of the sessions, with their previews.
    expect(before).toMatch(/Preview\s+Last Active\s+Src\s+ID/u);
    expect(before).toContain("old cli");
    expect(before).toContain("old telegram");
    expect(before).not.toContain("old but live");
    expect(result.output).toContain("Cancelled; nothing was deleted.");
    expect(await remaining(t)).toHaveLength(4);
  });

  it("on a terminal, a large prune shows a sample of what goes and a progress bar while it deletes", async () => {
    const count = 130;
    await t.seed(async (db) => {
      for (let i = 0; i < count; i++)
        await addSession(db, { id: `old_${String(i).padStart(3, "0")}`, text: `old number ${i}`, ago: (100 + i) * DAY, ended: true });
      await addSession(db, { id: "keep_recent", text: "recent", ago: DAY, ended: true });
    });
    const prompt = `Prune ${count} ended sessions not active for 90 days? [y/N]`;
    const result = await t.runInTerminal(["sessions", "prune", "--db", t.db], { waitFor: prompt, answer: "y", timeoutMs: 120_000 });
    expect(result.code).toBe(0);
    const at = result.output.indexOf(prompt);
    const before = result.output.slice(0, at);
    const after = result.output.slice(at);
    expect(before).toMatch(/Oldest: +old_129,/u);
    expect(before).toMatch(/Newest: +old_000,/u);
    expect(before).toMatch(/A sample of 5 of the 130:/u);
    expect(before.split("\n").filter((l) => /\bold_\d{3}\s*$/u.test(l))).toHaveLength(5);
    // The bar is drawn on the terminal (stderr) while deleting, and reaches the end.
    expect(after).toMatch(/Pruning .*\| \d+\/130/u);
    expect(after).toMatch(/Pruning .*100% \| 130\/130/u);
    expect(after.indexOf("130/130")).toBeLessThan(after.indexOf(`Pruned ${count} session(s).`));
    expect(await remaining(t)).toEqual(["keep_recent"]);
  });

  it("asks first on a terminal: 'n' keeps everything", async () => {
    await seedAges(t);
    const result = await t.runInTerminal(["sessions", "prune", "--db", t.db], { waitFor: "[y/N]", answer: "n" });
    expect(result.code).toBe(0);
    expect(result.output).toContain("Cancelled; nothing was deleted.");
    expect(await remaining(t)).toHaveLength(4);
  });

  it("refuses without a terminal and without --yes (exit 4, no hang)", async () => {
    await seedAges(t);
    const result = await t.run(["sessions", "prune", "--db", t.db], { keepStdinOpen: true, timeoutMs: 30_000 });
    expect(result.code).toBe(4);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/Refusing to prune 2 session\(s\) without confirmation: stdin is not a terminal\. Pass --yes/u);
    expect(await remaining(t)).toHaveLength(4);
  });

  it("--yes prunes without asking; --source and --older-than narrow it; --json reports sizes", async () => {
    await seedAges(t);
    const telegramOnly = parseJson<PruneJson>(await t.run(["sessions", "prune", "--yes", "--source", "telegram", "--json", "--db", t.db]));
    expect(telegramOnly).toMatchObject({ dryRun: false, olderThanDays: 90, sources: ["telegram"], pruned: 1 });
    expect(telegramOnly.databaseBytesBefore).toBeGreaterThan(0);
    expect(telegramOnly.databaseBytesAfter).toBeGreaterThan(0);
    expect(telegramOnly.reclaimedBytes).toBe(Math.max(0, telegramOnly.databaseBytesBefore! - telegramOnly.databaseBytesAfter!));
    expect(await remaining(t)).toEqual(["old_cli", "old_live", "recent"]);
    const text = await t.run(["sessions", "prune", "--yes", "--older-than", "5", "--db", t.db]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Pruned 2 session\(s\)\.\nReclaimed /u);
    // Live sessions are never pruned, however old.
    expect(await remaining(t)).toEqual(["old_live"]);
    const nothing = await t.run(["sessions", "prune", "--db", t.db]);
    expect(nothing.code).toBe(0);
    expect(nothing.stdout).toBe("Nothing to prune: no ended sessions not active for 90 days.\n");
  });

  it("--vacuum rewrites the whole file after pruning, and on its own when nothing is left to prune", async () => {
    await seedAges(t);
    const json = parseJson<PruneJson>(await t.run(["sessions", "prune", "--yes", "--vacuum", "--json", "--db", t.db]));
    expect(json).toMatchObject({ dryRun: false, pruned: 2, vacuumed: true });
    expect(json.reclaimedBytes).toBe(Math.max(0, json.databaseBytesBefore! - json.databaseBytesAfter!));
    expect(await remaining(t)).toEqual(["old_live", "recent"]);
    const text = await t.run(["sessions", "prune", "--vacuum", "--db", t.db]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Nothing to prune: no ended sessions not active for 90 days\.\nVacuumed: reclaimed .+ \(database .+ → .+\)\.\n$/u);
    const plain = parseJson<PruneJson>(await t.run(["sessions", "prune", "--yes", "--older-than", "5", "--json", "--db", t.db]));
    expect(plain).toMatchObject({ pruned: 1, vacuumed: false });
    expect(await remaining(t)).toEqual(["old_live"]);
  });

  it("rejects a negative --older-than (exit 2)", async () => {
    const result = await t.run(["sessions", "prune", "--older-than", "-1", "--db", t.db]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--older-than must be a number of days ≥ 0/u);
  });
});
