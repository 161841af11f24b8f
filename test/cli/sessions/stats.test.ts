import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addSession, addToolSession } from "./fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

describe("threadline sessions stats", { timeout: 120_000 }, () => {
  it("prints totals, sessions per source and the database size", async () => {
    await t.seed(async (db) => {
      await addToolSession(db);
      await addSession(db, { text: "a", source: "telegram" });
      await addSession(db, { text: "b", source: "telegram" });
    });
    const result = await t.run(["sessions", "stats", "--db", t.db]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Database\\s+${t.db} \\(sqlite\\)$`, "mu"));
    expect(result.stdout).toMatch(/^Size\s+\d+(\.\d)? (KiB|MiB)/mu);
    expect(result.stdout).toMatch(/^Sessions\s+3$/mu);
    expect(result.stdout).toMatch(/^Messages\s+9$/mu);
    expect(result.stdout).toMatch(/^ {2}telegram\s+2$/mu);
    expect(result.stdout).toMatch(/^ {2}cli\s+1$/mu);
  });

  it("--json adds tokens and cost per model", async () => {
    await t.seed(async (db) => {
      await addToolSession(db);
      await addSession(db, { text: "a", source: "telegram" });
    });
    const json = parseJson<{
      location: string;
      backend: string;
      totalSessions: number;
      totalMessages: number;
      sessionsBySource: Record<string, number>;
      databaseBytes: number;
      byModel: Array<{ model: string | null; sessions: number; inputTokens: number; outputTokens: number; estimatedCostUsd: number }>;
    }>(await t.run(["sessions", "stats", "--json", "--db", t.db]));
    expect(json).toMatchObject({ location: t.db, backend: "sqlite", totalSessions: 2, totalMessages: 8, sessionsBySource: { cli: 1, telegram: 1 } });
    expect(json.databaseBytes).toBeGreaterThan(0);
    expect(json.byModel.find((m) => m.model === "gpt-4o")).toMatchObject({ sessions: 1, inputTokens: 1200, outputTokens: 300, estimatedCostUsd: 0.0123 });
  });
});
