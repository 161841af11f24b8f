/**
 * `threadline db backup` in process (runCli): the copy, its report, and every refusal (an
 * existing file without --force, a missing directory, the database itself, a directory, no
 * database, a file that is not Threadline's, a damaged database, a PostgreSQL URL).
 */
import Database from "better-sqlite3";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backupDatabase, InterruptedError, type BackupReport } from "../../../src/store/index.js";
import { SQLITE_SCHEMA_VERSION } from "../../../src/store/sqlite/index.js";
import { seedDatabase, zeroMiddleLeaf } from "../../support/damaged-sqlite.js";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** Files in the temp dir other than the database and its WAL files (a temp copy left behind would show here). */
function strayFiles(): string[] {
  return readdirSync(t.dir).filter((name) => !/^state\.db(-wal|-shm)?$/u.test(name) && name !== "home");
}

describe("threadline db backup", { timeout: 120_000 }, () => {
  it("writes one standalone, checked 0600 file and says what it holds, how big and how long", async () => {
    await seedDatabase(t.db, { sessions: 4, messages: 5 });
    await t.seed(async (db) => {
      await db.putMedia({ bytes: Buffer.alloc(3000, 7) }, { mimeType: "image/png" });
    });
    const file = join(t.dir, "backups", "state-1.db");
    mkdirSync(join(t.dir, "backups"));
    const text = await t.run(["db", "backup", file, "--db", t.db]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`Backed up ${t.db}.`);
    expect(text.stdout).toMatch(new RegExp(`^Backup\\s+${file.replaceAll("/", "\\/")} \\(\\d+\\.\\d KiB, mode 0600, one standalone file\\)$`, "mu"));
    expect(text.stdout).toMatch(/^Holds\s+4 session\(s\), 20 message\(s\), 1 attachment\(s\) \(2\.9 KiB\)$/mu);
    expect(text.stdout).toMatch(new RegExp(`^Checked\\s+integrity ok, schema version ${SQLITE_SCHEMA_VERSION}$`, "mu"));
    expect(text.stdout).toMatch(/^Took\s+\d+\.\d+ s$/mu);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Standalone: a rollback-journal file with nothing beside it.
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(readdirSync(join(t.dir, "backups"))).toEqual(["state-1.db"]);
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.pragma("journal_mode", { simple: true })).toBe("delete");
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(copy.prepare("SELECT count(*) FROM messages").pluck().get()).toBe(20);
    } finally {
      copy.close();
    }

    const json = parseJson<BackupReport>(await t.run(["db", "backup", join(t.dir, "state-2.db"), "--db", t.db, "--json"]));
    expect(json).toMatchObject({
      backend: "sqlite",
      source: t.db,
      path: join(t.dir, "state-2.db"),
      schemaVersion: SQLITE_SCHEMA_VERSION,
      sessions: 4,
      messages: 20,
      attachments: { count: 1, bytes: 3000 },
      restarts: 0,
      replaced: false,
    });
    expect(json.bytes).toBe(statSync(join(t.dir, "state-2.db")).size);
    expect(json.pages).toBeGreaterThan(0);
    expect(json.elapsedMs).toBeGreaterThanOrEqual(0);

    // The copy is a Threadline database: the other commands read it as they read the original.
    const listed = parseJson<{ items: Array<{ id: string; messageCount: number }> }>(await t.run(["sessions", "list", "--db", file, "--json"]));
    const original = parseJson<{ items: Array<{ id: string; messageCount: number }> }>(await t.run(["sessions", "list", "--db", t.db, "--json"]));
    expect(listed.items).toEqual(original.items);
  });

  it("takes the database from THREADLINE_DB, then the default file in THREADLINE_HOME, as other commands do", async () => {
    await seedDatabase(t.db, { sessions: 2, messages: 1 });
    const viaEnv = parseJson<BackupReport>(await t.run(["db", "backup", join(t.dir, "a.db"), "--json"], { env: { THREADLINE_DB: t.db } }));
    expect(viaEnv).toMatchObject({ source: t.db, sessions: 2 });
    const home = join(t.home, "state.db");
    mkdirSync(t.home, { recursive: true });
    await seedDatabase(home, { sessions: 3, messages: 1 });
    const viaHome = parseJson<BackupReport>(await t.run(["db", "backup", join(t.dir, "b.db"), "--json"]));
    expect(viaHome).toMatchObject({ source: home, sessions: 3 });
  });

  it("refuses an existing file without --force (exit 4, untouched); --force replaces it", async () => {
    await seedDatabase(t.db, { sessions: 2, messages: 2 });
    const file = join(t.dir, "backup.db");
    writeFileSync(file, "an older backup");
    const refused = await t.run(["db", "backup", file, "--db", t.db]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(`threadline: ${file} already exists; nothing was written. Pass --force to replace it, or name a new file.\n`);
    expect(readFileSync(file, "utf8")).toBe("an older backup");
    expect(strayFiles()).toEqual(["backup.db"]);

    // A -wal SQLite left beside a name would be replayed into the new copy: refused too, removed with --force.
    writeFileSync(join(t.dir, "other.db-wal"), "stale");
    const stale = await t.run(["db", "backup", join(t.dir, "other.db"), "--db", t.db]);
    expect(stale.code).toBe(4);
    expect(stale.stderr).toContain("other.db-wal (a file SQLite left beside it) exists");

    const forced = parseJson<BackupReport>(await t.run(["db", "backup", file, "--db", t.db, "--force", "--json"]));
    expect(forced).toMatchObject({ replaced: true, sessions: 2, messages: 4 });
    expect(readFileSync(file).subarray(0, 15).toString()).toBe("SQLite format 3");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const forcedOther = parseJson<BackupReport>(await t.run(["db", "backup", join(t.dir, "other.db"), "--db", t.db, "--force", "--json"]));
    expect(forcedOther.replaced).toBe(false);
    expect(existsSync(join(t.dir, "other.db-wal"))).toBe(false);
    expect(strayFiles().sort()).toEqual(["backup.db", "other.db"]);
  });

  it("a missing directory (exit 3) names it and what to do, and creates nothing", async () => {
    await seedDatabase(t.db, { sessions: 1, messages: 1 });
    const dir = join(t.dir, "no", "such");
    const result = await t.run(["db", "backup", join(dir, "b.db"), "--db", t.db]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`The directory ${dir} does not exist`);
    expect(result.stderr).toContain(`mkdir -p ${dir}`);
    expect(existsSync(join(t.dir, "no"))).toBe(false);
  });

  it("refuses the database itself and a directory (exit 2), and a missing database (exit 3)", async () => {
    await seedDatabase(t.db, { sessions: 1, messages: 1 });
    const before = readFileSync(t.db);
    const itself = await t.run(["db", "backup", t.db, "--db", t.db, "--force"]);
    expect(itself.code).toBe(2);
    expect(itself.stderr).toContain("is the database itself");
    expect(readFileSync(t.db).equals(before)).toBe(true);
    const dir = await t.run(["db", "backup", t.dir, "--db", t.db]);
    expect(dir.code).toBe(2);
    expect(dir.stderr).toContain(`${t.dir} is a directory; name the backup file itself`);
    const missing = await t.run(["db", "backup", join(t.dir, "b.db"), "--db", join(t.dir, "nope.db")]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`No database at ${join(t.dir, "nope.db")}, so there is nothing to back up`);
    expect(existsSync(join(t.dir, "nope.db"))).toBe(false);
    const usage = await t.run(["db", "backup", "--db", t.db]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('missing argument <file> for "threadline db backup"');
    expect(strayFiles()).toEqual([]);
  });

  it("refuses a SQLite file that is not a Threadline database (exit 2)", async () => {
    const other = new Database(t.db);
    other.exec("CREATE TABLE notes (x)");
    other.close();
    const result = await t.run(["db", "backup", join(t.dir, "b.db"), "--db", t.db]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("not a Threadline database");
    expect(strayFiles()).toEqual([]);
  });

  it("a damaged database fails the copy's integrity check (exit 1): no backup, no temp file left", async () => {
    await seedDatabase(t.db, { sessions: 6, messages: 40 });
    zeroMiddleLeaf(t.db, "messages");
    const file = join(t.dir, "b.db");
    const result = await t.run(["db", "backup", file, "--db", t.db]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("failed its integrity check");
    expect(result.stderr).toContain(`threadline doctor --db ${t.db}`);
    expect(existsSync(file)).toBe(false);
    expect(strayFiles()).toEqual([]);
  });

  it("a PostgreSQL target: exit 2 with the pg_dump command (database, schema, file), the password left out", async () => {
    const file = join(t.dir, "tl.dump");
    const result = await t.run(["db", "backup", file, "--db", "postgres://tl:s3cret-pw@db.internal:5433/threadline?schema=gateway&sslmode=require"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("is a PostgreSQL database, which pg_dump backs up while the gateway runs");
    expect(result.stderr).toContain(`  pg_dump --format=custom --schema=gateway --file=${file} 'postgres://tl@db.internal:5433/threadline?sslmode=require'\n`);
    expect(result.stderr).toContain("PGPASSWORD or ~/.pgpass");
    expect(result.stderr).not.toContain("s3cret");
    expect(existsSync(file)).toBe(false);
    const plain = await t.run(["db", "backup", file, "--db", "postgresql://127.0.0.1/test"]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(`pg_dump --format=custom --schema=public --file=${file} postgresql://127.0.0.1/test`);
  });

  it("an interrupted backup (Ctrl-C: its abort signal) removes its partial copy and writes nothing", async () => {
    await seedDatabase(t.db, { sessions: 6, messages: 20 });
    const file = join(t.dir, "b.db");
    const stop = new AbortController();
    let steps = 0;
    const error = await backupDatabase(t.db, file, {
      pagesPerStep: 2,
      signal: stop.signal,
      onProgress: (copied) => {
        steps++;
        // Mid-copy: the temp file is there, with part of the database in it.
        if (copied >= 4 && !stop.signal.aborted) {
          expect(strayFiles().filter((name) => /^\.b\.db\.tmp-\d+-[0-9a-f]{8}$/u.test(name))).toHaveLength(1);
          stop.abort();
        }
      },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as Error).message).toBe(`The backup was interrupted; nothing was written to ${file} (the partial copy was removed).`);
    expect(steps).toBeGreaterThan(2);
    expect(strayFiles()).toEqual([]);
    // An aborted signal before the start: nothing is even opened.
    const early = await backupDatabase(t.db, file, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(early).toBeInstanceOf(InterruptedError);
    expect(strayFiles()).toEqual([]);
  });
});
