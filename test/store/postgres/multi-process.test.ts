import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";

const WRITER = fileURLToPath(new URL("./fixtures/writer.ts", import.meta.url));

function runWriter(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", WRITER, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("postgres: several processes writing one schema", () => {
  const schema = `tl_test_${randomBytes(6).toString("hex")}`;
  beforeAll(requirePostgres);
  afterAll(() => dropSchema(schema));

  it("4 writer processes x 2 shared sessions: every message exactly once, turns contiguous, counters exact", async () => {
    const db = await openSessionDB(TEST_PG_URL, { schema });
    const a = await db.createSession({ source: "cli" });
    const b = await db.createSession({ source: "telegram" });
    await db.close();

    const writers = ["w0", "w1", "w2", "w3"];
    const turns = 60;
    const results = await Promise.all(writers.map((w) => runWriter([TEST_PG_URL, schema, w, String(turns), a.id, b.id])));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });

    const check = await openSessionDB(TEST_PG_URL, { schema });
    for (const session of [a, b]) {
      const messages = await check.getMessages(session.id);
      const texts = messages.map((m) => m.content as string);
      expect(messages).toHaveLength(writers.length * turns * 3);
      expect(new Set(texts).size).toBe(texts.length); // no duplicates
      for (const w of writers) {
        let previous = -1;
        for (let i = 0; i < turns; i++) {
          const q = texts.indexOf(`${w} turn ${i} question`);
          expect(q, `${w} turn ${i} missing`).toBeGreaterThanOrEqual(0);
          expect(texts[q + 1]).toBe(`${w} turn ${i} answer`); // the turn stayed contiguous
          expect(q).toBeGreaterThan(previous); // one writer's turns in its own order
          previous = q;
          expect(texts).toContain(`${w} single ${i}`);
        }
      }
      const stored = await check.getSession(session.id);
      expect(stored?.messageCount).toBe(messages.length);
      expect(stored?.lastActiveAt).toBe(Math.max(...messages.map((m) => m.timestamp)));
    }
    expect((await check.getStats()).totalMessages).toBe(2 * writers.length * turns * 3);
    await check.close();
  }, 120_000);
});
