import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB } from "../../../src/index.js";
import type { ContentPart, StoredMedia } from "../../../src/store/contract.js";
import { repairSqlite } from "../../../src/store/sqlite/sqlite-repair.js";
import { zeroMiddleLeaf } from "../../support/damaged-sqlite.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "tl-repair-media-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const part = (m: StoredMedia): ContentPart => ({ type: "attachment", attachment: { sha256: m.sha256, kind: "image", mimeType: m.mimeType, size: m.size } });

describe("repairing a damaged SQLite file keeps media", { timeout: 120_000 }, () => {
  it("copies blobs chunk by chunk and drops the references of the messages it could not read", async () => {
    const path = join(dir, "state.db");
    const db = await openSessionDB(path);
    const blobs: StoredMedia[] = [];
    for (let i = 0; i < 3; i++) blobs.push(await db.putMedia({ bytes: randomBytes(700 * 1024) }, { mimeType: "image/png" }));
    // Enough messages, each referring to a blob, for the messages table to span many pages.
    for (let s = 0; s < 20; s++) {
      await db.createSession({ id: `s${s}`, source: "cli" });
      await db.appendTurn(
        `s${s}`,
        Array.from({ length: 20 }, (_, i) => ({
          role: "user" as const,
          content: [{ type: "text", text: `message ${i} ${"x".repeat(200)}` }, part(blobs[i % 3]!)],
        })),
      );
    }
    expect((await db.checkMedia()).references).toBe(400);
    await db.close();
    const { rowids } = zeroMiddleLeaf(path, "messages");
    expect(rowids.length).toBeGreaterThan(0);

    const report = await repairSqlite(path);
    expect(report.copied.other.media_chunks).toBe(9);
    expect(report.dropped.message_attachments).toBe(rowids.length);
    const repaired = await openSessionDB(path);
    try {
      const check = await repaired.checkMedia({ verify: true });
      expect(check).toMatchObject({ blobs: 3, references: 400 - rowids.length, missingCount: 0, corrupt: [] });
      for (const blob of blobs) expect((await repaired.readMedia(blob.sha256))!.byteLength).toBe(blob.size);
    } finally {
      await repaired.close();
    }
  });
});
