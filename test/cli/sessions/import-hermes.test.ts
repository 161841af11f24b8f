import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { waitFor } from "../../support/wait-for.js";
import { builtCli } from "../cli-run.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addHermesSessions, copyFixture, editHermesFile, expectFixtureImported, fingerprint, readExpected, type Expected } from "./hermes-files.js";

interface Report {
  from: string;
  dryRun: boolean;
  interrupted: boolean;
  inFile: { sessions: number; messages: number; activeMessages: number };
  imported: { sessions: number; messages: number; rewound: number };
  present: number;
  failed: number;
  skippedMessages: number;
  orphanMessages: Array<{ hermesSessionId: string; messages: number }>;
  sessions: Array<{
    hermesId: string;
    id: string;
    action: string;
    title: string | null;
    parentId: string | null;
    messages: number;
    rewound: number;
    notes: string[];
    skippedMessages: Array<{ hermesMessageId: number; reason: string }>;
    error?: string;
  }>;
}

let t: TempHome;
let expected: Expected;

beforeEach(() => {
  t = makeTempHome();
  expected = readExpected();
});
afterEach(() => t.cleanup());

describe("threadline sessions import --from hermes", { timeout: 120_000 }, () => {
  it("imports every session, message (all and active), title and parent link the fixture lists, and never writes the hermes file", async () => {
    const file = copyFixture(t.dir);
    const before = fingerprint(file);
    const listing = readdirSync(t.dir).sort();
    const result = await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const report = parseJson<Report>(result);
    expect(report).toMatchObject({
      from: "hermes",
      dryRun: false,
      interrupted: false,
      inFile: { sessions: expected.totals.sessions, messages: expected.totals.messages, activeMessages: expected.totals.active_messages },
      imported: {
        sessions: expected.totals.sessions,
        messages: expected.totals.messages,
        rewound: expected.totals.messages - expected.totals.active_messages,
      },
      present: 0,
      failed: 0,
      skippedMessages: 0,
      orphanMessages: [],
    });
    // Parents before children.
    const order = report.sessions.map((s) => s.id);
    for (const s of expected.sessions) {
      if (s.parent_session_id !== null) expect(order.indexOf(s.parent_session_id)).toBeLessThan(order.indexOf(s.id));
    }
    await t.seed((db) => expectFixtureImported(db, expected, file));
    expect(fingerprint(file)).toEqual(before);
    // Nothing was created beside the hermes file but the target database.
    expect(
      readdirSync(t.dir)
        .filter((n) => !n.startsWith("state.db"))
        .sort(),
    ).toEqual(listing.filter((n) => !n.startsWith("state.db")));
  });

  it("is idempotent: a second import imports nothing and changes nothing", async () => {
    const file = copyFixture(t.dir);
    expect((await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db])).code).toBe(0);
    const again = await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`Imported 0 sessions (0 messages, 0 of them rewound) from ${file}; skipped ${expected.totals.sessions} already present.\n`);
    await t.seed((db) => expectFixtureImported(db, expected, file));
  });

  it("--dry-run says what would be imported, per session in --json, and writes nothing (not even a new database)", async () => {
    const file = copyFixture(t.dir);
    const text = await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db, "--dry-run"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      `Dry run: would import ${expected.totals.sessions} sessions (${expected.totals.messages} messages, ${expected.totals.messages - expected.totals.active_messages} of them rewound) from ${file}; 0 already present. Nothing was written.\n`,
    );
    const report = parseJson<Report>(await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db, "--dry-run", "--json"]));
    expect(existsSync(t.db)).toBe(false);
    expect(report.dryRun).toBe(true);
    expect(report.sessions).toHaveLength(expected.totals.sessions);
    for (const want of expected.sessions) {
      expect(
        report.sessions.find((s) => s.id === want.id),
        want.id,
      ).toMatchObject({
        action: "would-import",
        title: want.title,
        parentId: want.parent_session_id,
        messages: want.all_messages,
        rewound: want.all_messages - want.active_messages,
      });
    }
    // Against a database that has them all: everything is present.
    expect((await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db])).code).toBe(0);
    const after = parseJson<Report>(await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db, "--dry-run", "--json"]));
    expect(after).toMatchObject({ present: expected.totals.sessions, imported: { sessions: 0 } });
    expect(new Set(after.sessions.map((s) => s.action))).toEqual(new Set(["present"]));
  });

  it("gives a title another session already holds its collision form (t (2), not a lineage number) and says so", async () => {
    const file = copyFixture(t.dir);
    const titled = expected.sessions.find((s) => s.title !== null && !/ #\d+$/u.test(s.title))!;
    await t.seed((db) => db.createSession({ id: "20200101_000000_aaaaaaaa", source: "cli", title: titled.title }));
    const result = await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Imported ${expected.totals.sessions} sessions`);
    expect(result.stdout).toContain(`${titled.id}: the title "${titled.title}" is taken in this database; imported as "${titled.title} (`);
    await t.seed(async (db) => {
      expect(await db.getTitle("20200101_000000_aaaaaaaa")).toBe(titled.title);
      const titles: string[] = [];
      for (const s of expected.sessions) {
        const title = await db.getTitle(s.id);
        if (s.title === null) expect(title).toBeNull();
        else titles.push(title!);
      }
      expect(titles).toHaveLength(expected.totals.titled);
      expect(new Set(titles).size).toBe(titles.length);
      expect(titles).not.toContain(titled.title);
    });
  });

  it("reports what it cannot import (an unknown role, a missing parent, messages without a session) and imports the rest", async () => {
    const file = copyFixture(t.dir);
    const host = expected.sessions.find((s) => s.parent_session_id === null && s.all_messages > 0)!;
    let odd = 0;
    editHermesFile(file, (db) => {
      odd = Number(
        db.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'session_meta', '{}', ?)").run(host.id, host.started_at + 5)
          .lastInsertRowid,
      );
      db.prepare(
        "INSERT INTO sessions (id, source, parent_session_id, started_at) VALUES ('20270202_000000_0000beef', 'cli', '20200101_000000_deadbeef', 1800000000)",
      ).run();
      db.prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20270303_000000_00000000', 'user', 'lost', 1800000000)").run();
    });
    const before = fingerprint(file);
    const result = await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`Imported ${expected.totals.sessions + 1} sessions`);
    expect(result.stdout).toContain("20270202_000000_0000beef: its parent 20200101_000000_deadbeef is not in the file; imported without a parent link");
    expect(result.stderr).toContain(`threadline: Not imported:\n  session ${host.id}, message ${odd}: message ${odd}.role "session_meta" is not a known role`);
    expect(result.stderr).toContain("  1 message of session 20270303_000000_00000000, which is not in the file's sessions table");
    expect(fingerprint(file)).toEqual(before);
    await t.seed(async (db) => {
      expect(await db.getMessages(host.id, { includeRewound: true })).toHaveLength(host.all_messages);
      expect((await db.getSession("20270202_000000_0000beef"))?.parentSessionId).toBeNull();
    });
    // JSON has the same, in fields.
    const again = parseJson<Report>(await t.run(["sessions", "import", "--from", "hermes", file, "--db", join(t.dir, "other.db"), "--json"]));
    expect(again.skippedMessages).toBe(1);
    expect(again.orphanMessages).toEqual([{ hermesSessionId: "20270303_000000_00000000", messages: 1 }]);
    expect(again.sessions.find((s) => s.id === host.id)?.skippedMessages).toEqual([
      { hermesMessageId: odd, reason: `message ${odd}.role "session_meta" is not a known role; use one of system, developer, user, assistant, tool.` },
    ]);
  });

  it("refuses what is not a hermes-agent state.db with what was wrong and what to do, creating and changing nothing", async () => {
    const text = join(t.dir, "notes.txt");
    writeFileSync(text, "hello\n".repeat(200));
    const empty = join(t.dir, "empty.sqlite");
    editHermesFile(empty, (db) => db.exec("CREATE TABLE other (x)"));
    const threadline = join(t.dir, "threadline.sqlite");
    const store = await openSessionDB(threadline);
    await store.createSession({ source: "cli" });
    await store.close();
    const cases: Array<[string, number, RegExp]> = [
      [text, 2, /notes\.txt is not a SQLite database .* Name the state\.db of hermes-agent \(by default ~\/\.hermes\/state\.db/u],
      [empty, 2, /empty\.sqlite is a SQLite database but not a hermes-agent state\.db: it has no sessions or messages table\. Name the state\.db/u],
      [
        threadline,
        2,
        /threadline\.sqlite is a Threadline database, not a hermes-agent one\. To copy sessions between Threadline databases, "threadline sessions export"/u,
      ],
      [join(t.dir, "missing.db"), 3, /No file at .*missing\.db\. Name the state\.db/u],
      [t.dir, 2, /is a directory; name the database file itself/u],
    ];
    for (const [path, code, message] of cases) {
      const before = existsSync(path) && path !== t.dir ? fingerprint(path) : null;
      const result = await t.run(["sessions", "import", "--from", "hermes", path, "--db", t.db]);
      expect(result.code, path).toBe(code);
      expect(result.stderr, path).toMatch(message);
      expect(result.stdout).toBe("");
      expect(existsSync(t.db), "no database is created").toBe(false);
      if (before !== null) expect(fingerprint(path)).toEqual(before);
    }
  });

  it("reads a WAL-mode file that hermes has open, including what is still in its -wal, without writing the database file", async () => {
    const file = copyFixture(t.dir);
    editHermesFile(file, (db) => db.pragma("journal_mode = WAL"));
    const hermes = new (await import("better-sqlite3")).default(file);
    try {
      hermes.pragma("wal_autocheckpoint = 0");
      hermes.prepare("INSERT INTO sessions (id, source, started_at, title) VALUES ('20270404_000000_0000cafe', 'cli', 1800000000, 'Only in the WAL')").run();
      hermes
        .prepare(
          "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20270404_000000_0000cafe', 'user', 'written by a live hermes', 1800000001)",
        )
        .run();
      const before = fingerprint(file);
      const result = await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`Imported ${expected.totals.sessions + 1} sessions`);
      expect(fingerprint(file)).toEqual(before);
      await t.seed(async (db) => {
        expect(await db.getTitle("20270404_000000_0000cafe")).toBe("Only in the WAL");
        expect((await db.getMessages("20270404_000000_0000cafe")).map((m) => m.content)).toEqual(["written by a live hermes"]);
      });
    } finally {
      hermes.close();
    }
  });

  it("an import killed mid-way (a real process, SIGKILL) leaves whole sessions only, and running it again imports the rest once", async () => {
    const file = copyFixture(t.dir);
    const extra = 1000;
    addHermesSessions(file, extra, 4);
    const total = expected.totals.sessions + extra;
    const child = spawn(builtCli()[0]!, [...builtCli().slice(1), "sessions", "import", "--from", "hermes", file, "--db", t.db], {
      env: t.env(),
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const countSessions = async (): Promise<number> => {
      const db = await openSessionDB(t.db);
      try {
        return (await db.getStats()).totalSessions;
      } finally {
        await db.close();
      }
    };
    await waitFor(async () => existsSync(t.db) && (await countSessions()) >= 100, { what: "the import to store 100 sessions", timeoutMs: 60_000 });
    child.kill("SIGKILL");
    await exited;
    const partial = await countSessions();
    expect(partial, "the import finished before it was killed; the test needs a bigger file").toBeLessThan(total);

    const rest = await t.run(["sessions", "import", "--from", "hermes", file, "--db", t.db]);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stdout).toContain(`Imported ${total - partial} sessions`);
    expect(rest.stdout).toContain(`skipped ${partial} already present.`);
    await t.seed(async (db) => {
      expect((await db.getStats()).totalSessions).toBe(total);
      await expectFixtureImported(db, expected, file, { otherSessions: extra });
      for (const i of [0, 1, extra - 1]) {
        const id = `20270101_000000_${i.toString(16).padStart(8, "0")}`;
        expect((await db.getMessages(id)).map((m) => m.content)).toEqual([0, 1, 2, 3].map((m) => `bulk message ${m} of session ${i}`));
      }
    });
  });

  it("draws a progress bar with counts on a terminal", async () => {
    const file = copyFixture(t.dir);
    addHermesSessions(file, 120, 2);
    const total = expected.totals.sessions + 120;
    const run = await t.runInTerminal(["sessions", "import", "--from", "hermes", file, "--db", t.db]);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(new RegExp(`Importing .* 100% \\| ${total}/${total}`, "u"));
    expect(run.output).toContain(`Imported ${total} sessions`);
  });
});
