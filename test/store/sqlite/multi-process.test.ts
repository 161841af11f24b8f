import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import { checkConcurrentWriters } from "../multi-process-check.js";

const HAMMER = fileURLToPath(new URL("../fixtures/hammer-writer.ts", import.meta.url));

interface HammerResult {
  sessionId: string;
  written: number;
  errors: Record<string, number>;
}

function hammer(args: string[]): Promise<{ code: number | null; stderr: string; result: HammerResult | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", HAMMER, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stderr, result: code === 0 ? (JSON.parse(stdout) as HammerResult) : null }));
  });
}

describe("sqlite: several processes writing one file", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-mp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("4 writer processes x 2 shared sessions: every message exactly once, turns contiguous, counters exact", async () => {
    await checkConcurrentWriters(join(dir, "state.db"));
  }, 120_000);

  it("4 writer processes appending one awaited message at a time: no call fails (no busy error), nothing lost", async () => {
    const path = join(dir, "hammer.db");
    const setup = await openSessionDB(path);
    const shared = await setup.createSession({ source: "cli" });
    await setup.close();
    const count = 400;
    // Two writers never let a lock wait block their thread (busyTimeoutMs 0: asynchronous waits only).
    const options = [{}, { busyTimeoutMs: 0 }, {}, { busyTimeoutMs: 0 }];
    const runs = await Promise.all(options.map((o, i) => hammer([path, JSON.stringify(o), `w${i}`, String(count), shared.id])));
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0 });
    const results = runs.map((r) => r.result!);
    const perWriterShared = Math.ceil(count / 10);
    for (const r of results) expect(r).toMatchObject({ written: count + perWriterShared, errors: {} });

    const check = await openSessionDB(path);
    for (const [i, r] of results.entries()) {
      const texts = (await check.getMessages(r.sessionId)).map((m) => m.content);
      expect(texts).toEqual(Array.from({ length: count }, (_, n) => `w${i} message ${n}`));
      expect((await check.getSession(r.sessionId))?.messageCount).toBe(count);
    }
    const sharedTexts = (await check.getMessages(shared.id)).map((m) => m.content as string);
    expect(new Set(sharedTexts).size).toBe(results.length * perWriterShared);
    expect((await check.getSession(shared.id))?.messageCount).toBe(results.length * perWriterShared);
    expect((await check.getStats()).totalMessages).toBe(results.length * (count + perWriterShared));
    // Every process's appends reached the search index (each writer's catch-ups index the others' too).
    for (const [i, r] of results.entries()) {
      const hits = await check.searchMessages(`"w${i} message ${count - 1}"`, { limit: 5 });
      expect(hits.map((h) => h.sessionId)).toEqual([r.sessionId]);
    }
    await check.close();
  }, 120_000);
});
