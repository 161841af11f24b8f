/**
 * `threadline db backup` of a live database: another process (backup-writer.ts, a gateway's
 * write load through the store) keeps appending messages, sessions and attachments to the same
 * SQLite file while the built bin backs it up. The copy must be one consistent point in time:
 * integrity ok, every session's message count equal to its messages, as many messages as
 * there were somewhere between the backup's start and its end, and readable by the other
 * commands. A restart of the online backup (another connection writing between two steps) is
 * forced deterministically in the second test.
 */
import Database from "better-sqlite3";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { backupDatabase, type BackupReport } from "../../../src/store/index.js";
import { seedDatabase } from "../../support/damaged-sqlite.js";
import { waitFor, withDeadline } from "../../support/wait-for.js";
import { NODE_WITH_TSX } from "../cli-run.js";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";

const WRITER = fileURLToPath(new URL("./backup-writer.ts", import.meta.url));

let t: TempHome;
let writer: ChildProcessWithoutNullStreams | null = null;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => {
  writer?.kill("SIGKILL");
  writer = null;
  t.cleanup();
});

/** The messages stored now, read through a connection of its own. */
function messageCount(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM messages").pluck().get() as number;
  } finally {
    db.close();
  }
}

/** Opens a backup on its own (no -wal beside it) and checks it is whole and consistent; returns its message count. */
async function checkCopy(path: string): Promise<{ messages: number; sessions: number }> {
  expect(existsSync(`${path}-wal`)).toBe(false);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  const raw = new Database(path, { readonly: true });
  let counts: { messages: number; sessions: number };
  try {
    expect(raw.pragma("journal_mode", { simple: true })).toBe("delete");
    expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(raw.pragma("foreign_key_check")).toEqual([]);
    const mismatched = raw
      .prepare(
        "SELECT s.id, s.message_count AS counted, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS stored FROM sessions s WHERE counted != stored",
      )
      .all();
    expect(mismatched).toEqual([]);
    counts = {
      messages: raw.prepare("SELECT count(*) FROM messages").pluck().get() as number,
      sessions: raw.prepare("SELECT count(*) FROM sessions").pluck().get() as number,
    };
  } finally {
    raw.close();
  }
  // Through the store too: each session's count is its messages, every attachment re-hashes.
  const db = await openSessionDB(path);
  try {
    const sessions = (await db.listSessions({ limit: 1000, includeChildren: true })).items;
    expect(sessions).toHaveLength(counts.sessions);
    for (const s of sessions) expect((await db.getMessages(s.id)).length, s.id).toBe(s.messageCount);
    const media = await db.checkMedia({ verify: true });
    expect(media).toMatchObject({ missingCount: 0, corrupt: [] });
    expect(media.blobs).toBeGreaterThan(0);
  } finally {
    await db.close();
  }
  return counts;
}

/** Starts the writer on the test's database and waits until it has written its first 200 messages. */
async function startWriter(): Promise<{ output: () => string; exited: Promise<number | null> }> {
  const child = spawn(NODE_WITH_TSX[0]!, [...NODE_WITH_TSX.slice(1), WRITER, t.db, "20000", "90"], { env: t.env(), stdio: ["pipe", "pipe", "pipe"] });
  writer = child;
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await waitFor(() => stdout.includes("ready\n") || child.exitCode !== null, { what: "the writer's first 200 messages", timeoutMs: 60_000 });
  expect(stdout, stderr).toContain("ready\n");
  return { output: () => `${stdout}${stderr}`, exited };
}

describe("threadline db backup under write load", { timeout: 240_000 }, () => {
  it("the built bin backs up while another process writes: the copy is whole, consistent and readable", async () => {
    const load = await startWriter();
    const before = messageCount(t.db);
    const result = await t.runChild(["db", "backup", `${t.dir}/copy.db`, "--db", t.db, "--json"], { timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    const report = parseJson<BackupReport>(result);
    // In process as well, in steps of 4 pages: many chances for the writer to land between two steps.
    const stepped = await backupDatabase(t.db, `${t.dir}/stepped.db`, { pagesPerStep: 4 });
    const after = messageCount(t.db);
    writer!.stdin.end();
    expect(await withDeadline(load.exited, { timeoutMs: 60_000, what: "the writer's exit", describe: load.output }), load.output()).toBe(0);
    const written = Number(/done (\d+)/u.exec(load.output())?.[1]);
    // The load was real: the writer kept writing while the backups ran.
    expect(after).toBeGreaterThan(before);
    expect(written).toBeGreaterThanOrEqual(after);

    const first = await checkCopy(`${t.dir}/copy.db`);
    expect(first.messages).toBeGreaterThanOrEqual(before);
    expect(first.messages).toBeLessThanOrEqual(after);
    expect(report).toMatchObject({ messages: first.messages, sessions: first.sessions });
    const second = await checkCopy(`${t.dir}/stepped.db`);
    expect(second.messages).toBeGreaterThanOrEqual(first.messages);
    expect(second.messages).toBeLessThanOrEqual(after);
    expect(stepped).toMatchObject({ messages: second.messages, sessions: second.sessions });

    // The other commands read the copy as they read the original.
    const listed = await t.runChild(["sessions", "list", "--db", `${t.dir}/copy.db`, "--all", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(parseJson<{ sessions: unknown[] }>(listed).sessions).toHaveLength(first.sessions);
  });

  it("a write from another connection between two steps starts the copy over; the rest goes in one step and holds that write", async () => {
    await seedDatabase(t.db, { sessions: 10, messages: 30 });
    const other = new Database(t.db);
    const seen: Array<[number, number]> = [];
    let wrote = false;
    try {
      const report = await backupDatabase(t.db, `${t.dir}/copy.db`, {
        pagesPerStep: 2,
        onProgress: (copied, total) => {
          seen.push([copied, total]);
          if (!wrote && copied >= 4) {
            wrote = true;
            other.prepare("UPDATE sessions SET title = 'written mid-backup' WHERE rowid = (SELECT min(rowid) FROM sessions)").run();
          }
        },
      });
      expect(wrote).toBe(true);
      expect(report.restarts).toBe(1);
      // After the restart: one step for everything (no more progress calls between 2-page steps).
      const restartAt = seen.findIndex(([copied], i) => i > 0 && copied <= seen[i - 1]![0] && seen[i - 1]![0] > 0);
      expect(restartAt).toBeGreaterThan(0);
      expect(seen.slice(restartAt + 1).every(([copied, total]) => copied === total)).toBe(true);
    } finally {
      other.close();
    }
    const copy = new Database(`${t.dir}/copy.db`, { readonly: true });
    try {
      expect(copy.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(copy.prepare("SELECT count(*) FROM sessions WHERE title = 'written mid-backup'").pluck().get()).toBe(1);
    } finally {
      copy.close();
    }
  });
});
