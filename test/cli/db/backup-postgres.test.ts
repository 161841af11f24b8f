/**
 * `threadline db backup` on a PostgreSQL target refuses and prints the `pg_dump` command; that
 * command, run as printed against the real test server, backs up Threadline's schema, and
 * docs/deploy.md's `pg_restore` brings it back after the schema is dropped: every session,
 * message and attachment, at the same schema version.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { run } from "../../docs/markdown-examples.js";
import { makeTempHome, type TempHome } from "../sessions/cli-harness.js";

const schemas: string[] = [];
let t: TempHome;
beforeAll(requirePostgres);
afterAll(async () => {
  for (const schema of schemas) await dropSchema(schema);
});
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** What a schema holds, read through the store: sessions with their messages' text, and the attachments. */
async function contents(url: string): Promise<{ sessions: Array<{ id: string; title: string | null; texts: unknown[] }>; blobs: number; corrupt: string[] }> {
  const db = await openSessionDB(url);
  try {
    const sessions = [];
    for (const s of (await db.listSessions({ limit: 1000, includeChildren: true })).items) {
      sessions.push({ id: s.id, title: s.title, texts: (await db.getMessages(s.id)).map((m) => m.content) });
    }
    const media = await db.checkMedia({ verify: true });
    return { sessions: sessions.sort((a, b) => a.id.localeCompare(b.id)), blobs: media.blobs, corrupt: media.corrupt };
  } finally {
    await db.close();
  }
}

describe("threadline db backup on PostgreSQL: the pg_dump it prints, and pg_restore", { timeout: 120_000 }, () => {
  it("the printed pg_dump command backs up the schema; pg_restore brings it back whole", async () => {
    const schema = `tl_test_${randomBytes(6).toString("hex")}`;
    schemas.push(schema);
    const url = new URL(TEST_PG_URL);
    url.searchParams.set("schema", schema);
    const target = url.toString();
    const db = await openSessionDB(target);
    try {
      for (let i = 0; i < 3; i++) {
        const s = await db.createSession({ source: "telegram", title: `backed up ${i}` });
        for (let j = 0; j < 4; j++) await db.appendMessage(s.id, { role: j % 2 === 0 ? "user" : "assistant", content: `message ${i}.${j}` });
      }
      await db.putMedia({ bytes: randomBytes(5000) }, { mimeType: "image/png" });
    } finally {
      await db.close();
    }
    const before = await contents(target);
    expect(before.sessions).toHaveLength(3);

    const file = join(t.dir, "tl.dump");
    const refused = await t.run(["db", "backup", file, "--db", target]);
    expect(refused.code).toBe(2);
    const command = /^ {2}(pg_dump .*)$/mu.exec(refused.stderr)?.[1];
    expect(command, refused.stderr).toContain(`--schema=${schema}`);
    // The printed command has no password: one in the test URL comes from PGPASSWORD, as the message says.
    const env = { ...process.env, ...(url.password === "" ? {} : { PGPASSWORD: decodeURIComponent(url.password) }) };
    const dumped = await run("/bin/sh", ["-c", `umask 077 && ${command}`], { cwd: t.dir, env });
    expect(dumped.code, dumped.stderr).toBe(0);
    expect(existsSync(file)).toBe(true);

    await dropSchema(schema);
    const gone = await openSessionDB(target);
    expect((await gone.listSessions({ limit: 10 })).items).toEqual([]);
    await gone.close();
    await dropSchema(schema);

    // docs/deploy.md's restore: pg_restore --dbname=<the URL without ?schema> <file>.
    const dbUrl = new URL(TEST_PG_URL);
    dbUrl.password = "";
    const restored = await run("pg_restore", [`--dbname=${dbUrl.toString().replace(/:@/u, "@")}`, file], { cwd: t.dir, env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(await contents(target)).toEqual(before);
  });
});
