import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession, addToolSession } from "./fixtures.js";

const schema = `cli_sessions_${randomBytes(4).toString("hex")}`;
const target = `${TEST_PG_URL}${TEST_PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
let t: TempHome;

beforeAll(async () => {
  await requirePostgres();
  t = makeTempHome();
  const db = await openSessionDB(target);
  try {
    await addToolSession(db, { id: "pg_tools_1" });
    await addSession(db, { id: "pg_plain_1", text: "hello from postgres", source: "telegram" });
  } finally {
    await db.close();
  }
});

afterAll(async () => {
  await dropSchema(schema);
  t?.cleanup();
});

describe("threadline sessions on PostgreSQL (--db postgres://…?schema=…)", { timeout: 120_000 }, () => {
  it("lists, shows, renames, searches, exports and reports stats", async () => {
    const list = parseJson<{ sessions: Array<{ id: string }> }>(await t.run(["sessions", "list", "--json", "--db", target]));
    expect(list.sessions.map((s) => s.id).sort()).toEqual(["pg_plain_1", "pg_tools_1"]);

    const renamed = await t.run(["sessions", "rename", "pg_plain", "Postgres", "chat", "--db", target]);
    expect(renamed.code).toBe(0);
    const show = await t.run(["sessions", "show", "Postgres chat", "--db", target]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^Session\s+pg_plain_1$/mu);

    const tools = await t.run(["sessions", "show", "pg_tools", "--db", target]);
    expect(tools.stdout).toContain("[3 tool calls: terminal, web_search]");

    const search = parseJson<{ sessions: Array<{ sessionId: string }> }>(await t.run(["sessions", "search", "postgres", "--json", "--db", target]));
    expect(search.sessions.map((s) => s.sessionId)).toEqual(["pg_plain_1"]);

    const file = join(t.dir, "pg.jsonl");
    expect((await t.run(["sessions", "export", file, "--db", target])).stdout).toBe(`Exported 2 sessions to ${file}\n`);
    const imported = parseJson<{ imported: number }>(await t.run(["sessions", "import", file, "--json", "--db", join(t.dir, "copy.db")]));
    expect(imported.imported).toBe(2);

    const stats = parseJson<{ backend: string; totalSessions: number }>(await t.run(["sessions", "stats", "--json", "--db", target]));
    expect(stats).toMatchObject({ backend: "postgres", totalSessions: 2 });
  });
});
