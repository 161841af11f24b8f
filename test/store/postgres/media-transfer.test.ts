/**
 * Export and import with attachments through the store API on PostgreSQL: inline media come
 * back byte for byte into a fresh schema and into a SQLite file (and from SQLite back into
 * PostgreSQL), the lines are `JSON.stringify` of the records, a `skip` export leaves
 * dangling references that `checkMedia` counts, a bad entry rejects its line with nothing
 * written, and a sidecar folder is read back.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB, type SessionRecord } from "../../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../../contract/postgres-server.js";
import { addMediaSession, pngBytes, sha256 } from "../../cli/sessions/media-fixtures.js";

const schemas: string[] = [];
const stores: SessionDB[] = [];
let dir: string;

async function freshPostgres(): Promise<SessionDB> {
  const schema = `tl_media_${randomBytes(6).toString("hex")}`;
  schemas.push(schema);
  const db = await openSessionDB(TEST_PG_URL, { schema });
  stores.push(db);
  return db;
}

async function freshSqlite(name: string): Promise<SessionDB> {
  const db = await openSessionDB(join(dir, name));
  stores.push(db);
  return db;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** An export's lines as strings without their newlines (what `importSessions` reads). */
async function lines(db: SessionDB, media: "inline" | "refs" | "skip"): Promise<string[]> {
  return Buffer.concat(await collect(db.exportSessionLines({ media })))
    .toString("utf8")
    .trim()
    .split("\n");
}

const photo = pngBytes(700_003);
const voice = pngBytes(9_001);

async function seed(db: SessionDB): Promise<void> {
  await addMediaSession(db, {
    id: "pg_media",
    messages: [
      { text: "a photo", attachments: [{ bytes: photo, kind: "image", mimeType: "image/png", fileName: "p.png" }] },
      { attachments: [{ bytes: voice, kind: "audio", mimeType: "audio/ogg", voice: true }] },
    ],
  });
}

describe("postgres: export and import with attachments", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    await requirePostgres();
    dir = mkdtempSync(join(tmpdir(), "threadline-pg-media-"));
  });
  afterAll(async () => {
    for (const db of stores) await db.close().catch(() => {});
    for (const schema of schemas) await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it("inline: the bytes come back identical in a fresh schema and in SQLite, and back again; lines are JSON.stringify of the records", async () => {
    const source = await freshPostgres();
    await seed(source);
    for (const media of ["inline", "refs", "skip"] as const) {
      const records = (await collect(source.exportSessions({ media }))).map((r) => JSON.stringify(r));
      expect(await lines(source, media), media).toEqual(records);
    }
    const exported = await lines(source, "inline");
    const record = JSON.parse(exported[0]!) as SessionRecord;
    expect(record.media).toEqual([
      { sha256: sha256(photo), mimeType: "image/png", size: photo.length, data: photo.toString("base64") },
      { sha256: sha256(voice), mimeType: "audio/ogg", size: voice.length, data: voice.toString("base64") },
    ]);

    for (const target of [await freshPostgres(), await freshSqlite("from-pg.db")]) {
      expect(await target.importSessions(exported)).toEqual({ imported: 1, skipped: 0, errors: [] });
      expect(Buffer.from((await target.readMedia(sha256(photo)))!).equals(photo)).toBe(true);
      expect(Buffer.from((await target.readMedia(sha256(voice)))!).equals(voice)).toBe(true);
      expect((await target.listAttachments("pg_media")).every((a) => a.stored)).toBe(true);
      expect(await lines(target, "inline")).toEqual(exported);
    }
    // SQLite → PostgreSQL: the same line.
    const sqlite = await freshSqlite("sqlite-source.db");
    await sqlite.importSessions(exported);
    const back = await freshPostgres();
    expect(await back.importSessions(await lines(sqlite, "inline"))).toEqual({ imported: 1, skipped: 0, errors: [] });
    expect(await lines(back, "inline")).toEqual(exported);
  });

  it("skip leaves dangling references; a bad entry rejects its line with nothing written; a sidecar folder is read back", async () => {
    const source = await freshPostgres();
    await seed(source);
    const skipped = await freshPostgres();
    expect(await skipped.importSessions(await lines(source, "skip"))).toEqual({ imported: 1, skipped: 0, errors: [] });
    expect(await skipped.checkMedia()).toMatchObject({ blobs: 0, references: 2, missingCount: 2 });
    // The inline export over it: the session is skipped, its attachments filled in.
    expect(await skipped.importSessions(await lines(source, "inline"))).toEqual({ imported: 0, skipped: 1, errors: [] });
    expect(await skipped.checkMedia()).toMatchObject({ blobs: 2, missingCount: 0 });

    const record = JSON.parse((await lines(source, "inline"))[0]!) as SessionRecord;
    const bad = { ...record, media: [record.media![0]!, { ...record.media![1]!, sha256: sha256(photo) }] };
    const target = await freshPostgres();
    const report = await target.importSessions([JSON.stringify(bad)]);
    expect(report.imported).toBe(0);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]!.line).toBe(1);
    expect(report.errors[0]!.message).toContain(
      `media[1] (${sha256(photo).slice(0, 12)}…): the bytes hash to ${sha256(voice)}, not to the sha256 the entry names`,
    );
    expect(await target.getSession("pg_media")).toBeNull();
    expect(await target.getMedia(sha256(photo))).toBeNull();

    const folder = join(dir, "sidecar");
    const refs = JSON.parse((await lines(source, "refs"))[0]!) as SessionRecord;
    expect(refs.media!.every((m) => m.data === undefined)).toBe(true);
    mkdirSync(folder);
    writeFileSync(join(folder, sha256(photo)), photo);
    writeFileSync(join(folder, sha256(voice)), voice);
    const fromFolder = await freshPostgres();
    expect(await fromFolder.importSessions([JSON.stringify(refs)], { mediaDir: folder })).toEqual({ imported: 1, skipped: 0, errors: [] });
    expect(Buffer.from((await fromFolder.readMedia(sha256(photo)))!).equals(photo)).toBe(true);
    expect((await fromFolder.checkMedia()).missingCount).toBe(0);
  });
});
