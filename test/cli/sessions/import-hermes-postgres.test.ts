import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { copyFixture, expectFixtureImported, fingerprint, readExpected } from "./hermes-files.js";

const schema = `cli_hermes_${randomBytes(4).toString("hex")}`;
const target = `${TEST_PG_URL}${TEST_PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
let t: TempHome;

beforeAll(async () => {
  await requirePostgres();
  t = makeTempHome();
});

afterAll(async () => {
  await dropSchema(schema);
  t?.cleanup();
});

describe("threadline sessions import --from hermes on PostgreSQL (--db postgres://…?schema=…)", { timeout: 120_000 }, () => {
  it("imports every session, message, title and parent link of the fixture, once", async () => {
    const expected = readExpected();
    const file = copyFixture(t.dir);
    const before = fingerprint(file);
    const first = parseJson<{ imported: { sessions: number; messages: number }; present: number }>(
      await t.run(["sessions", "import", "--from", "hermes", file, "--db", target, "--json"]),
    );
    expect(first).toMatchObject({ imported: { sessions: expected.totals.sessions, messages: expected.totals.messages }, present: 0 });
    const again = await t.run(["sessions", "import", "--from", "hermes", file, "--db", target]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`skipped ${expected.totals.sessions} already present.`);
    const db = await openSessionDB(target);
    try {
      await expectFixtureImported(db, expected, file);
    } finally {
      await db.close();
    }
    expect(fingerprint(file)).toEqual(before);
  });
});
