import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";
import { seedEverything, snapshot } from "./copy-fixtures.js";

const schemas: string[] = [];
/** A PostgreSQL URL of a schema of its own (dropped after the file). */
function pgTarget(): string {
  const schema = `cli_copy_${randomBytes(4).toString("hex")}`;
  schemas.push(schema);
  return `${TEST_PG_URL}${TEST_PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
}

async function snapshotOf(target: string): Promise<Record<string, unknown>> {
  const db = await openSessionDB(target);
  try {
    return await snapshot(db);
  } finally {
    await db.close();
  }
}

interface CopyJson {
  counts: Record<string, number>;
  seconds: number;
  sessionErrors: unknown[];
  stateErrors: unknown[];
}

let t: TempHome;

beforeAll(async () => {
  await requirePostgres();
  t = makeTempHome();
  await t.seed(seedEverything);
});

afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
  t?.cleanup();
});

describe("threadline db copy", { timeout: 120_000 }, () => {
  it("copies SQLite into PostgreSQL and back: every session, message, attachment and the gateway state, deeply equal", async () => {
    const original = await snapshotOf(t.db);
    const pg = pgTarget();
    const messages = (original["sessions"] as Array<{ record: { messages: unknown[] } }>).reduce((n, s) => n + s.record.messages.length, 0);
    expect(messages).toBeGreaterThan(10);
    const copied = parseJson<CopyJson>(await t.run(["db", "copy", t.db, pg, "--json"]));
    expect(copied.counts).toEqual({
      sessions: 7,
      messages,
      mediaBlobs: 2,
      mediaBytes: 300_500,
      executions: 4,
      memories: 2,
      pairingApprovals: 2,
      aliases: 2,
      routes: 1,
      meta: 2,
    });
    expect(copied.sessionErrors).toEqual([]);
    expect(copied.stateErrors).toEqual([]);
    expect(copied.seconds).toBeGreaterThan(0);
    expect(await snapshotOf(pg)).toEqual(original);

    // PostgreSQL → a new SQLite file: the same again.
    const back = join(t.dir, "back.db");
    const text = await t.run(["db", "copy", pg, back]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^Copied 7 sessions with ${messages} messages in \\d+\\.\\d s \\(\\d+ messages/s\\)\\.$`, "mu"));
    expect(text.stdout).toMatch(/^ {2}attachments {8}2 blobs, 0\.3 MiB$/mu);
    expect(text.stdout).toMatch(/^ {2}pairing approvals {2}2$/mu);
    expect(await snapshotOf(back)).toEqual(original);

    // PostgreSQL → another schema of the same database: two databases, not one.
    const other = pgTarget();
    expect((await t.run(["db", "copy", pg, other])).code).toBe(0);
    expect(await snapshotOf(other)).toEqual(original);
  });

  it("refuses a target that holds data, and the same database twice, writing nothing", async () => {
    const full = join(t.dir, "full.db");
    const db = await openSessionDB(full);
    await db.createSession({ id: "already_here", source: "cli" });
    await db.setMeta("home_channels", "{}");
    await db.close();
    const refused = await t.run(["db", "copy", t.db, full]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain("already holds 1 session, gateway settings (meta)");
    expect(refused.stderr).toContain("db copy writes only into an empty database");
    const after = await openSessionDB(full);
    try {
      expect((await after.listSessions({ includeChildren: true })).items.map((s) => s.id)).toEqual(["already_here"]);
    } finally {
      await after.close();
    }

    const same = await t.run(["db", "copy", t.db, `${t.dir}/../${basename(t.dir)}/state.db`]);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain("name the same database");
    const pg = pgTarget();
    const samePg = await t.run(["db", "copy", pg, `${pg}&application_name=x`]);
    expect(samePg.code).toBe(2);
    const withPassword = pg.replace("://", "://tester:hunter2@");
    const samePassword = await t.run(["db", "copy", withPassword, withPassword]);
    expect(samePassword.code).toBe(2);
    expect(samePassword.stderr).toContain("tester:***@");
    expect(samePassword.stderr).not.toContain("hunter2");

    const missing = await t.run(["db", "copy", join(t.dir, "nope.db"), join(t.dir, "never.db")]);
    expect(missing.code).toBe(3);
    expect(existsSync(join(t.dir, "never.db"))).toBe(false);
  });

  it("draws a progress bar on a terminal, then the summary", async () => {
    const bulk = join(t.dir, "bulk.db");
    const db = await openSessionDB(bulk);
    try {
      for (let i = 0; i < 120; i++) await db.appendMessage((await db.createSession({ source: "cli" })).id, { role: "user", content: `bulk ${i}` });
    } finally {
      await db.close();
    }
    const run = await t.runInTerminal(["db", "copy", bulk, join(t.dir, "bulk-copy.db")]);
    expect(run.code).toBe(0);
    expect(run.output).toMatch(/Copying sessions .* 100% \| 120\/120/u);
    expect(run.output).toMatch(/Copied 120 sessions with 120 messages in /u);
  });
});
