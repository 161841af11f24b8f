/**
 * The multi-process check shared by every backend: 4 writer processes append turns to
 * 2 shared sessions at once; afterwards every message is present exactly once, each
 * turn is contiguous, each writer's turns are in its own order, and counters are exact.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { openSessionDB } from "../../src/index.js";

const WRITER = fileURLToPath(new URL("./fixtures/writer.ts", import.meta.url));
const WRITERS = ["w0", "w1", "w2", "w3"];
const TURNS = 60;

type OpenOptions = Parameters<typeof openSessionDB>[1];

function runWriter(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", WRITER, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

/** Runs the check against the store at `target` (opened with `options` in every process). */
export async function checkConcurrentWriters(target: string, options: OpenOptions = {}): Promise<void> {
  const db = await openSessionDB(target, options);
  const a = await db.createSession({ source: "cli" });
  const b = await db.createSession({ source: "telegram" });
  await db.close();

  const results = await Promise.all(WRITERS.map((w) => runWriter([target, JSON.stringify(options), w, String(TURNS), a.id, b.id])));
  for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });

  const check = await openSessionDB(target, options);
  for (const session of [a, b]) {
    const messages = await check.getMessages(session.id);
    const texts = messages.map((m) => m.content as string);
    expect(messages).toHaveLength(WRITERS.length * TURNS * 3);
    expect(new Set(texts).size).toBe(texts.length); // no duplicates
    for (const w of WRITERS) {
      let previous = -1;
      for (let i = 0; i < TURNS; i++) {
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
  expect((await check.getStats()).totalMessages).toBe(2 * WRITERS.length * TURNS * 3);
  await check.close();
}
