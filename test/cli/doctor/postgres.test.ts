/**
 * `threadline doctor` on a PostgreSQL target: connectivity, schema version and the server's
 * view; `--repair` is refused (SQLite-only); an unreachable server is reported, not thrown.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB, type PostgresDoctorReport } from "../../../src/index.js";
import { POSTGRES_SCHEMA_VERSION } from "../../../src/store/postgres/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { makeTempHome, parseJson, type TempHome } from "../sessions/cli-harness.js";

const schema = `cli_doctor_${randomBytes(4).toString("hex")}`;
const withSchema = (name: string): string => `${TEST_PG_URL}${TEST_PG_URL.includes("?") ? "&" : "?"}schema=${name}`;
const target = withSchema(schema);
let t: TempHome;

beforeAll(async () => {
  await requirePostgres();
  t = makeTempHome();
  const db = await openSessionDB(target);
  await db.close();
});

afterAll(async () => {
  await dropSchema(schema);
  t?.cleanup();
});

describe("threadline doctor on PostgreSQL", { timeout: 120_000 }, () => {
  it("reports connectivity, schema version and the server's view (exit 0)", async () => {
    const text = await t.run(["doctor", "--db", target]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^Connection\s+ok$/mu);
    expect(text.stdout).toMatch(new RegExp(`^Schema\\s+version ${POSTGRES_SCHEMA_VERSION} `, "mu"));
    expect(text.stdout).toMatch(/^Server\s+PostgreSQL \d+/mu);
    expect(text.stdout).toMatch(/^Repair\s+SQLite only/mu);
    const json = parseJson<PostgresDoctorReport>(await t.run(["doctor", "--json", "--db", target]));
    expect(json).toMatchObject({ backend: "postgres", healthy: true, connected: true, schema, schemaVersion: POSTGRES_SCHEMA_VERSION });
    expect(json.server?.databaseBytes).toBeGreaterThan(0);
  });

  it("--repair is refused: SQLite only (exit 2), after the report", async () => {
    const result = await t.run(["doctor", "--repair", "--db", target]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^Connection\s+ok$/mu);
    expect(result.stderr).toMatch(/^threadline: --repair is for SQLite files only/u);
  });

  it("a schema without Threadline tables and an unreachable server are problems (exit 1), not crashes", async () => {
    const empty = parseJson<PostgresDoctorReport>(await t.run(["doctor", "--json", "--db", withSchema(`cli_doctor_none_${randomBytes(4).toString("hex")}`)]));
    expect(empty).toMatchObject({ healthy: false, connected: true, schemaVersion: null });
    expect(empty.problems[0]).toContain("holds no Threadline tables");
    const down = await t.run(["doctor", "--db", "postgres://127.0.0.1:1/test"]);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^Connection\s+FAILED$/mu);
    expect(down.stdout).toContain("Connecting to postgres://127.0.0.1:1/test failed");
  });
});
