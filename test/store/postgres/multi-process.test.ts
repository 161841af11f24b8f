import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, it } from "vitest";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { checkConcurrentWriters } from "../multi-process-check.js";

describe("postgres: several processes writing one schema", () => {
  const schema = `tl_test_${randomBytes(6).toString("hex")}`;
  beforeAll(requirePostgres);
  afterAll(() => dropSchema(schema));

  it("4 writer processes x 2 shared sessions: every message exactly once, turns contiguous, counters exact", async () => {
    await checkConcurrentWriters(TEST_PG_URL, { schema, poolSize: 4 });
  }, 120_000);
});
