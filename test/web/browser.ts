/**
 * A real Chromium for the web page tests, driven by `playwright-core`: the Debian
 * `chromium` package at /usr/bin/chromium (`.ci/run` installs it when missing; no browser is
 * ever downloaded), headless, with a fresh profile per launch and no network beyond the
 * servers the test starts.
 *
 * - {@link launchBrowser}: a browser context; call `close()` in `afterAll`/`afterEach`.
 * - {@link watchPage}: records dialogs, console errors and page errors of a page.
 * - {@link screenshot}: saves a PNG under `test-artifacts/web/` (gitignored).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Where the Debian package puts Chromium. */
export const CHROMIUM = process.env["THREADLINE_TEST_CHROMIUM"] ?? "/usr/bin/chromium";

/** Screenshots of the web tests (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/web/", import.meta.url));

/** A launched browser with its own profile folder. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches headless Chromium with a fresh profile. Throws a clear error when Chromium is missing. */
export async function launchBrowser(options: { viewport?: { width: number; height: number } } = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install the Debian package (apt-get install -y chromium; .ci/run does) or set THREADLINE_TEST_CHROMIUM.`,
    );
  }
  const profile = await mkdtemp(join(tmpdir(), "threadline-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: options.viewport ?? { width: 1200, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
    acceptDownloads: true,
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** What a page did that a test may want to assert on. */
export interface PageWatch {
  dialogs: string[];
  pageErrors: string[];
  consoleErrors: string[];
}

/** Records dialogs (dismissed at once), uncaught errors and console errors of `page`. */
export function watchPage(page: Page): PageWatch {
  const watch: PageWatch = { dialogs: [], pageErrors: [], consoleErrors: [] };
  page.on("dialog", (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => {});
  });
  page.on("pageerror", (error) => watch.pageErrors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") watch.consoleErrors.push(message.text());
  });
  return watch;
}

/** Saves a full-page screenshot as `test-artifacts/web/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
