/**
 * `threadline doctor` on real files damaged on purpose (zeroed pages in the messages table,
 * in the full-text index, in the sessions table, a truncated file), run in process; the other
 * process that holds the file open is a real one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB, type RepairReport, type SqliteDoctorReport } from "../../../src/index.js";
import { SQLITE_SCHEMA_VERSION } from "../../../src/store/sqlite/index.js";
import { pagesOf, seedDatabase, truncateFile, zeroMiddleLeaf } from "../../support/damaged-sqlite.js";
import { NODE_WITH_TSX } from "../cli-run.js";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";

let t: TempHome;
let holder: ChildProcess | null = null;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => {
  holder?.kill("SIGKILL");
  holder = null;
  t.cleanup();
});

/** The backups a repair left beside the database. */
function backups(): string[] {
  return readdirSync(t.dir).filter((name) => name.startsWith("state.db.damaged-"));
}

/** Every message id the store can read now, per session (opened through the public API). */
async function storedMessageIds(): Promise<Map<string, number[]>> {
  const db = await openSessionDB(t.db);
  try {
    const out = new Map<string, number[]>();
    for (const s of (await db.listSessions({ limit: 1000, includeChildren: true })).items) {
      out.set(
        s.id,
        (await db.getMessages(s.id)).map((m) => m.id),
      );
    }
    return out;
  } finally {
    await db.close();
  }
}

describe("threadline doctor", { timeout: 240_000 }, () => {
  it("a healthy file: exit 0, every check ok, schema, WAL and free space reported", async () => {
    await seedDatabase(t.db, { sessions: 3, messages: 4 });
    const text = await t.run(["doctor", "--db", t.db]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^Integrity\s+ok$/mu);
    expect(text.stdout).toMatch(/^Search index\s+ok, indexed up to message 12 of 12$/mu);
    expect(text.stdout).toMatch(new RegExp(`^Schema\\s+version ${SQLITE_SCHEMA_VERSION} \\(this Threadline: ${SQLITE_SCHEMA_VERSION}\\)$`, "mu"));
    expect(text.stdout).toMatch(/^WAL\s+wal mode, -wal /mu);
    expect(text.stdout).toMatch(/^Free space\s+\d+ free page\(s\) .* free on the disk$/mu);
    expect(text.stdout).toMatch(/^Healthy\.$/mu);
    const json = parseJson<SqliteDoctorReport>(await t.run(["doctor", "--json", "--db", t.db]));
    expect(json).toMatchObject({
      backend: "sqlite",
      location: t.db,
      healthy: true,
      problems: [],
      schemaVersion: SQLITE_SCHEMA_VERSION,
      integrity: { ok: true, findings: [] },
    });
    expect(json.searchIndex).toMatchObject({ ok: true, indexedUpTo: 12, newestMessageId: 12 });
    expect(json.wal.journalMode).toBe("wal");
    expect(json.space.diskFreeBytes).toBeGreaterThan(0);
    expect(json.space.freelistPages).toBeGreaterThanOrEqual(0);
    const repair = await t.run(["doctor", "--repair", "--db", t.db]);
    expect(repair.code).toBe(0);
    expect(repair.stdout).toContain("Healthy: nothing to repair.");
    expect(backups()).toEqual([]);
  });

  it("zeroed page in the messages table: found (exit 1), repaired with exactly the lost messages reported", async () => {
    const seeded = await seedDatabase(t.db);
    const { rowids: lost } = zeroMiddleLeaf(t.db, "messages");
    expect(lost.length).toBeGreaterThan(0);

    const check = await t.run(["doctor", "--db", t.db]);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/^Integrity\s+DAMAGED/mu);
    expect(check.stdout).toContain("table messages");
    expect(check.stdout).toContain(`threadline doctor --repair --db ${t.db}`);

    const result = await t.run(["doctor", "--repair", "--json", "--db", t.db]);
    expect(result.code, result.stderr).toBe(0);
    const { diagnosis, repair } = parseJson<{ diagnosis: SqliteDoctorReport; repair: RepairReport }>(result);
    expect(diagnosis.healthy).toBe(false);
    expect(repair.copied.sessions).toBe(seeded.sessionIds.length);
    expect(repair.copied.messages).toBe(seeded.allMessageIds.length - lost.length);
    expect(repair.lostMessages.flatMap((m) => m.messageIds).sort((a, b) => a - b)).toEqual(lost);
    for (const { sessionId, messageIds } of repair.lostMessages) {
      for (const id of messageIds) expect(seeded.messageIds.get(sessionId)).toContain(id);
    }
    expect(repair.unreadable).toEqual([{ table: "messages", afterRowid: lost[0]! - 1, beforeRowid: lost.at(-1)! + 1 }]);
    expect(repair.lostSessionIds).toEqual([]);
    expect(repair.indexed).toBe(repair.copied.messages);
    expect(repair.backup).toMatch(/state\.db\.damaged-\d{8}T\d{6}Z$/u);
    expect(backups()).toHaveLength(1);

    // The fresh file is healthy and holds every readable message, in its session.
    expect((await t.run(["doctor", "--db", t.db])).code).toBe(0);
    const stored = await storedMessageIds();
    for (const id of seeded.sessionIds) {
      expect(stored.get(id)).toEqual(seeded.messageIds.get(id)!.filter((m) => !lost.includes(m)));
    }
    const show = await t.run(["sessions", "list", "--json", "--db", t.db]);
    expect(show.code).toBe(0);
    const victim = repair.lostMessages[0]!.sessionId;
    const listed = parseJson<{ sessions: Array<{ id: string; messageCount: number }> }>(show).sessions.find((s) => s.id === victim);
    if (listed !== undefined) expect(listed.messageCount).toBe(stored.get(victim)!.length);
    const search = await t.run(["sessions", "search", "deployment", "--json", "--limit", "5", "--db", t.db]);
    expect(search.code, search.stderr).toBe(0);

    // The text report names the same.
    const again = backups()[0]!;
    expect(readFileSync(`${t.dir}/${again}`).length).toBeGreaterThan(0);
  });

  it("zeroed page in the full-text index: the index is reported damaged, the repair loses nothing and search works again", async () => {
    const seeded = await seedDatabase(t.db);
    expect(pagesOf(t.db, "messages_fts_data").filter((p) => p.pagetype === "leaf").length).toBeGreaterThanOrEqual(3);
    zeroMiddleLeaf(t.db, "messages_fts_data", { rowids: false });

    const check = parseJson<SqliteDoctorReport>(await t.run(["doctor", "--json", "--db", t.db]));
    expect(check.healthy).toBe(false);
    expect(check.searchIndex.ok).toBe(false);
    expect((await t.run(["doctor", "--db", t.db])).code).toBe(1);

    const text = await t.run(["doctor", "--repair", "--db", t.db]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^Copied\\s+${seeded.sessionIds.length} session\\(s\\), ${seeded.allMessageIds.length} message\\(s\\)`, "mu"));
    expect(text.stdout).toMatch(/^Lost\s+nothing: every row was read$/mu);
    expect(text.stdout).toMatch(/^Backup\s+.*state\.db\.damaged-/mu);
    expect((await t.run(["doctor", "--db", t.db])).code).toBe(0);
    const after = parseJson<{ totalHits: number }>(await t.run(["sessions", "search", "staging", "--json", "--limit", "100", "--db", t.db]));
    expect(after.totalHits).toBe(100);
  });

  it("zeroed page in the sessions table: lost sessions named, their readable messages kept under recreated sessions", async () => {
    const seeded = await seedDatabase(t.db, { sessions: 120, messages: 2 });
    const { ids: lostIds } = zeroMiddleLeaf(t.db, "sessions");
    const result = await t.run(["doctor", "--repair", "--json", "--db", t.db]);
    expect(result.code, result.stderr).toBe(0);
    const { repair } = parseJson<{ repair: RepairReport }>(result);
    expect(repair.lostSessionIds).toEqual([...lostIds].sort());
    expect(repair.recreatedSessionIds.sort()).toEqual([...lostIds].sort());
    expect(repair.copied.sessions).toBe(seeded.sessionIds.length - lostIds.length);
    expect(repair.copied.messages).toBe(seeded.allMessageIds.length);
    const stored = await storedMessageIds();
    expect(stored.size).toBe(seeded.sessionIds.length);
    for (const id of lostIds) expect(stored.get(id)).toEqual(seeded.messageIds.get(id));
  });

  it("a truncated file: found, and repaired into a file that opens, with the unreadable rest reported", async () => {
    const seeded = await seedDatabase(t.db);
    truncateFile(t.db, 0.5);
    const check = await t.run(["doctor", "--db", t.db]);
    expect(check.code).toBe(1);
    const result = await t.run(["doctor", "--repair", "--json", "--db", t.db]);
    expect(result.code, result.stderr).toBe(0);
    const { repair } = parseJson<{ repair: RepairReport }>(result);
    expect(repair.copied.messages).toBeLessThan(seeded.allMessageIds.length);
    expect(repair.unreadable.length + repair.unreadableTables.length).toBeGreaterThan(0);
    expect((await t.run(["doctor", "--db", t.db])).code).toBe(0);
    const stored = await storedMessageIds();
    const total = [...stored.values()].reduce((n, ids) => n + ids.length, 0);
    expect(total).toBe(repair.copied.messages);
    const text = await t.run(["doctor", "--repair", "--db", t.db]);
    expect(text.stdout).toContain("Healthy: nothing to repair.");
  });

  it("refuses to repair while another process has the database open (exit 4), and changes nothing", async () => {
    await seedDatabase(t.db);
    zeroMiddleLeaf(t.db, "messages");
    const script = `import { openSessionDB } from ${JSON.stringify(new URL("../../../src/index.ts", import.meta.url).href)};
      const db = await openSessionDB(${JSON.stringify(t.db)});
      await db.getStats().catch(() => {});
      process.stdout.write("ready\\n");
      process.stdin.on("data", () => {}).on("end", async () => { await db.close(); process.exit(0); });`;
    // The current source through tsx (as the CLI's child-process tests run it).
    holder = spawn(NODE_WITH_TSX[0]!, [...NODE_WITH_TSX.slice(1), "--input-type=module", "-e", script], { stdio: ["pipe", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      holder!.stdout!.setEncoding("utf8").on("data", (d: string) => d.includes("ready") && resolve());
      holder!.on("exit", (code) => reject(new Error(`holder exited ${code}`)));
    });
    const result = await t.run(["doctor", "--repair", "--db", t.db]);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/^threadline: Another process has .*state\.db open .* Stop it, then run the repair again\.\n$/u);
    expect(backups()).toEqual([]);
    expect(readdirSync(t.dir).filter((n) => n.includes(".repair-"))).toEqual([]);
    expect(existsSync(t.db)).toBe(true);
  });

  it("a check while another process holds the write lock: the index check is skipped (not damage), the rest runs", async () => {
    await seedDatabase(t.db, { sessions: 2, messages: 2 });
    const script = `const Database = require(${JSON.stringify(new URL("../../../node_modules/better-sqlite3/lib/index.js", import.meta.url).pathname)});
      const db = new Database(${JSON.stringify(t.db)});
      db.exec("BEGIN IMMEDIATE");
      process.stdout.write("ready\\n");
      process.stdin.on("data", () => {}).on("end", () => { db.exec("ROLLBACK"); db.close(); process.exit(0); });`;
    holder = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      holder!.stdout!.setEncoding("utf8").on("data", (d: string) => d.includes("ready") && resolve());
      holder!.on("exit", (code) => reject(new Error(`holder exited ${code}`)));
    });
    const result = await t.run(["doctor", "--json", "--db", t.db]);
    expect(result.code, result.stderr).toBe(0);
    const report = parseJson<SqliteDoctorReport>(result);
    expect(report).toMatchObject({ healthy: true, integrity: { ok: true } });
    expect(report.searchIndex.ok).toBeNull();
    expect(report.searchIndex.finding).toContain("another process held the write lock");
  });

  it("no such file: exit 3", async () => {
    const result = await t.run(["doctor", "--db", `${t.dir}/missing.db`]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^threadline: There is no database file at .*missing\.db/u);
  });
});
