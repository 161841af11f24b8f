/**
 * Threat (issue 30): a stored file runs in the browser. Anyone who can message the bot chooses
 * the bytes of what is stored; an SVG or an HTML page opened from the API's origin would run
 * its script with the page's access (the API key in sessionStorage, every session). Only
 * JPEG, PNG, GIF and WebP are served inline; anything else, SVG and HTML above all, is
 * `Content-Disposition: attachment`, with `X-Content-Type-Options: nosniff` and
 * `Content-Security-Policy: sandbox; default-src 'none'` on every attachment, and a
 * reference that claims a raster type for bytes stored as HTML is not believed.
 * Over real loopback HTTP, on both backends.
 */
import { afterEach, expect, it } from "vitest";
import { forEachBackend } from "../gateway/backends.js";
import { ALICE, call, closeServers, seed, startApi } from "../http-api/api-harness.js";
import { attach, HTML_BYTES, PNG_BYTES, SVG_BYTES } from "../http-api/attachment-fixtures.js";

afterEach(closeServers);

forEachBackend((backend) => {
  it("serves SVG, HTML and a lying reference as attachments with nosniff and a sandbox CSP; a PNG inline with the same guards", async () => {
    const { db } = await backend.fresh();
    const { a1 } = await seed(db);
    const [svg, svgAsImage, html, lying, png] = await attach(db, a1, [
      { bytes: SVG_BYTES, kind: "file", mimeType: "image/svg+xml", fileName: "logo.svg" },
      { bytes: Buffer.concat([SVG_BYTES, Buffer.from(" ")]), kind: "image", mimeType: "image/svg+xml", fileName: "drawing.svg" },
      { bytes: HTML_BYTES, kind: "file", mimeType: "text/html; charset=utf-8", fileName: "page.html" },
      // The message's part says PNG; the stored blob says HTML.
      { bytes: Buffer.concat([HTML_BYTES, Buffer.from("<!-- 2 -->")]), kind: "image", mimeType: "image/png", storedType: "text/html", fileName: "cat.png" },
      { bytes: PNG_BYTES, kind: "image", mimeType: "image/png", fileName: "cat.png" },
    ]);
    const api = await startApi(db);
    for (const [ref, type] of [
      [svg, "image/svg+xml"],
      [svgAsImage, "image/svg+xml"],
      [html, "text/html"],
      [lying, "text/html"],
    ] as const) {
      for (const method of ["GET", "HEAD"]) {
        const reply = await fetch(`${api.url}/sessions/${a1}/attachments/${ref!.sha256}`, { method, headers: { "x-api-key": ALICE } });
        const where = `${method} ${ref!.fileName}`;
        expect(reply.status, where).toBe(200);
        expect(reply.headers.get("content-type"), where).toBe(type);
        expect(reply.headers.get("content-disposition"), where).toMatch(/^attachment; filename="/u);
        expect(reply.headers.get("x-content-type-options"), where).toBe("nosniff");
        expect(reply.headers.get("content-security-policy"), where).toBe("sandbox; default-src 'none'");
      }
    }
    const image = await call(api, "GET", `/sessions/${a1}/attachments/${png!.sha256}`, { key: ALICE });
    expect(image.headers.get("content-disposition")).toMatch(/^inline; /u);
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
    expect(image.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'");
  });
});
