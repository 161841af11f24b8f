/// <reference lib="dom" />
/**
 * Attachments on the web page, in a real Chromium against a real `threadline serve` child on a
 * seeded SQLite database with API keys: a photo shows inline from a `blob:` URL fetched with
 * the key (and decodes: naturalWidth > 0), a voice note gets an audio player, a PDF downloads
 * with its name and exact bytes, an SVG is never rendered (only offered as a download), a
 * reference whose bytes are not stored says so, and the `blob:` URLs are revoked when the
 * transcript leaves the page. No CSP violation or page error on the way.
 */
import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../src/store/index.js";
import { attach, PDF_BYTES, PNG_BYTES, SVG_BYTES, sha256Of, wavBytes } from "../http-api/attachment-fixtures.js";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway } from "../serve/gateway-process.js";
import { launchBrowser, screenshot, watchPage, type TestBrowser } from "./browser.js";
import { exchange, seed, T0 } from "./seed.js";

const ALICE_KEY = "alice-key-0123456789abcdef";

let browser: TestBrowser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await cleanupProcesses();
});

describe("web page: attachments in the transcript", () => {
  it("shows a photo inline, plays a voice note, downloads a PDF, never renders an SVG, and revokes its blob: URLs", async () => {
    const home = await makeHome({ api: { keys: [{ key: ALICE_KEY, userId: "alice" }] } });
    await seed(databaseOf(home), [
      { id: "s-media", source: "telegram", title: "Holiday", userId: "alice", startedAt: T0, messages: exchange(T0 + 1, "hi", "hello") },
    ]);
    const db = await openSessionDB(databaseOf(home));
    const gone = sha256Of(Buffer.from("exported with --media skip"));
    let svg: string;
    try {
      const refs = await attach(
        db,
        "s-media",
        [
          { bytes: PNG_BYTES, kind: "image", mimeType: "image/png", fileName: "pixel.png", caption: "A tiny test pixel" },
          { bytes: wavBytes(), kind: "audio", mimeType: "audio/wav", voice: true },
          { bytes: PDF_BYTES, kind: "file", mimeType: "application/pdf", fileName: "report.pdf" },
          { bytes: SVG_BYTES, kind: "image", mimeType: "image/svg+xml", fileName: "logo.svg" },
          { bytes: null, sha256: gone, kind: "image", mimeType: "image/jpeg", fileName: "lost.jpg" },
        ],
        "my holiday files",
      );
      svg = refs[3]!.sha256;
    } finally {
      await db.close();
    }
    const gateway = await spawnGateway({ home });

    const page = await browser.context.newPage();
    const watch = watchPage(page);
    await page.goto(`${gateway.url}/ui/sessions/s-media`);
    await page.getByLabel("API key").fill(ALICE_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();

    // The photo: a decoded image from a blob: URL, with its caption as alt text.
    const img = page.locator("figure.attachment-image img");
    await img.waitFor();
    await page.waitForFunction(() => {
      const el = document.querySelector<HTMLImageElement>("figure.attachment-image img");
      return el?.complete === true && el.naturalWidth > 0;
    });
    const src = (await img.getAttribute("src")) ?? "";
    expect(src.startsWith("blob:")).toBe(true);
    expect(await img.getAttribute("alt")).toBe("A tiny test pixel");
    expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);

    // The voice note: an audio player on a blob: URL.
    const audio = page.locator("figure.attachment-audio audio");
    await audio.waitFor();
    expect(await audio.getAttribute("controls")).not.toBeNull();
    expect((await audio.getAttribute("src"))?.startsWith("blob:")).toBe(true);
    expect(await page.locator("figure.attachment-audio figcaption").textContent()).toContain("Voice note");

    // The PDF: a link that fetches it with the key and saves it under its name.
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download report.pdf" }).click()]);
    expect(download.suggestedFilename()).toBe("report.pdf");
    expect(await readFile((await download.path())!)).toEqual(PDF_BYTES);

    // The SVG is not rendered in any way: no <img>, no player; only a download link.
    const svgFigure = page.locator(`figure[data-sha256="${svg}"]`);
    await svgFigure.waitFor();
    expect(await svgFigure.locator("img, object, embed, iframe, svg").count()).toBe(0);
    expect(await svgFigure.getByRole("link", { name: "Download logo.svg" }).count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined();

    // Bytes not stored: said so, nothing broken.
    await page.locator(".attachment-missing").waitFor();
    expect(await page.locator(".attachment-missing").textContent()).toContain("exported without media");
    await screenshot(page, "attachments");

    // Leaving the transcript revokes the blob: URLs (probed with a new image: the CSP allows blob: images, not blob: fetches).
    const probe = (url: string) =>
      page.evaluate(
        (u) =>
          new Promise<string>((resolve) => {
            const test = new Image();
            test.onload = () => resolve("alive");
            test.onerror = () => resolve("revoked");
            test.src = u;
          }),
        url,
      );
    expect(await probe(src)).toBe("alive");
    await page.getByRole("link", { name: "← Sessions" }).click();
    await page.locator("li.session-row").first().waitFor();
    expect(await probe(src)).toBe("revoked");

    expect(watch.pageErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    // A CSP violation (a blob: image refused, a remote load) is logged as a console error.
    // (The 401 before the login, the 404 of the bytes not stored and the revoked probe are expected failures to load.)
    expect(watch.consoleErrors.filter((e) => /Content Security Policy|Refused to/u.test(e))).toEqual([]);
    await page.close();
  });
});
