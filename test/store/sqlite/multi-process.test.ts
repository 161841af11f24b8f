import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";

const WRITER = fileURLToPath(new URL("./fixtures/writer.ts", import.meta.url));

function runWriter(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", WRITER, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("sqlite: several processes writing one file", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-mp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("4 writer processes x 2 shared sessions: every message exactly once, turns contiguous, counters exact", async () => {
    const path = join(dir, "state.db");
    const db = await openSessionDB(path);
    const a = await db.createSession({ source: "cli" });
    const b = await db.createSession({ source: "telegram" });
    await db.close();

    const writers = ["w0", "w1", "w2", "w3"];
    const turns = 60;
    const results = await Promise.all(writers.map((w) => runWriter([path, w, String(turns), a.id, b.id])));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });

    const check = await openSessionDB(path);
    for (const session of [a, b]) {
      const messages = await check.getMessages(session.id);
      const texts = messages.map((m) => m.content as string);
      expect(messages).toHaveLength(writers.length * turns * 3);
      expect(new Set(texts).size).toBe(texts.length); // no duplicates
      for (const w of writers) {
        for (let i = 0; i < turns; i++) {
          const q = texts.indexOf(`${w} turn ${i} question`);
          expect(q, `${w} turn ${i} missing`).toBeGreaterThanOrEqual(0);
          expect(texts[q + 1]).toBe(`${w} turn ${i} answer`); // the turn stayed contiguous
          expect(texts).toContain(`${w} single ${i}`);
        }
      }
      const stored = await check.getSession(session.id);
      expect(stored?.messageCount).toBe(messages.length);
    }
    expect((await check.getStats()).totalMessages).toBe(2 * writers.length * turns * 3);
    await check.close();
  }, 120_000);
});
