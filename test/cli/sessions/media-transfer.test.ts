/**
 * `sessions export` / `sessions import` with attachments on real SQLite files: inline base64
 * (the default), `--media skip` (references dangle and `doctor` names them), a sidecar folder
 * (`--media-dir`), bad media data rejected with nothing written, and `sessions show` naming
 * attachments.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB, type SessionRecord, type SqliteDoctorReport } from "../../../src/index.js";
import { makeTempHome, parseJson, type TempHome } from "./cli-harness.js";
import { addMediaSession, pngBytes, sha256 } from "./media-fixtures.js";

let t: TempHome;
beforeEach(() => {
  t = makeTempHome();
});
afterEach(() => t.cleanup());

/** Bytes of the seeded attachments, by SHA-256. */
interface Seeded {
  photo: Buffer;
  voice: Buffer;
  ids: { photos: string; voice: string };
}

/**
 * Two sessions: one with a photo whose size spans several stored chunks and is not a multiple
 * of 3 (so base64 is carried across chunk ends) and a voice note; the other with the same voice
 * note again (one blob, two sessions).
 */
async function seed(home: TempHome): Promise<Seeded> {
  const photo = pngBytes(600_001);
  const voice = Buffer.concat([Buffer.from("OggS"), pngBytes(12_290).subarray(8)]);
  const ids = await home.seed(async (db) => ({
    photos: await addMediaSession(db, {
      id: "media_photos",
      messages: [
        { text: "look at this", attachments: [{ bytes: photo, kind: "image", mimeType: "image/png", fileName: "photo.png", caption: "the view" }] },
        { attachments: [{ bytes: voice, kind: "audio", mimeType: "audio/ogg", voice: true }] },
      ],
    }),
    voice: await addMediaSession(db, {
      id: "media_voice",
      messages: [{ attachments: [{ bytes: voice, kind: "audio", mimeType: "audio/ogg", voice: true }] }],
    }),
  }));
  return { photo, voice, ids };
}

/** The export file's records, by session id. */
function records(file: string): Map<string, SessionRecord> {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  return new Map(lines.map((line) => JSON.parse(line) as SessionRecord).map((r) => [r.session.id, r]));
}

async function withDb<T>(path: string, use: (db: SessionDB) => Promise<T>): Promise<T> {
  const db = await openSessionDB(path);
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("sessions export / import with attachments (SQLite)", { timeout: 120_000 }, () => {
  it("inline (default): the bytes come back identical, every attachment resolves, and a second export is the same file", async () => {
    const { photo, voice } = await seed(t);
    const file = join(t.dir, "inline.jsonl");
    const exported = await t.run(["sessions", "export", file, "--db", t.db]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toBe(`Exported 2 sessions to ${file}\n`);
    const byId = records(file);
    expect(byId.get("media_photos")!.media).toEqual([
      { sha256: sha256(photo), mimeType: "image/png", size: photo.length, data: photo.toString("base64") },
      { sha256: sha256(voice), mimeType: "audio/ogg", size: voice.length, data: voice.toString("base64") },
    ]);
    expect(byId.get("media_voice")!.media).toEqual([{ sha256: sha256(voice), mimeType: "audio/ogg", size: voice.length, data: voice.toString("base64") }]);

    const fresh = join(t.dir, "fresh.db");
    const imported = await t.run(["sessions", "import", file, "--db", fresh]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe("Imported 2 sessions, skipped 0 already present.\n");
    await withDb(fresh, async (db) => {
      expect(Buffer.from((await db.readMedia(sha256(photo)))!).equals(photo)).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(voice)))!).equals(voice)).toBe(true);
      const attachments = await db.listAttachments("media_photos");
      expect(attachments.map((a) => [a.sha256, a.stored])).toEqual([
        [sha256(photo), true],
        [sha256(voice), true],
      ]);
      expect(attachments[0]).toMatchObject({ kind: "image", fileName: "photo.png", caption: "the view", mimeType: "image/png", size: photo.length });
      expect((await db.checkMedia()).missingCount).toBe(0);
    });
    const again = join(t.dir, "again.jsonl");
    expect((await t.run(["sessions", "export", again, "--db", fresh])).code).toBe(0);
    expect(readFileSync(again).equals(readFileSync(file))).toBe(true);
  });

  it("the lines SQLite writes are byte for byte JSON.stringify of the records, in every media mode", async () => {
    await seed(t);
    await withDb(t.db, async (db) => {
      for (const media of ["inline", "refs", "skip"] as const) {
        const pieces = await collect(db.exportSessionLines({ media, chunked: true }));
        const lines = Buffer.concat(pieces).toString("utf8");
        const recordLines = (await collect(db.exportSessions({ media }))).map((r) => `${JSON.stringify(r)}\n`).join("");
        expect(lines, media).toBe(recordLines);
      }
      // Chunked, a line with inline media comes in pieces (a blob's base64 a chunk at a time): only the last ends it.
      const pieces = await collect(db.exportSessionLines({ sessionId: "media_photos", chunked: true }));
      expect(pieces.length).toBeGreaterThan(3);
      expect(pieces.filter((p) => p[p.length - 1] === 0x0a)).toHaveLength(1);
      const whole = await collect(db.exportSessionLines({ sessionId: "media_photos" }));
      expect(whole).toHaveLength(1);
      expect(Buffer.from(whole[0]!).equals(Buffer.concat(pieces))).toBe(true);
      await expect(collect(db.exportSessionLines({ media: "all" as never }))).rejects.toThrow(/media must be "inline", "refs" or "skip"/u);
    });
  });

  it("--media skip: no media in the records; the import keeps dangling references that doctor names, and importing with media fills them in", async () => {
    const { photo, ids } = await seed(t);
    const skipped = join(t.dir, "skip.jsonl");
    expect((await t.run(["sessions", "export", skipped, "--media", "skip", "--db", t.db])).code).toBe(0);
    expect(readFileSync(skipped, "utf8")).not.toContain('"media"');
    const fresh = join(t.dir, "fresh.db");
    expect((await t.run(["sessions", "import", skipped, "--db", fresh])).stdout).toBe("Imported 2 sessions, skipped 0 already present.\n");

    const doctor = await t.run(["doctor", "--db", fresh]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/^Media\s+PROBLEMS, 3 reference\(s\) to 0 stored attachment\(s\)/mu);
    expect(doctor.stdout).toContain(`session ${ids.photos}, message `);
    expect(doctor.stdout).toContain("3 attachment reference(s) do not resolve");
    expect(doctor.stdout).toContain("threadline sessions import FILE");
    expect(doctor.stdout).toContain("a --repair would not bring them back");
    const report = parseJson<SqliteDoctorReport>(await t.run(["doctor", "--json", "--db", fresh]));
    expect(report.healthy).toBe(false);
    expect(report.integrity.ok).toBe(true);
    expect(report.media).toMatchObject({ ok: false, missingCount: 3, references: 3, blobs: 0 });
    expect(new Set(report.media.missing.map((m) => m.sessionId))).toEqual(new Set([ids.photos, ids.voice]));
    // A repair has nothing to mend: the file is intact.
    const repair = await t.run(["doctor", "--repair", "--db", fresh]);
    expect(repair.code).toBe(1);
    expect(repair.stdout).toContain("Nothing for --repair to do");
    expect(readdirSync(t.dir).filter((n) => n.includes(".damaged-"))).toEqual([]);

    const show = await t.run(["sessions", "show", ids.photos, "--db", fresh]);
    expect(show.stdout).toContain("[image: photo.png, image/png, 585.9 KiB; bytes not stored: the view]");

    // The export with media, imported over it: sessions skipped, their attachments filled in.
    const inline = join(t.dir, "inline.jsonl");
    expect((await t.run(["sessions", "export", inline, "--db", t.db])).code).toBe(0);
    expect((await t.run(["sessions", "import", inline, "--db", fresh])).stdout).toBe("Imported 0 sessions, skipped 2 already present.\n");
    await withDb(fresh, async (db) => expect(Buffer.from((await db.readMedia(sha256(photo)))!).equals(photo)).toBe(true));
    const healthy = await t.run(["doctor", "--db", fresh]);
    expect(healthy.code, healthy.stdout).toBe(0);
    expect(healthy.stdout).toMatch(/^Media\s+ok, 3 reference\(s\) to 2 stored attachment\(s\)/mu);
  });

  it("--media-dir: each blob a file named by its SHA-256, records without data; import --media-dir reads them back", async () => {
    const { photo, voice, ids } = await seed(t);
    const file = join(t.dir, "sidecar.jsonl");
    const folder = join(t.dir, "media");
    const exported = await t.run(["sessions", "export", file, "--media-dir", folder, "--db", t.db]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toBe(`Exported 2 sessions to ${file}\n`);
    expect(readdirSync(folder).sort()).toEqual([sha256(photo), sha256(voice)].sort());
    expect(readFileSync(join(folder, sha256(photo))).equals(photo)).toBe(true);
    expect(records(file).get(ids.photos)!.media).toEqual([
      { sha256: sha256(photo), mimeType: "image/png", size: photo.length },
      { sha256: sha256(voice), mimeType: "audio/ogg", size: voice.length },
    ]);

    const fresh = join(t.dir, "fresh.db");
    const imported = await t.run(["sessions", "import", file, "--media-dir", folder, "--db", fresh]);
    expect(imported.code, imported.stderr).toBe(0);
    await withDb(fresh, async (db) => {
      expect(Buffer.from((await db.readMedia(sha256(photo)))!).equals(photo)).toBe(true);
      expect(Buffer.from((await db.readMedia(sha256(voice)))!).equals(voice)).toBe(true);
      expect((await db.checkMedia()).missingCount).toBe(0);
    });

    // Without the folder the references dangle; with a folder missing a file the line is rejected.
    const bare = join(t.dir, "bare.db");
    expect((await t.run(["sessions", "import", file, "--db", bare])).code).toBe(0);
    await withDb(bare, async (db) => expect((await db.checkMedia()).missingCount).toBe(3));
    rmSync(join(folder, sha256(photo)));
    const partial = join(t.dir, "partial.db");
    const rejected = await t.run(["sessions", "import", file, "--media-dir", folder, "--db", partial]);
    expect(rejected.code).toBe(1);
    expect(rejected.stdout).toBe("Imported 1 session, skipped 0 already present.\n");
    expect(rejected.stderr).toContain(`line 1: media[0] (${sha256(photo).slice(0, 12)}…): ${join(folder, sha256(photo))} does not exist`);
    await withDb(partial, async (db) => {
      expect(await db.getSession(ids.photos)).toBeNull();
      expect(await db.getSession(ids.voice)).not.toBeNull();
    });
  });

  it("bad option values are usage errors (exit 2) that say what to do", async () => {
    await seed(t);
    const file = join(t.dir, "x.jsonl");
    const bad = await t.run(["sessions", "export", file, "--media", "base64", "--db", t.db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'threadline: option "--media <mode>" argument "base64" is invalid. Allowed choices are inline, skip. Run "threadline sessions export --help" for usage.\n',
    );
    const both = await t.run(["sessions", "export", file, "--media", "skip", "--media-dir", t.dir, "--db", t.db]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--media skip and --media-dir do not go together");
    expect(existsSync(file)).toBe(false);
    const missing = await t.run(["sessions", "import", file, "--media-dir", join(t.dir, "nowhere"), "--db", t.db]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`No such folder: ${join(t.dir, "nowhere")}`);
    const hermes = await t.run(["sessions", "import", file, "--from", "hermes", "--media-dir", t.dir, "--db", t.db]);
    expect(hermes.code).toBe(2);
    expect(hermes.stderr).toContain("--media-dir works with --from jsonl only");
  });

  it("a line whose media data is bad is rejected with a clear message, and nothing of it is written", async () => {
    const { photo, voice, ids } = await seed(t);
    const file = join(t.dir, "inline.jsonl");
    await t.run(["sessions", "export", file, "--db", t.db]);
    const byId = records(file);
    const photos = byId.get(ids.photos)!;
    const damaged = Buffer.from(photo);
    damaged[1000] = damaged[1000]! ^ 0xff;
    const variants: Array<[string, SessionRecord["media"], string]> = [
      [
        "changed",
        [{ ...photos.media![0]!, data: damaged.toString("base64") }, photos.media![1]!],
        `the bytes hash to ${sha256(damaged)}, not to the sha256 the entry names`,
      ],
      [
        "cut",
        [photos.media![0]!, { ...photos.media![1]!, data: voice.subarray(0, 999).toString("base64") }],
        `data decodes to 999 bytes, but size says ${voice.length}`,
      ],
      ["not base64", [{ ...photos.media![0]!, data: "not base64!" }], "data is not valid base64"],
    ];
    for (const [what, media, message] of variants) {
      const bad = join(t.dir, `bad-${what.replace(/ /gu, "-")}.jsonl`);
      writeFileSync(bad, `${JSON.stringify(byId.get(ids.voice))}\n${JSON.stringify({ ...photos, media })}\n`);
      const target = join(t.dir, `bad-${what.replace(/ /gu, "-")}.db`);
      const result = await t.run(["sessions", "import", bad, "--db", target]);
      expect(result.code, what).toBe(1);
      expect(result.stdout).toBe("Imported 1 session, skipped 0 already present.\n");
      expect(result.stderr, what).toContain("1 bad line was not imported:\n  line 2: media[");
      expect(result.stderr, what).toContain(message);
      await withDb(target, async (db) => {
        expect(await db.getSession(ids.photos), what).toBeNull();
        // The bad line's photo is not stored, even where its own entry was good; the voice note came with line 1.
        expect(await db.getMedia(sha256(photo)), what).toBeNull();
        expect((await db.checkMedia()).blobs, what).toBe(1);
      });
    }
  });

  it("sessions show names attachments, voice notes included, with names stripped of terminal escapes", async () => {
    const photo = pngBytes(2048);
    const id = await t.seed((db) =>
      addMediaSession(db, {
        id: "show_media",
        messages: [
          {
            text: "two files",
            attachments: [
              { bytes: photo, kind: "image", mimeType: "image/png", fileName: "evil\u001b[2J\u001b]0;pwned\u0007name\u202e.png" },
              { bytes: pngBytes(100), kind: "file", mimeType: "application/pdf", fileName: "report.pdf", caption: "Q3\nnumbers" },
            ],
          },
          { attachments: [{ bytes: pngBytes(12_288), kind: "audio", mimeType: "audio/ogg", voice: true }] },
        ],
      }),
    );
    const show = await t.run(["sessions", "show", id, "--db", t.db]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain("  two files\n  [image: evilname.png, image/png, 2.0 KiB]\n  [file: report.pdf, application/pdf, 100 B: Q3 numbers]\n");
    expect(show.stdout).toContain("  [voice note, audio/ogg, 12.0 KiB]\n");
    expect(show.stdout).not.toMatch(/[\u001b\u0007\u202e]/u);
  });
});
