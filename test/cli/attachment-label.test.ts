/**
 * How `sessions show` names attachments, and what it does to the sender's names: escape
 * sequences (CSI, OSC, C1 forms), control characters and bidi overrides are stripped, line
 * breaks become spaces, and a long name is cut.
 */
import { describe, expect, it } from "vitest";
import { attachmentLabel, terminalSafe } from "../../src/cli/attachment-label.js";
import { messageText } from "../../src/cli/message-text.js";

describe("attachment labels", () => {
  it("names each kind with its file name, type, size and caption", () => {
    expect(attachmentLabel({ kind: "image", mimeType: "image/jpeg", size: 204_800, fileName: "photo.jpg" })).toBe("[image: photo.jpg, image/jpeg, 200.0 KiB]");
    expect(attachmentLabel({ kind: "audio", voice: true, mimeType: "audio/ogg", size: 12_288, fileName: "voice.oga" })).toBe(
      "[voice note, audio/ogg, 12.0 KiB]",
    );
    expect(attachmentLabel({ kind: "audio", mimeType: "audio/mpeg", size: 3_000_000, fileName: "song.mp3" })).toBe("[audio: song.mp3, audio/mpeg, 2.9 MiB]");
    expect(attachmentLabel({ kind: "video", mimeType: "video/mp4", size: 10 })).toBe("[video: video/mp4, 10 B]");
    expect(attachmentLabel({ kind: "file", mimeType: "application/pdf", size: 100, fileName: "r.pdf", caption: "Q3" }, { stored: false })).toBe(
      "[file: r.pdf, application/pdf, 100 B; bytes not stored: Q3]",
    );
    expect(attachmentLabel({})).toBe("[attachment]");
  });

  it("strips terminal escapes, control characters and bidi overrides from what the sender chose", () => {
    expect(terminalSafe("a\u001b[31mred\u001b[0m")).toBe("ared");
    expect(terminalSafe("x\u001b]8;;https://evil.example\u0007link\u001b]8;;\u001b\\y")).toBe("xlinky");
    expect(terminalSafe("\u009b2Jclear\u009d0;title\u009cok")).toBe("clearok");
    expect(terminalSafe("\u001bcreset")).toBe("reset");
    expect(terminalSafe("txt\u202egpj.exe\u2066")).toBe("txtgpj.exe");
    expect(terminalSafe("two\r\nlines\u0000\u0008")).toBe("two lines");
    expect(terminalSafe("a".repeat(200))).toBe(`${"a".repeat(119)}…`);
  });

  it("messageText puts the labels where the parts are", () => {
    const content = [
      { type: "text", text: "see" },
      { type: "attachment", attachment: { sha256: "a".repeat(64), kind: "image", mimeType: "image/png", size: 2048, fileName: "p.png" } },
      { type: "image_url", image_url: { url: "data:x" } },
    ];
    expect(messageText(content)).toBe("see\n[image: p.png, image/png, 2.0 KiB]\n[image_url]");
    expect(messageText(content, { missingMedia: new Set(["a".repeat(64)]) })).toBe("see\n[image: p.png, image/png, 2.0 KiB; bytes not stored]\n[image_url]");
  });
});
