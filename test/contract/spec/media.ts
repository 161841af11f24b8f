/**
 * Contract: media — blobs stored content-addressed in chunks (de-duplicated, checked against
 * their SHA-256, read whole or streamed), the index of the attachment parts of every message
 * written (append, turn, routing write, replace, import), scoping by session, removal of blobs
 * nothing refers to any more (with their last references, or by the sweep, after the grace
 * period), the check `doctor` runs, and attachment parts validated on write.
 *
 * @module
 */

import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { type AttachmentRef, type ContentPart, MEDIA_GRACE_SECONDS, type NewMessage, type SessionDB, type StoredMedia } from "../../../src/store/contract.js";
import { DatabaseCorruptError, InvalidInputError, LeaseLostError, NotFoundError } from "../../../src/store/errors.js";
import { collect, contractArea, expectReject, nowSeconds, routeFields, user } from "../harness.js";
import type { SessionDBTestInitializer } from "../session-db-test-initializer.js";

/** Older than the grace period: a blob put at this time may go as soon as nothing refers to it. */
const OLD = (): number => nowSeconds() - MEDIA_GRACE_SECONDS - 600;

const sha = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** The attachment part referring to a stored blob. */
function part(media: StoredMedia, overrides: Partial<AttachmentRef> = {}): ContentPart {
  return { type: "attachment", attachment: { sha256: media.sha256, kind: "image", mimeType: media.mimeType, size: media.size, ...overrides } };
}

/** A user message with a caption and attachments. */
function withMedia(text: string, ...parts: ContentPart[]): NewMessage {
  return { role: "user", content: [{ type: "text", text }, ...parts] };
}

async function put(db: SessionDB, bytes: Uint8Array, at?: number, mimeType = "image/png"): Promise<StoredMedia> {
  return db.putMedia({ bytes }, at === undefined ? { mimeType } : { mimeType, at });
}

export function mediaTests(init: SessionDBTestInitializer): void {
  contractArea(init, "media", (test, { db, anotherHandle, freshStore }) => {
    test("putMedia stores a blob by its SHA-256 and reads it back; the same bytes again are one blob, renewed", async () => {
      const bytes = randomBytes(1000);
      const first = await put(db(), bytes, 1_000);
      expect(first).toEqual({ sha256: sha(bytes), mimeType: "image/png", size: 1000, createdAt: 1_000 });
      const again = await db().putMedia({ bytes: Buffer.from(bytes) }, { mimeType: "image/jpeg", sha256: sha(bytes), at: 2_000 });
      // The blob as first stored: same record, not a second copy.
      expect(again).toEqual(first);
      expect(await db().getMedia(first.sha256)).toEqual(first);
      expect(Buffer.from((await db().readMedia(first.sha256))!)).toEqual(bytes);
      const check = await db().checkMedia();
      expect(check).toMatchObject({ blobs: 1, bytes: 1000, references: 0, unreferenced: 1, missingCount: 0, missing: [], corrupt: [] });
      // Renewed by the second put (at 2 000): a sweep of what was stored before 1 500 keeps it.
      expect(await db().sweepMedia({ before: 1_500 })).toBe(0);
      expect(await db().sweepMedia({ before: 2_500 })).toBe(1);
      expect(await db().getMedia(first.sha256)).toBeNull();
    });

    test("an empty blob is a blob", async () => {
      const empty = await put(db(), new Uint8Array(0));
      expect(empty.size).toBe(0);
      expect((await db().readMedia(empty.sha256))!.byteLength).toBe(0);
      expect(await collect((await db().streamMedia(empty.sha256))!)).toEqual([]);
    });

    test("a blob not stored reads as null", async () => {
      const missing = sha(Buffer.from("never stored"));
      expect(await db().getMedia(missing)).toBeNull();
      expect(await db().readMedia(missing)).toBeNull();
      expect(await db().streamMedia(missing)).toBeNull();
    });

    test("a sha256 that does not match the bytes is refused and nothing is stored", async () => {
      const bytes = Buffer.from("the real bytes");
      const wrong = sha(Buffer.from("other bytes"));
      const error = await expectReject(() => db().putMedia({ bytes }, { mimeType: "text/plain", sha256: wrong }), InvalidInputError, /does not match/);
      expect(error.field).toBe("sha256");
      expect(await db().getMedia(sha(bytes))).toBeNull();
      expect((await db().checkMedia()).blobs).toBe(0);
      await expectReject(() => db().putMedia({ bytes }, { mimeType: "" }), InvalidInputError, /mimeType/);
      await expectReject(() => db().putMedia({ bytes }, { mimeType: "text/plain\r\nX-Evil: 1" }), InvalidInputError, /mimeType/);
      await expectReject(() => db().putMedia({ bytes }, { mimeType: "text/plain", sha256: "ABC" }), InvalidInputError, /sha256/);
      await expectReject(
        () => db().putMedia({ file: join(tmpdir(), "tl-no-such-file-here") }, { mimeType: "text/plain" }),
        InvalidInputError,
        /cannot be read/,
      );
      await expectReject(() => db().getMedia("not a sha"), InvalidInputError, /sha256/);
    });

    test("a file of several MB is stored in chunks and reads and streams back byte for byte", async () => {
      const dir = mkdtempSync(join(tmpdir(), "tl-media-"));
      try {
        const bytes = randomBytes(3 * 1024 * 1024 + 12_345);
        const file = join(dir, "photo.bin");
        writeFileSync(file, bytes);
        const stored = await db().putMedia({ file }, { mimeType: "application/octet-stream", sha256: sha(bytes) });
        expect(stored).toMatchObject({ sha256: sha(bytes), size: bytes.length });
        expect(Buffer.compare(Buffer.from((await db().readMedia(stored.sha256))!), bytes)).toBe(0);
        const chunks = await collect((await db().streamMedia(stored.sha256))!);
        expect(chunks.length).toBeGreaterThan(1);
        for (const chunk of chunks) expect(chunk.byteLength).toBeLessThanOrEqual(256 * 1024);
        expect(Buffer.compare(Buffer.concat(chunks), bytes)).toBe(0);
        // The same bytes from memory are the same blob.
        expect(await put(db(), bytes)).toEqual(stored);
        expect((await db().checkMedia({ verify: true })).corrupt).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    test("a blob removed while it is streamed ends the stream with NotFoundError", async () => {
      const stored = await put(db(), randomBytes(600 * 1024));
      const stream = (await db().streamMedia(stored.sha256))![Symbol.asyncIterator]();
      expect((await stream.next()).value.byteLength).toBe(256 * 1024);
      expect(await db().sweepMedia({ before: nowSeconds() + 60 })).toBe(1);
      await expectReject(() => stream.next(), NotFoundError, /removed/);
    });

    test("two handles storing the same bytes at once both succeed with one blob", async () => {
      const other = await anotherHandle();
      const bytes = randomBytes(600 * 1024);
      const results = await Promise.all([put(db(), bytes), put(other, bytes), put(db(), bytes), put(other, bytes)]);
      for (const r of results) expect(r.sha256).toBe(sha(bytes));
      expect((await db().checkMedia({ verify: true })).blobs).toBe(1);
      expect(Buffer.compare(Buffer.from((await other.readMedia(sha(bytes)))!), bytes)).toBe(0);
    });

    test("every message write indexes its attachment parts: append, turn, routing write, replace", async () => {
      const a = await put(db(), Buffer.from("photo a"));
      const b = await put(db(), Buffer.from("photo b"));
      const c = await put(db(), Buffer.from("voice c"), undefined, "audio/ogg");
      await db().createSession({ id: "s", source: "telegram" });
      const m1 = await db().appendMessage("s", withMedia("look", part(a, { caption: "sunset", fileName: "a.png" }), part(b)));
      const [, m3] = await db().appendTurn("s", [
        { role: "assistant", content: "nice" },
        withMedia("", part(c, { kind: "audio", voice: true, meta: { durationSeconds: 3 } })),
      ]);
      let list = await db().listAttachments("s");
      expect(list).toEqual([
        {
          sha256: a.sha256,
          kind: "image",
          mimeType: "image/png",
          size: a.size,
          caption: "sunset",
          fileName: "a.png",
          sessionId: "s",
          messageId: m1,
          stored: true,
        },
        { sha256: b.sha256, kind: "image", mimeType: "image/png", size: b.size, sessionId: "s", messageId: m1, stored: true },
        {
          sha256: c.sha256,
          kind: "audio",
          mimeType: "audio/ogg",
          size: c.size,
          voice: true,
          meta: { durationSeconds: 3 },
          sessionId: "s",
          messageId: m3,
          stored: true,
        },
      ]);

      // The gateway's routing write (the turn's user message).
      const route = await db().writeRoute({
        key: "agent:main:telegram:dm:1",
        expectedVersion: null,
        route: routeFields("r", 1_000),
        createSession: { id: "r", source: "telegram", startedAt: 1_000 },
        appendMessages: [withMedia("album", part(a), part(b))],
      });
      expect(route).not.toBeNull();
      expect((await db().listAttachments("r")).map((x) => x.sha256)).toEqual([a.sha256, b.sha256]);

      // Replacing the transcript replaces the references.
      await db().replaceMessages("s", [user("summary"), withMedia("kept", part(c, { kind: "audio" }))]);
      list = await db().listAttachments("s");
      expect(list.map((x) => [x.sha256, x.kind])).toEqual([[c.sha256, "audio"]]);
      expect((await db().checkMedia()).references).toBe(3);
    });

    test("a fenced append with attachments indexes them, and a lost fence writes neither the message nor its references", async () => {
      const a = await put(db(), Buffer.from("fenced photo"));
      await db().createSession({ id: "s", source: "telegram" });
      const lease = (await db().acquireLease("k", "me", { ttlSeconds: 60 }))!;
      const fence = { key: "k", token: lease.token };
      const [id] = await db().appendTurn("s", [withMedia("q", part(a))], { fence });
      expect((await db().listAttachments("s")).map((x) => x.messageId)).toEqual([id]);
      await db().releaseLease("k", "me", lease.token);
      const taken = (await db().acquireLease("k", "other", { ttlSeconds: 60 }))!;
      await expectReject(() => db().appendMessage("s", withMedia("late", part(a)), { fence }), LeaseLostError);
      expect(await db().listAttachments("s")).toHaveLength(1);
      expect((await db().getMessages("s")).map((m) => m.id)).toEqual([id]);
      await db().appendMessage("s", withMedia("new holder", part(a)), { fence: { key: "k", token: taken.token } });
      expect(await db().listAttachments("s")).toHaveLength(2);
    });

    test("continueSession and import index the attachments of the messages they write", async () => {
      const a = await put(db(), Buffer.from("continued photo"));
      await db().createSession({ id: "p", source: "cli", startedAt: 100 });
      const first = await db().appendMessage("p", withMedia("first", part(a)));
      const child = await db().continueSession({
        parentId: "p",
        reason: "compression",
        ifLastMessageId: first,
        createSession: { id: "c", source: "cli" },
        messages: [withMedia("carried", part(a))],
      });
      expect(child?.id).toBe("c");
      expect((await db().listAttachments("c")).map((x) => x.sha256)).toEqual([a.sha256]);

      // Import into a store holding the blob: the imported messages' references are indexed.
      const lines = (await collect(db().exportSessionLines())).map((line) => Buffer.from(line).toString("utf8"));
      const other = await freshStore();
      await put(other, Buffer.from("continued photo"));
      expect(await other.importSessions(lines)).toMatchObject({ imported: 2, errors: [] });
      expect((await other.listAttachments("p")).map((x) => [x.sha256, x.stored])).toEqual([[a.sha256, true]]);
      expect((await other.listAttachments("c")).map((x) => x.sha256)).toEqual([a.sha256]);
      expect((await other.checkMedia()).references).toBe(2);
    });

    test("listAttachments leaves out rewound messages, oldest first; findAttachment is scoped to the session", async () => {
      const a = await put(db(), Buffer.from("first photo"));
      const b = await put(db(), Buffer.from("second photo"));
      await db().createSession({ id: "s", source: "cli" });
      await db().createSession({ id: "t", source: "cli" });
      const m1 = await db().appendMessage("s", withMedia("one", part(a)));
      await db().appendMessage("s", { role: "assistant", content: "ok" });
      const m3 = await db().appendMessage("s", withMedia("two", part(b), part(a, { caption: "again" })));
      expect((await db().listAttachments("s")).map((x) => [x.messageId, x.sha256])).toEqual([
        [m1, a.sha256],
        [m3, b.sha256],
        [m3, a.sha256],
      ]);
      // The newest reference of the session.
      expect(await db().findAttachment("s", a.sha256)).toMatchObject({ sessionId: "s", messageId: m3, caption: "again", stored: true });
      await db().rewindMessages("s", 1);
      expect((await db().listAttachments("s")).map((x) => [x.messageId, x.sha256])).toEqual([[m1, a.sha256]]);
      // Another session's blob is not this session's attachment.
      await db().appendMessage("t", withMedia("mine", part(b)));
      expect(await db().findAttachment("t", a.sha256)).toBeNull();
      expect(await db().findAttachment("t", b.sha256)).toMatchObject({ sessionId: "t", sha256: b.sha256 });
      expect(await db().findAttachment("nobody", b.sha256)).toBeNull();
      expect(await db().listAttachments("nobody")).toEqual([]);
    });

    test("deleting a session removes the blobs only it referred to, once past the grace period; shared and young ones stay", async () => {
      const only = await put(db(), Buffer.from("only doomed refers to me"), OLD());
      const shared = await put(db(), Buffer.from("shared with keeper"), OLD());
      const young = await put(db(), Buffer.from("stored just now"));
      const loose = await put(db(), Buffer.from("nobody refers to me"), OLD());
      await db().createSession({ id: "doomed", source: "cli" });
      await db().createSession({ id: "keeper", source: "cli" });
      await db().appendTurn("doomed", [withMedia("a", part(only), part(shared)), withMedia("b", part(young), part(only))]);
      await db().appendMessage("keeper", withMedia("c", part(shared)));
      expect(await db().deleteSession("doomed")).toBe(true);
      expect(await db().getMedia(only.sha256)).toBeNull();
      expect(await db().readMedia(only.sha256)).toBeNull();
      expect(await db().getMedia(shared.sha256)).not.toBeNull();
      expect(await db().getMedia(young.sha256)).not.toBeNull();
      // Not the deletion's business: a blob no message of the session referred to.
      expect(await db().getMedia(loose.sha256)).not.toBeNull();
      expect(await db().checkMedia({ verify: true })).toMatchObject({ blobs: 3, references: 1, unreferenced: 2, missingCount: 0, corrupt: [] });
    });

    test("pruning, clearing and replacing remove the blobs their messages alone referred to", async () => {
      const pruned = await put(db(), Buffer.from("in a pruned session"), OLD());
      const cleared = await put(db(), Buffer.from("in a cleared session"), OLD());
      const replaced = await put(db(), Buffer.from("replaced away"), OLD());
      const stays = await put(db(), Buffer.from("still in the replacement"), OLD());
      const young = await put(db(), Buffer.from("young in a pruned session"));
      await db().createSession({ id: "old", source: "cli", startedAt: 1_000 });
      await db().appendMessage("old", { ...withMedia("x", part(pruned), part(young)), timestamp: 1_000 });
      await db().endSession("old", "done", { endedAt: 1_001 });
      await db().createSession({ id: "live", source: "cli" });
      await db().appendMessage("live", withMedia("y", part(cleared)));
      await db().createSession({ id: "edited", source: "cli" });
      await db().appendMessage("edited", withMedia("z", part(replaced), part(stays)));

      expect(await db().pruneSessions({ olderThanDays: 1 })).toBe(1);
      expect(await db().getMedia(pruned.sha256)).toBeNull();
      expect(await db().getMedia(young.sha256)).not.toBeNull();
      expect(await db().clearMessages("live")).toBe(1);
      expect(await db().getMedia(cleared.sha256)).toBeNull();
      await db().replaceMessages("edited", [withMedia("z2", part(stays))]);
      expect(await db().getMedia(replaced.sha256)).toBeNull();
      expect(await db().getMedia(stays.sha256)).not.toBeNull();
      expect(await db().checkMedia()).toMatchObject({ blobs: 2, references: 1, unreferenced: 1, missingCount: 0 });
    });

    test("sweepMedia removes unreferenced blobs past the grace period and keeps young and referenced ones", async () => {
      const old = await put(db(), Buffer.from("old and alone"), OLD());
      const young = await put(db(), Buffer.from("young and alone"));
      const used = await put(db(), Buffer.from("old and used"), OLD());
      await db().createSession({ id: "s", source: "cli" });
      await db().appendMessage("s", withMedia("u", part(used)));
      expect(await db().sweepMedia()).toBe(1);
      expect(await db().getMedia(old.sha256)).toBeNull();
      expect(await db().getMedia(young.sha256)).not.toBeNull();
      expect(await db().getMedia(used.sha256)).not.toBeNull();
      // With an explicit cutoff the young one goes too.
      expect(await db().sweepMedia({ before: nowSeconds() + 60 })).toBe(1);
      expect(await db().getMedia(young.sha256)).toBeNull();
      expect(await db().sweepMedia({ before: nowSeconds() + 60 })).toBe(0);
      await expectReject(() => db().sweepMedia({ before: Number.NaN }), InvalidInputError, /before/);
    });

    test("checkMedia reports references whose blob is not stored", async () => {
      const never = sha(Buffer.from("imported without media"));
      const kept = await put(db(), Buffer.from("kept"));
      await db().createSession({ id: "s", source: "cli" });
      const id = await db().appendMessage(
        "s",
        withMedia(
          "gone",
          { type: "attachment", attachment: { sha256: never, kind: "file", mimeType: "application/pdf", size: 10, fileName: "a.pdf" } },
          part(kept),
        ),
      );
      expect(await db().checkMedia()).toEqual({
        blobs: 1,
        bytes: kept.size,
        references: 2,
        missing: [{ sessionId: "s", messageId: id, sha256: never }],
        missingCount: 1,
        unreferenced: 0,
        corrupt: [],
      });
      expect((await db().listAttachments("s")).map((x) => [x.sha256, x.stored])).toEqual([
        [never, false],
        [kept.sha256, true],
      ]);
      expect(await db().findAttachment("s", never)).toMatchObject({ stored: false, fileName: "a.pdf" });
      expect(await db().readMedia(never)).toBeNull();
    });

    // Only a backend that lets the suite damage its data (execRaw) runs this one.
    const execRaw = init.execRaw;
    if (execRaw !== undefined)
      test("checkMedia with verify finds a blob whose stored bytes were damaged", async () => {
        const good = await put(db(), randomBytes(300 * 1024));
        const bad = await put(db(), randomBytes(300 * 1024));
        expect((await db().checkMedia({ verify: true })).corrupt).toEqual([]);
        await execRaw(db(), "UPDATE media_chunks SET data = ? WHERE sha256 = ? AND seq = 1", [Buffer.from("not the bytes"), bad.sha256]);
        expect((await db().checkMedia({ verify: true })).corrupt).toEqual([bad.sha256]);
        expect((await db().checkMedia()).corrupt).toEqual([]);
        expect(await db().readMedia(good.sha256)).not.toBeNull();
      });

    if (execRaw !== undefined)
      test("a blob missing a chunk reads as damaged, whole or streamed (the first chunk, read with the row, too)", async () => {
        const first = await put(db(), randomBytes(300 * 1024));
        const second = await put(db(), randomBytes(300 * 1024));
        await execRaw(db(), "DELETE FROM media_chunks WHERE sha256 = ? AND seq = 0", [first.sha256]);
        await execRaw(db(), "DELETE FROM media_chunks WHERE sha256 = ? AND seq = 1", [second.sha256]);
        for (const { sha256 } of [first, second]) {
          await expectReject(() => db().readMedia(sha256), DatabaseCorruptError, /damaged/);
          const stream = (await db().streamMedia(sha256))!;
          await expectReject(() => collect(stream), DatabaseCorruptError, /chunk \d of 2 is missing/);
        }
      });

    test("attachment parts are checked on write; a bad one names its field and nothing is written", async () => {
      const ok = await put(db(), Buffer.from("fine"));
      await db().createSession({ id: "s", source: "cli" });
      const bad = (attachment: unknown): NewMessage => ({
        role: "user",
        content: [{ type: "text", text: "t" }, { type: "attachment", attachment } as ContentPart],
      });
      const base = { sha256: ok.sha256, kind: "image", mimeType: "image/png", size: ok.size };
      const cases: Array<[unknown, string]> = [
        [null, "message.content[1].attachment"],
        [{ ...base, sha256: ok.sha256.toUpperCase() }, "message.content[1].attachment.sha256"],
        [{ ...base, sha256: "abc" }, "message.content[1].attachment.sha256"],
        [{ ...base, kind: "sticker" }, "message.content[1].attachment.kind"],
        [{ ...base, mimeType: "" }, "message.content[1].attachment.mimeType"],
        [{ ...base, mimeType: "x".repeat(256) }, "message.content[1].attachment.mimeType"],
        [{ ...base, size: -1 }, "message.content[1].attachment.size"],
        [{ ...base, size: 1.5 }, "message.content[1].attachment.size"],
        [{ ...base, size: "10" }, "message.content[1].attachment.size"],
        [{ ...base, fileName: 3 }, "message.content[1].attachment.fileName"],
        [{ ...base, caption: { text: "x" } }, "message.content[1].attachment.caption"],
        [{ ...base, voice: "yes" }, "message.content[1].attachment.voice"],
        [{ ...base, meta: [1] }, "message.content[1].attachment.meta"],
      ];
      for (const [attachment, field] of cases) {
        const error = await expectReject(() => db().appendMessage("s", bad(attachment)), InvalidInputError);
        expect(error.field, JSON.stringify(attachment)).toBe(field);
      }
      const turn = await expectReject(() => db().appendTurn("s", [withMedia("fine", part(ok)), bad({ ...base, kind: "gif" })]), InvalidInputError);
      expect(turn.field).toBe("messages[1].content[1].attachment.kind");
      expect(await db().getMessages("s")).toEqual([]);
      expect(await db().listAttachments("s")).toEqual([]);
      await db().appendMessage("s", bad({ ...base, fileName: null, caption: null, meta: null, voice: false }));
      expect(await db().listAttachments("s")).toHaveLength(1);
    });
  });
}
