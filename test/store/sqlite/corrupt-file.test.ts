/**
 * A damaged SQLite file is one coded error (`TL_ERR_CORRUPT`, `DatabaseCorruptError` naming
 * the file) from every store method that meets the damage, and over HTTP a 500 with that
 * code (the file's path stays in the server log).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DatabaseCorruptError, openSessionDB, type SessionDB } from "../../../src/index.js";
import { seedDatabase, zeroMiddleLeaf } from "../../support/damaged-sqlite.js";
import { call, closeServers, startApi } from "../../http-api/api-harness.js";

let dir: string;
let path: string;
let db: SessionDB | null = null;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "threadline-corrupt-"));
  path = join(dir, "state.db");
});
afterEach(async () => {
  await closeServers();
  await db?.close();
  db = null;
  rmSync(dir, { recursive: true, force: true });
});

async function expectCorrupt(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DatabaseCorruptError);
  expect((error as DatabaseCorruptError).code).toBe("TL_ERR_CORRUPT");
  expect((error as DatabaseCorruptError).location).toBe(path);
  expect((error as Error).message).toContain(`threadline doctor --repair --db ${path}`);
  expect(((error as Error).cause as { code?: string }).code).toMatch(/^SQLITE_(CORRUPT|NOTADB)/u);
}

describe("a damaged SQLite file", { timeout: 120_000 }, () => {
  it("listing, reading, searching and stats reject with DatabaseCorruptError", async () => {
    await seedDatabase(path, { sessions: 120, messages: 2 });
    const { ids } = zeroMiddleLeaf(path, "sessions");
    db = await openSessionDB(path);
    await expectCorrupt(db.listSessions({ limit: 1000 }));
    await expectCorrupt(db.getSession(ids[0]!));
    await expectCorrupt(db.getStats());
    await expectCorrupt(db.searchMessages("deployment", { limit: 100 }));
  });

  it("a write that meets the damage rejects with it too", async () => {
    const seeded = await seedDatabase(path);
    const { rowids } = zeroMiddleLeaf(path, "messages");
    const victim = seeded.sessionIds.find((id) => seeded.messageIds.get(id)!.includes(rowids[0]!))!;
    db = await openSessionDB(path);
    await expectCorrupt(db.deleteSession(victim));
  });

  it("over HTTP: 500 TL_ERR_CORRUPT without the file's path", async () => {
    await seedDatabase(path, { sessions: 120, messages: 2 });
    zeroMiddleLeaf(path, "sessions");
    db = await openSessionDB(path);
    const api = await startApi(db);
    const reply = await call(api, "GET", "/sessions?limit=100");
    expect(reply.status).toBe(500);
    expect(reply.body.error.code).toBe("TL_ERR_CORRUPT");
    expect(reply.body.error.message).toContain("threadline doctor --repair");
    expect(reply.text).not.toContain(dir);
    expect(reply.body.error.details.requestId).toEqual(expect.any(String));
  });
});
