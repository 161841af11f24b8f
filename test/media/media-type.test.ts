import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detectMediaType, isModelImageType, looksLikeText } from "../../src/media/index.js";

const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`./fixtures/${name}`, import.meta.url)));
const detect = (name: string, kind: string, mimeType: string | null = null) => {
  const bytes = fixture(name);
  return detectMediaType(bytes, bytes.byteLength, { kind, mimeType });
};

describe("detectMediaType", () => {
  it("types images, audio and documents by their bytes, not by what was declared", async () => {
    expect(await detect("pixel.png", "image", "image/jpeg")).toEqual({ ok: true, mimeType: "image/png", kind: "image" });
    expect(await detect("pixel.jpg", "image")).toEqual({ ok: true, mimeType: "image/jpeg", kind: "image" });
    // A voice note in Ogg Opus: the codec parameter is dropped from the stored type.
    expect(await detect("voice.ogg", "audio", "audio/ogg")).toEqual({ ok: true, mimeType: "audio/ogg", kind: "audio" });
    expect(await detect("doc.pdf", "file", "application/octet-stream")).toEqual({ ok: true, mimeType: "application/pdf", kind: "file" });
    // A photo sent as a document is an image.
    expect(await detect("pixel.jpg", "file")).toEqual({ ok: true, mimeType: "image/jpeg", kind: "image" });
  });

  it("refuses programs whatever they were declared as", async () => {
    const elf = await detect("program.elf", "file", "application/pdf");
    expect(elf).toMatchObject({ ok: false, mimeType: "application/x-elf" });
    expect(elf.ok ? "" : elf.reason).toBe("it is a program (application/x-elf), and programs are not accepted");
    expect(await detect("program.exe", "file")).toMatchObject({ ok: false, mimeType: "application/x-msdownload" });
  });

  it("refuses a declared photo, audio or video whose bytes are not one", async () => {
    const pdfAsPhoto = await detect("doc.pdf", "image", "image/jpeg");
    expect(pdfAsPhoto).toEqual({ ok: false, mimeType: "application/pdf", reason: "it was sent as an image but its bytes are not one (application/pdf)" });
    expect(await detect("pixel.png", "audio")).toMatchObject({ ok: false, mimeType: "image/png" });
    expect(await detect("notes.txt", "video")).toMatchObject({ ok: false, mimeType: "text/plain" });
  });

  it("takes UTF-8 text as the declared text type or text/plain, and keeps an SVG as a file", async () => {
    expect(await detect("notes.txt", "file", "text/markdown; charset=utf-8")).toEqual({ ok: true, mimeType: "text/markdown", kind: "file" });
    expect(await detect("notes.txt", "file", "application/pdf")).toEqual({ ok: true, mimeType: "text/plain", kind: "file" });
    // An SVG can carry script: it is kept under its own type, never as an image the page shows inline.
    expect(await detect("icon.svg", "image", "image/svg+xml")).toEqual({ ok: true, mimeType: "image/svg+xml", kind: "file" });
    const bare = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"></svg>');
    expect(await detectMediaType(bare, bare.byteLength, { kind: "file" })).toEqual({ ok: true, mimeType: "image/svg+xml", kind: "file" });
  });

  it("calls bytes that are neither a known type nor text application/octet-stream", async () => {
    const bytes = new Uint8Array([0, 1, 2, 3, 250, 251, 252, 0, 7]);
    expect(await detectMediaType(bytes, bytes.byteLength, { kind: "file" })).toEqual({ ok: true, mimeType: "application/octet-stream", kind: "file" });
    expect(await detectMediaType(bytes, bytes.byteLength, { kind: "image" })).toMatchObject({ ok: false, mimeType: "application/octet-stream" });
  });

  it("names the image types models take", () => {
    expect(["image/jpeg", "image/png", "image/gif", "image/webp", "IMAGE/PNG; x=1"].map(isModelImageType)).toEqual([true, true, true, true, true]);
    expect(["image/svg+xml", "image/tiff", "image/heic", "application/pdf"].map(isModelImageType)).toEqual([false, false, false, false]);
  });
});

describe("looksLikeText", () => {
  it("rejects NUL bytes and invalid UTF-8, and allows a sequence cut by the end of a head", () => {
    const text = new TextEncoder().encode("naïve €");
    expect(looksLikeText(text, true)).toBe(true);
    expect(looksLikeText(new Uint8Array([104, 0, 105]), true)).toBe(false);
    expect(looksLikeText(new Uint8Array([0xc3, 0x28]), true)).toBe(false);
    const cut = text.subarray(0, text.length - 1);
    expect(looksLikeText(cut, false)).toBe(true);
    expect(looksLikeText(cut, true)).toBe(false);
  });
});
