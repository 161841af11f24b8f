// `importSessions` loads its code with import() the first time it is called (issue 31). A source
// that emits as soon as it exists (a readline interface over a file stream, as `readJsonlLines`
// returns) must lose no line in that pause: this file's first import is that first call.
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openSessionDB, readJsonlLines } from "../../src/index.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "threadline-import-stream-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("imports every line of a readline source created before the call, on the first import of the process", async () => {
  const records = Array.from({ length: 50 }, (_, i) =>
    JSON.stringify({
      format: "threadline.session",
      version: 1,
      session: { id: `s${i}`, source: "cli", startedAt: 1_700_000_000 + i },
      messages: [{ role: "user", content: `line ${i}`, timestamp: 1_700_000_000 + i }],
    }),
  );
  const file = join(dir, "records.jsonl");
  writeFileSync(file, `${records.join("\n")}\n`);
  const db = await openSessionDB(join(dir, "state.db"));
  try {
    const report = await db.importSessions(readJsonlLines(createReadStream(file)));
    expect(report).toEqual({ imported: 50, skipped: 0, errors: [] });
    expect((await db.listSessions({ limit: 100 })).items).toHaveLength(50);
  } finally {
    await db.close();
  }
});
