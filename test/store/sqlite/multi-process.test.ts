import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { checkConcurrentWriters } from "../multi-process-check.js";

describe("sqlite: several processes writing one file", () => {
  const dir = mkdtempSync(join(tmpdir(), "tl-mp-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("4 writer processes x 2 shared sessions: every message exactly once, turns contiguous, counters exact", async () => {
    await checkConcurrentWriters(join(dir, "state.db"));
  }, 120_000);
});
