/**
 * `db copy` on the shared workload's `medium` dataset (2,000 sessions, 92,250 messages), generated
 * and ingested into SQLite by bench:cli's loader (through this checkout's `dist/`: `npm run build`
 * first; cached in bench-data/ after the first run), copied into a PostgreSQL schema of its own.
 * The copy takes about 20 s on a quiet 2-core machine; its timing is `npm run bench:db-copy`
 * (docs/benchmarks.md), not an assertion here.
 */
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureSessionsDatabase, type SessionsDatabase } from "../../../bench/cli/sessions-database.js";
import { openSessionDB, type Message, type SessionDB } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const schema = `cli_copy_medium_${randomBytes(4).toString("hex")}`;
const target = `${TEST_PG_URL}${TEST_PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
let t: TempHome;
let data: SessionsDatabase;

beforeAll(async () => {
  await requirePostgres();
  t = makeTempHome();
  data = await ensureSessionsDatabase(ROOT, ROOT, "medium");
}, 600_000);

afterAll(async () => {
  await dropSchema(schema);
  t?.cleanup();
});

/** Every message of a session as stored, without the ids the target assigns anew. */
async function transcript(db: SessionDB, id: string): Promise<Array<Omit<Message, "id">>> {
  return (await db.getMessages(id, { includeRewound: true })).map(({ id: _id, ...m }) => m);
}

describe("threadline db copy on the medium dataset", { timeout: 600_000 }, () => {
  it("copies every session and message into PostgreSQL; totals and sampled transcripts match", async () => {
    const copied = parseJson<{ counts: { sessions: number; messages: number }; seconds: number }>(
      await t.run(["db", "copy", data.path, target, "--json"], { timeoutMs: 600_000 }),
    );
    expect(copied.counts.sessions).toBe(data.sessions);
    expect(copied.counts.messages).toBe(data.messages);
    const from = await openSessionDB(data.path);
    const to = await openSessionDB(target);
    try {
      const [a, b] = [await from.getStats({ searchIndexBytes: false }), await to.getStats({ searchIndexBytes: false })];
      expect({ ...b, databaseBytes: 0 }).toEqual({ ...a, databaseBytes: 0 });
      const ids: string[] = [];
      for (let cursor: string | null | undefined; cursor !== null; ) {
        const page = await from.listSessions({ includeChildren: true, orderBy: "started", limit: 500, cursor });
        ids.push(...page.items.map((s) => s.id));
        cursor = page.nextCursor;
      }
      expect(ids).toHaveLength(data.sessions);
      for (let i = 0; i < 40; i++) {
        const id = ids[Math.floor((i * ids.length) / 40)]!;
        expect(await to.getSession(id)).toEqual(await from.getSession(id));
        expect(await transcript(to, id)).toEqual(await transcript(from, id));
      }
    } finally {
      await from.close();
      await to.close();
    }
  });
});
