/// <reference lib="dom" />
/**
 * The pairing view in a real Chromium against a real `threadline serve` child process: an
 * admin key sees the pending codes and approved people, approves a code from its row and
 * one typed into the form, and revokes an approval; a stranger's hostile name is shown as
 * text (no element, no script); a key scoped to a user sees a notice and none of the data
 * (no code, no name on the page). Screenshots go to test-artifacts/web/.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { openSessionDB } from "../../src/store/index.js";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway } from "../serve/gateway-process.js";
import { launchBrowser, screenshot, watchPage, type PageWatch, type TestBrowser } from "./browser.js";

const ADMIN = "admin-key-0123456789abcdef";
const ALICE = "alice-key-0123456789abcdef";
const HOSTILE = `<img src=x onerror="window.__pwned='pairing'">`;

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

async function newPage(): Promise<{ page: Page; watch: PageWatch }> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1200, height: 900 });
  return { page, watch: watchPage(page) };
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

const rowIds = (page: Page, selector: string): Promise<string[]> =>
  page.locator(selector).evaluateAll((rows) => rows.map((r) => r.getAttribute("data-user-id") ?? ""));

/** A home whose database holds three pending codes (one with a hostile name) and one approval. */
async function seededHome(): Promise<{ home: string; codes: Record<string, string> }> {
  const home = await makeHome({
    api: {
      keys: [
        { key: ADMIN, name: "ops" },
        { key: ALICE, userId: "alice" },
      ],
    },
  });
  const db = await openSessionDB(databaseOf(home));
  const codes: Record<string, string> = {};
  try {
    // Requests a millisecond apart: the list is oldest first (within one millisecond, by platform).
    const start = Date.now();
    for (const [i, [platform, userId, userName]] of (
      [
        ["telegram", "1001", HOSTILE],
        ["slack", "U2002", "Bob"],
        ["discord", "3003", null],
      ] as const
    ).entries()) {
      const outcome = await db.requestPairingCode(platform, userId, { userName, now: start + i });
      if (outcome.kind !== "code") throw new Error(outcome.kind);
      codes[userId] = outcome.code;
    }
    const carol = await db.requestPairingCode("matrix", "@carol:example.org", { userName: "Carol" });
    if (carol.kind !== "code") throw new Error(carol.kind);
    await db.approvePairingCode("matrix", carol.code, { by: "cli" });
  } finally {
    await db.close();
  }
  return { home, codes };
}

describe("web page: pairing", { timeout: 90_000 }, () => {
  it("an admin sees pending codes and approved people, approves from a row and from the form, and revokes", async () => {
    const { home, codes } = await seededHome();
    const gateway = await spawnGateway({ home });
    const { page, watch } = await newPage();
    await page.goto(`${gateway.url}/ui/pairing`);
    await signIn(page, ADMIN);
    await page.locator("tr.pairing-request").nth(2).waitFor();
    expect(await rowIds(page, "tr.pairing-request")).toEqual(["1001", "U2002", "3003"]);
    expect(await rowIds(page, "tr.pairing-approval")).toEqual(["@carol:example.org"]);
    expect(await page.locator("table.pairing-pending").textContent()).toContain(codes["U2002"]);
    // The hostile name is text: shown as typed, no image, no script ran.
    expect(await page.locator('tr.pairing-request[data-user-id="1001"] .pairing-user-name').textContent()).toBe(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
    await screenshot(page, "pairing");

    // Approve from the row.
    await page.getByRole("button", { name: "Approve Bob (user U2002) on slack" }).click();
    await expect.poll(() => page.locator("#pairing-result").textContent()).toBe("Approved Bob (user U2002) on slack. Their next message will be answered.");
    await expect.poll(() => rowIds(page, "tr.pairing-request")).toEqual(["1001", "3003"]);
    await expect.poll(() => rowIds(page, "tr.pairing-approval")).toEqual(["@carol:example.org", "U2002"]);

    // Approve a code typed into the form (any case, with a dash).
    await page.locator("form.pairing-approve select[name=platform]").selectOption("discord");
    const typed = codes["3003"]!;
    await page.locator("form.pairing-approve input[name=code]").fill(`${typed.slice(0, 4).toLowerCase()}-${typed.slice(4)}`);
    await page.getByRole("button", { name: "Approve code" }).click();
    await expect.poll(() => page.locator("#pairing-result").textContent()).toBe("Approved user 3003 on discord. Their next message will be answered.");
    await expect.poll(() => rowIds(page, "tr.pairing-request")).toEqual(["1001"]);

    // A wrong code: the server's message, the code not repeated.
    await page.locator("form.pairing-approve input[name=code]").fill("ZZZZZZZZ");
    await page.getByRole("button", { name: "Approve code" }).click();
    await page.locator(".error[role=alert]").waitFor();
    const message = await page.locator(".error[role=alert]").textContent();
    expect(message).toContain("No pending pairing code on discord matches");
    expect(message).not.toContain("ZZZZZZZZ");

    // Revoke.
    await page.getByRole("button", { name: "Revoke Carol (user @carol:example.org) on matrix" }).click();
    await expect
      .poll(() => page.locator("#pairing-result").textContent())
      .toBe("Revoked Carol (user @carol:example.org) on matrix: their next message is treated as a stranger's.");
    await expect.poll(() => rowIds(page, "tr.pairing-approval")).toEqual(["3003", "U2002"]); // by platform, then approval time

    const db = await openSessionDB(databaseOf(home));
    try {
      expect(await db.isPairingApproved("slack", "U2002")).toBe(true);
      expect(await db.isPairingApproved("discord", "3003")).toBe(true);
      expect(await db.isPairingApproved("matrix", "@carol:example.org")).toBe(false);
      expect((await db.listPairing()).approved.find((a) => a.userId === "U2002")?.approvedBy).toBe("http:ops");
    } finally {
      await db.close();
    }
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(watch.pageErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    expect(watch.consoleErrors.filter((e) => /Content Security Policy|Refused to/iu.test(e))).toEqual([]);
    await page.close();
  });

  it("a key scoped to a user sees that it needs an admin key, and none of the codes or names", async () => {
    const { home, codes } = await seededHome();
    const gateway = await spawnGateway({ home });
    const { page, watch } = await newPage();
    await page.goto(`${gateway.url}/ui/pairing`);
    await signIn(page, ALICE);
    await page.locator("#pairing-unavailable").waitFor();
    expect(await page.locator("#pairing-unavailable").textContent()).toContain("needs an admin key");
    const text = (await page.locator("main").textContent()) ?? "";
    for (const code of Object.values(codes)) expect(text).not.toContain(code);
    for (const name of ["Bob", "Carol", "U2002", "1001"]) expect(text).not.toContain(name);
    expect(await page.locator("tr.pairing-request, tr.pairing-approval").count()).toBe(0);
    await screenshot(page, "pairing-scoped");
    expect(watch.pageErrors).toEqual([]);
    await page.close();
  });
});
