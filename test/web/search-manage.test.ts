/// <reference lib="dom" />
/**
 * The search, lineage and manage parts of the web page in a real Chromium against a real
 * `threadline serve` on a seeded SQLite database: search (FTS, CJK, hostile snippets stay
 * text) → open a hit → the transcript shows that message (loaded past the first page);
 * lineage clicks; rename (a title conflict shown in the form); delete with a confirmation
 * dialog listing the cascade (Escape cancels); JSONL export downloads (a session, the list's
 * filtered set); and a tenant key sees only its own results in search, lineage and export.
 * Screenshots go to test-artifacts/web/.
 */
import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway } from "../serve/gateway-process.js";
import { launchBrowser, screenshot, watchPage, type TestBrowser } from "./browser.js";
import { exchange, seed, T0, type SeedSession } from "./seed.js";

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

async function newPage(): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1200, height: 900 });
  return page;
}

async function rowIds(page: Page): Promise<string[]> {
  return page.locator("li.session-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session-id") ?? ""));
}

async function groupIds(page: Page): Promise<string[]> {
  return page.locator("li.search-group").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session-id") ?? ""));
}

/** Clicks `link` and returns the downloaded file's JSON lines. */
async function downloadLines(page: Page, click: () => Promise<void>): Promise<{ name: string; lines: Array<Record<string, unknown>> }> {
  const [download] = await Promise.all([page.waitForEvent("download"), click()]);
  const path = await download.path();
  const text = await readFile(path, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return {
    name: download.suggestedFilename(),
    lines: text
      .trimEnd()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const HOSTILE = `<img src=x onerror="window.__pwned='snippet'"> hostileword <script>window.__pwned='s'</script>`;

function sessions(): SeedSession[] {
  const long = [];
  for (let i = 0; i < 300; i++) long.push(...exchange(T0 + 100 + i * 2, `question ${i}`, i === 280 ? "the zebracorn answer" : `answer ${i}`));
  return [
    { id: "s-alpha", source: "cli", title: "Alpha notes", startedAt: T0, messages: exchange(T0 + 10, "hello alpha", "東京の天気は晴れです") },
    { id: "s-beta", source: "telegram", title: "Beta chat", startedAt: T0 + 20, messages: exchange(T0 + 30, "hello beta", "hi beta") },
    { id: "s-long", source: "cli", title: "Long session", startedAt: T0 + 40, messages: long },
    {
      id: "s-root",
      source: "cli",
      title: "Root plan",
      startedAt: T0 + 1000,
      messages: exchange(T0 + 1001, "plan the rollout", "ok"),
      endReason: "compression",
    },
    { id: "s-cont", source: "cli", title: "Continued plan", parentSessionId: "s-root", startedAt: T0 + 1600, messages: exchange(T0 + 1601, "continue", "ok") },
    { id: "s-branch", source: "cli", title: "Branch idea", parentSessionId: "s-cont", startedAt: T0 + 1700, messages: exchange(T0 + 1701, "branch", "ok") },
    { id: "s-doomed", source: "telegram", title: "Doomed", startedAt: T0 + 2000, messages: exchange(T0 + 2001, "doomed question", "doomed answer") },
    { id: "s-orphan", source: "cli", title: "Orphan child", parentSessionId: "s-doomed", startedAt: T0 + 2100, messages: exchange(T0 + 2101, "orphan", "ok") },
    {
      id: "s-hostile",
      source: "cli",
      title: `<img src=x onerror="window.__pwned='title'"> \u202Eevil`,
      startedAt: T0 + 2200,
      messages: exchange(T0 + 2201, HOSTILE, "fine"),
    },
  ];
}

describe("web page: search, lineage, rename, delete, export", () => {
  it("searches with FTS and CJK, keeps snippets as text, and a hit opens the transcript at that message", async () => {
    const home = await makeHome();
    await seed(databaseOf(home), sessions());
    const gateway = await spawnGateway({ home });
    const page = await newPage();
    const watch = watchPage(page);

    await page.goto(`${gateway.url}/ui/`);
    await page.locator("li.session-row").first().waitFor();
    await page.getByRole("link", { name: "Search" }).click();
    await page.waitForURL(/\/ui\/search$/u);
    await page.getByLabel("Search messages").fill("zebracorn");
    await page.getByLabel("Search messages").press("Enter");
    await page.waitForURL(/\/ui\/search\?q=zebracorn$/u);
    await page.locator("li.search-hit").first().waitFor();
    expect(await groupIds(page)).toEqual(["s-long"]);
    expect(await page.locator("li.search-hit mark").allTextContents()).toEqual(["zebracorn"]);
    await screenshot(page, "search");

    // The hit is message 562 of 600: past the first page even at the 500-message seek page size.
    const hit = page.locator("li.search-hit").first();
    const messageId = await hit.getAttribute("data-message-id");
    expect(messageId).toMatch(/^\d+$/u);
    await hit.locator("a.hit-link").click();
    await page.waitForURL(new RegExp(`/ui/sessions/s-long\\?message=${messageId}$`, "u"));
    const target = page.locator(`article[data-message-id="${messageId}"]`);
    await target.waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("data-message-id") ?? null)).toBe(messageId);
    expect(await target.textContent()).toContain("the zebracorn answer");
    expect(await target.evaluate((el) => el.classList.contains("message-target"))).toBe(true);
    const box = await target.boundingBox();
    expect(box !== null && box.y >= 0 && box.y < 900).toBe(true);
    await screenshot(page, "transcript-at-hit");

    // Back to the search (the query is in the URL); a reload keeps it.
    await page.goBack();
    await page.waitForURL(/\/ui\/search\?q=zebracorn$/u);
    await page.reload();
    await page.locator("li.search-hit").first().waitFor();
    expect(await page.getByLabel("Search messages").inputValue()).toBe("zebracorn");

    // CJK: a two-character query finds the Japanese sentence.
    await page.goto(`${gateway.url}/ui/search?q=${encodeURIComponent("東京")}`);
    await page.locator("li.search-hit").first().waitFor();
    expect(await groupIds(page)).toEqual(["s-alpha"]);
    expect((await page.locator("li.search-hit mark").allTextContents()).join("")).toContain("東京");

    // FTS syntax: OR over two words, grouped by session.
    await page.goto(`${gateway.url}/ui/search?q=${encodeURIComponent("doomed OR orphan")}`);
    await page.locator("li.search-group").nth(1).waitFor();
    expect((await groupIds(page)).sort()).toEqual(["s-doomed", "s-orphan"]);

    // Hostile stored content in a snippet and a title: shown as text, nothing runs.
    await page.goto(`${gateway.url}/ui/search?q=hostileword`);
    await page.locator("li.search-hit").first().waitFor();
    expect(await page.locator("li.search-hit .snippet").textContent()).toContain("<img src=x");
    expect(await page.locator("li.search-group h2").textContent()).toContain("<img src=x");
    expect(await page.evaluate(() => document.querySelectorAll("#app img, #app script").length)).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();

    // Nothing found, said so.
    await page.goto(`${gateway.url}/ui/search?q=nosuchwordanywhere`);
    await page.getByText("No messages match.").waitFor();

    expect(watch.pageErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    await page.close();
  });

  it("clicks through the lineage, renames (conflict shown), deletes with a confirmation listing the cascade, exports JSONL", async () => {
    const home = await makeHome();
    await seed(databaseOf(home), sessions());
    const gateway = await spawnGateway({ home });
    const page = await newPage();
    const watch = watchPage(page);

    // Lineage: root → continuation → branch; the current one is marked, the others are links.
    await page.goto(`${gateway.url}/ui/sessions/s-cont`);
    const lineage = page.getByRole("navigation", { name: "Lineage" });
    await lineage.locator("li.lineage-node").nth(2).waitFor();
    expect(await lineage.locator("li.lineage-node").evaluateAll((n) => n.map((x) => `${x.getAttribute("data-session-id")}:${x.className}`))).toEqual([
      "s-root:lineage-node relation-root",
      "s-cont:lineage-node relation-continuation",
      "s-branch:lineage-node relation-child",
    ]);
    expect(await lineage.locator('[aria-current="page"]').textContent()).toBe("Continued plan");
    await screenshot(page, "lineage");
    await lineage.getByRole("link", { name: "Root plan" }).click();
    await page.waitForURL(/\/ui\/sessions\/s-root$/u);
    await expect.poll(() => page.locator("#transcript-heading").textContent()).toBe("Root plan");
    await expect.poll(() => lineage.locator('[aria-current="page"]').textContent()).toBe("Root plan");
    await lineage.getByRole("link", { name: "Branch idea" }).click();
    await page.waitForURL(/\/ui\/sessions\/s-branch$/u);
    await expect.poll(() => page.locator("#transcript-heading").textContent()).toBe("Branch idea");
    // A session alone has no lineage panel.
    await page.goto(`${gateway.url}/ui/sessions/s-beta`);
    await page.locator("article.message").first().waitFor();
    expect(await page.getByRole("navigation", { name: "Lineage" }).count()).toBe(0);

    // Rename: a title another session holds is refused, in the form; then a free title.
    await page.goto(`${gateway.url}/ui/sessions/s-alpha`);
    await page.getByRole("button", { name: "Rename" }).click();
    const titleInput = page.getByLabel("New title");
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("title");
    await titleInput.fill("Beta chat");
    await page.getByRole("button", { name: "Save title" }).click();
    const renameError = page.locator(".rename-form [role=alert]");
    await renameError.waitFor();
    expect(await renameError.textContent()).toContain("is already used by session s-beta");
    expect(await titleInput.getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "rename-conflict");
    await titleInput.fill("Alpha renamed");
    await page.getByRole("button", { name: "Save title" }).click();
    await expect.poll(() => page.locator("#transcript-heading").textContent()).toBe("Alpha renamed");
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Rename");
    const stored = (await (await fetch(`${gateway.url}/ui/api/sessions/s-alpha`)).json()) as { title: string };
    expect(stored.title).toBe("Alpha renamed");

    // Export one session: a plain link (no key), one JSON line.
    const one = await downloadLines(page, () => page.getByRole("link", { name: "Export JSONL" }).click());
    expect(one.name).toBe("s-alpha.jsonl");
    expect(one.lines).toHaveLength(1);
    expect(one.lines[0]).toMatchObject({ session: { id: "s-alpha", title: "Alpha renamed" } });

    // Delete: the dialog takes focus, lists the cascade; Escape cancels.
    await page.goto(`${gateway.url}/ui/sessions/s-doomed`);
    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.locator("p.removes").waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest("dialog") !== null)).toBe(true);
    expect(await dialog.locator("p.removes").textContent()).toContain("This removes 1 session and 2 messages.");
    expect(await dialog.locator("p.detaches").textContent()).toContain("1 child session is kept and detached");
    expect(await dialog.locator("ul.detached-list").textContent()).toContain("Orphan child");
    await screenshot(page, "delete-dialog");
    await page.keyboard.press("Escape");
    await expect.poll(() => dialog.count()).toBe(0);
    expect(page.url()).toMatch(/\/ui\/sessions\/s-doomed$/u);
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Delete…");
    expect((await fetch(`${gateway.url}/ui/api/sessions/s-doomed`)).status).toBe(200);
    // Confirm: back to the list, the session is gone, its child kept.
    await page.getByRole("button", { name: "Delete…" }).click();
    await dialog.locator("p.removes").waitFor();
    await dialog.getByRole("button", { name: "Delete session" }).click();
    await page.waitForURL(/\/ui\/$/u);
    await page.locator("li.session-row").first().waitFor();
    const ids = await rowIds(page);
    expect(ids).not.toContain("s-doomed");
    expect(ids).toContain("s-orphan");
    expect((await fetch(`${gateway.url}/ui/api/sessions/s-doomed`)).status).toBe(404);

    // Export the list's filtered set: source=telegram.
    await page.goto(`${gateway.url}/ui/?source=telegram`);
    await expect.poll(() => rowIds(page)).toEqual(["s-beta"]);
    const set = await downloadLines(page, () => page.getByRole("link", { name: "Export these sessions (JSONL)" }).click());
    expect(set.lines.map((l) => (l["session"] as { id: string }).id)).toEqual(["s-beta"]);

    expect(watch.pageErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    await page.close();
  });
});

describe("web page: a tenant key in search, lineage and export", () => {
  it("finds, shows and exports only the tenant's own sessions", async () => {
    const home = await makeHome({
      api: {
        keys: [
          { key: "admin-key-0123456789abcdef", name: "ops" },
          { key: "alice-key-0123456789abcdef", userId: "alice" },
        ],
      },
    });
    await seed(databaseOf(home), [
      { id: "s-a-root", source: "cli", title: "Alice root", userId: "alice", startedAt: T0, messages: exchange(T0 + 1, "sharedword alice", "ok") },
      {
        id: "s-b-child",
        source: "cli",
        title: "Bob branch",
        userId: "bob",
        parentSessionId: "s-a-root",
        startedAt: T0 + 10,
        messages: exchange(T0 + 11, "sharedword bob", "ok"),
      },
      {
        id: "s-a-child",
        source: "cli",
        title: "Alice branch",
        userId: "alice",
        parentSessionId: "s-a-root",
        startedAt: T0 + 20,
        messages: exchange(T0 + 21, "sharedword alice again", "ok"),
      },
    ]);
    const gateway = await spawnGateway({ home });
    const page = await newPage();
    await page.goto(`${gateway.url}/ui/search?q=sharedword`);
    await page.getByLabel("API key").fill("alice-key-0123456789abcdef");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("li.search-group").nth(1).waitFor();
    expect((await groupIds(page)).sort()).toEqual(["s-a-child", "s-a-root"]);
    expect(await page.content()).not.toContain("Bob branch");
    expect(await page.content()).not.toContain("sharedword bob");

    await page.goto(`${gateway.url}/ui/sessions/s-a-root`);
    const lineage = page.getByRole("navigation", { name: "Lineage" });
    await lineage.locator("li.lineage-node").nth(1).waitFor();
    expect(await lineage.locator("li.lineage-node").evaluateAll((n) => n.map((x) => x.getAttribute("data-session-id")))).toEqual(["s-a-root", "s-a-child"]);

    // The delete preview counts bob's child without naming it.
    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.locator("ul.detached-list").waitFor();
    expect(await dialog.locator("ul.detached-list").textContent()).toContain("Alice branch");
    expect(await dialog.locator("ul.detached-list").textContent()).toContain("1 session of other users");
    expect(await dialog.textContent()).not.toContain("Bob");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => dialog.count()).toBe(0);

    // Export with a key: fetched with the key (a link cannot send it), saved as a download.
    await page.goto(`${gateway.url}/ui/`);
    await page.locator("li.session-row").first().waitFor();
    const set = await downloadLines(page, () => page.getByRole("link", { name: "Export these sessions (JSONL)" }).click());
    expect(set.name).toBe("threadline-export.jsonl");
    expect(set.lines.map((l) => (l["session"] as { id: string }).id).sort()).toEqual(["s-a-child", "s-a-root"]);
    await page.close();
  });
});
