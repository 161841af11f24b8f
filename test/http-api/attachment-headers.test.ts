// How an attachment is served: which types are inline, the served Content-Type, and the file name
// (directories, control and bidirectional-override characters removed, quotes kept out of the
// ASCII fallback, the exact name percent-encoded in filename*).
import { describe, expect, it } from "vitest";
import { attachmentFileName, contentDisposition, servedContentType, servedInline } from "../../src/http-api/attachment-headers.js";

const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

describe("attachment headers", () => {
  it("serves only JPEG, PNG, GIF and WebP inline, whatever the case or parameters", () => {
    for (const type of ["image/jpeg", "image/png", "IMAGE/GIF", "image/webp; q=1"]) expect(servedInline(type), type).toBe(true);
    for (const type of ["image/svg+xml", "text/html", "application/xhtml+xml", "image/bmp", "application/pdf", "text/plain", "", "image/png\r\nx: y"]) {
      expect(servedInline(type), type).toBe(false);
    }
  });

  it("serves the stored type without parameters, and application/octet-stream for anything that is not a media type", () => {
    expect(servedContentType("text/html; charset=utf-8")).toBe("text/html");
    expect(servedContentType("Image/PNG")).toBe("image/png");
    for (const bad of ["", "html", "text/html\r\nSet-Cookie: a=b", "text/ html", "a/b/c"]) expect(servedContentType(bad), bad).toBe("application/octet-stream");
  });

  it("cleans the sender's file name and names a nameless attachment after its hash and type", () => {
    expect(attachmentFileName("../../etc/passwd", SHA, "text/plain")).toBe("passwd");
    expect(attachmentFileName("C:\\Users\\x\\photo.jpg", SHA, "image/jpeg")).toBe("photo.jpg");
    expect(attachmentFileName("evil\u202Egpj.exe", SHA, "image/jpeg")).toBe("evilgpj.exe");
    expect(attachmentFileName("a\r\nb\u0000.txt", SHA, "text/plain")).toBe("ab.txt");
    expect(attachmentFileName("...", SHA, "image/png")).toBe(`attachment-${SHA.slice(0, 12)}.png`);
    expect(attachmentFileName(null, SHA, "application/x-unknown")).toBe(`attachment-${SHA.slice(0, 12)}`);
    const long = `${"x".repeat(300)}.pdf`;
    expect(attachmentFileName(long, SHA, "application/pdf")).toHaveLength(150);
    expect(attachmentFileName(long, SHA, "application/pdf").endsWith(".pdf")).toBe(true);
  });

  it("writes an ASCII filename and the exact name as filename*", () => {
    expect(contentDisposition("image/png", "café.png")).toBe(`inline; filename="caf_.png"; filename*=UTF-8''caf%C3%A9.png`);
    expect(contentDisposition("image/svg+xml", 'a"b\\c (1).svg')).toBe(`attachment; filename="a_b_c (1).svg"; filename*=UTF-8''a%22b%5Cc%20%281%29.svg`);
  });
});
