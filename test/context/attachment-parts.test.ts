import { describe, expect, it } from "vitest";
import { attachmentPlaceholder, formatSize, isModelImage, withAttachmentPlaceholders } from "../../src/context/internal.js";
import { tokenCounterFor } from "../../src/context/token-count.js";

const sha256 = "c".repeat(64);

describe("attachment placeholders", () => {
  it("say what each kind was, briefly", () => {
    expect(attachmentPlaceholder({ kind: "image", mimeType: "image/heic", size: 2_400_000 })).toBe("[image: image/heic, 2.3 MB]");
    expect(attachmentPlaceholder({ kind: "audio", mimeType: "audio/ogg", size: 12_288, voice: true })).toBe("[voice note: audio/ogg, 12 KB; not transcribed]");
    expect(attachmentPlaceholder({ kind: "audio", mimeType: "audio/ogg", size: 12_288, voice: true, meta: { transcribed: true } })).toBe(
      "[voice note: transcribed above]",
    );
    expect(attachmentPlaceholder({ kind: "audio", mimeType: "audio/mpeg", size: 3_250_586, fileName: "song.mp3" })).toBe(
      "[audio: song.mp3, audio/mpeg, 3.1 MB; not transcribed]",
    );
    expect(attachmentPlaceholder({ kind: "video", mimeType: "video/mp4", size: 512 })).toBe("[video: video/mp4, 512 bytes]");
    expect(attachmentPlaceholder({ kind: "file", mimeType: "text/plain; charset=utf-8", size: 1, fileName: "a.txt" })).toBe(
      "[file: a.txt, text/plain, 1 byte]",
    );
    expect(attachmentPlaceholder({ kind: "file", mimeType: "application/pdf", size: 204_800 }, { missing: true })).toBe(
      "[file: application/pdf, 200 KB; bytes not stored]",
    );
    // A caption on one line, cut when long.
    expect(attachmentPlaceholder({ kind: "image", mimeType: "image/png", size: 10, caption: "two\nlines" })).toBe("[image: image/png, 10 bytes]: two lines");
    expect(attachmentPlaceholder({ kind: "image", mimeType: "image/png", size: 10, caption: "x".repeat(300) })).toHaveLength(
      "[image: image/png, 10 bytes]: ".length + 201,
    );
  });

  it("sizes in units of 1,024; model images are jpeg, png, gif and webp", () => {
    expect([0, 1023, 1024, 1_048_575, 1_048_576, 209_715_200].map(formatSize)).toEqual(["0 bytes", "1023 bytes", "1 KB", "1 MB", "1 MB", "200 MB"]);
    expect(["image/jpeg", "image/png", "image/gif", "image/webp", "IMAGE/PNG"].every((mimeType) => isModelImage({ kind: "image", mimeType }))).toBe(true);
    expect(isModelImage({ kind: "image", mimeType: "image/svg+xml" })).toBe(false);
    expect(isModelImage({ kind: "file", mimeType: "image/png" })).toBe(false);
  });

  it("replace attachment parts in a content, leave other contents as they are", () => {
    const content = [
      { type: "text", text: "hi" },
      { type: "attachment", attachment: { sha256, kind: "image", mimeType: "image/png", size: 10 } },
    ];
    expect(withAttachmentPlaceholders(content)).toEqual([
      { type: "text", text: "hi" },
      { type: "text", text: "[image: image/png, 10 bytes]" },
    ]);
    const plain = [{ type: "text", text: "hi" }];
    expect(withAttachmentPlaceholders(plain)).toBe(plain);
    expect(withAttachmentPlaceholders("text")).toBe("text");
  });

  it("an attachment part is counted as its placeholder (with the not-stored note), not as an image", async () => {
    const counter = await tokenCounterFor("gpt-4o");
    const ref = { sha256, kind: "file" as const, mimeType: "application/pdf", size: 204_800, fileName: "plan.pdf" };
    const counted = counter.countMessage({ role: "user", content: [{ type: "attachment", attachment: ref }] });
    expect(counted).toBe(counter.countMessage({ role: "user", content: attachmentPlaceholder(ref, { missing: true }) }));
    expect(counted).toBeLessThan(100);
  });
});
