/// <reference lib="dom" />
/**
 * The web page in a real Chromium against a real `threadline serve` child process on a
 * seeded SQLite database: list → filter (URL, reload) → transcript by keyboard → tool call
 * and reasoning toggles → paging on scroll; login and tenant scoping with API keys; the
 * hostile-content test (nothing runs, nothing injected, the layout holds at phone width);
 * security and caching headers. Screenshots go to test-artifacts/web/.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { cleanupProcesses, databaseOf, makeHome, spawnGateway, type GatewayProcess } from "../serve/gateway-process.js";
import { launchBrowser, screenshot, watchPage, type TestBrowser } from "./browser.js";
import { exchange, seed, T0 } from "./seed.js";

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

async function rowIds(page: Page): Promise<string[]> {
  return page.locator("li.session-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session-id") ?? ""));
}

async function newPage(): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1200, height: 900 });
  return page;
}

describe("web page: sessions list and transcript", () => {
  let gateway: GatewayProcess;

  async function start(): Promise<void> {
    const home = await makeHome({ gateway: { logLevel: "info" } });
    const long = [];
    for (let i = 0; i < 115; i++) long.push(...exchange(T0 + 100 + i * 2, `question ${i}`, `answer ${i}`));
    await seed(databaseOf(home), [
      { id: "s-alpha", source: "cli", title: "Alpha notes", model: "gpt-4o-mini", startedAt: T0, messages: exchange(T0 + 10, "hello alpha", "hi **alpha**") },
      { id: "s-beta", source: "telegram", title: "Beta chat", startedAt: T0 + 20, messages: exchange(T0 + 30, "hello beta", "hi beta") },
      { id: "s-long", source: "cli", title: "Long session", startedAt: T0 + 40, messages: long },
      {
        id: "s-gamma",
        source: "cli",
        title: "Gamma tools",
        model: "gpt-4o",
        startedAt: T0 + 1000,
        usage: { inputTokens: 1200, outputTokens: 300, estimatedCostUsd: 0.0123 },
        messages: [
          { role: "user", content: "What is 2+2?", timestamp: T0 + 1001 },
          {
            role: "assistant",
            content: null,
            reasoning: "The user wants arithmetic; use the calculator.",
            toolCalls: [{ id: "call_1", type: "function", function: { name: "calculator", arguments: '{"expression":"2+2"}' } }],
            timestamp: T0 + 1002,
          },
          { role: "tool", content: "4", toolCallId: "call_1", toolName: "calculator", timestamp: T0 + 1003 },
          { role: "assistant", content: "The answer is **4**.", tokenCount: 17, timestamp: T0 + 1004 },
        ],
      },
    ]);
    gateway = await spawnGateway({ home });
  }

  it("lists newest first, filters by source in the URL, opens a transcript by keyboard, folds tool calls and reasoning", async () => {
    await start();
    // Startup output prints the page's URL.
    expect(gateway.logLines().some((l) => l["msg"] === `web page: ${gateway.url}/ui/`)).toBe(true);

    const page = await newPage();
    const watch = watchPage(page);
    const response = await page.goto(`${gateway.url}/ui/`);
    expect(response?.status()).toBe(200);
    await page.locator("li.session-row").nth(3).waitFor();
    expect(await rowIds(page)).toEqual(["s-gamma", "s-long", "s-beta", "s-alpha"]);
    // Each row shows the session's tokens and cost.
    expect(await page.locator('li.session-row[data-session-id="s-gamma"] .usage').textContent()).toBe("1,500 tokens · $0.0123");
    expect(await page.locator('li.session-row[data-session-id="s-beta"] .usage').textContent()).toBe("0 tokens · $0.0000");
    await screenshot(page, "sessions-list");

    // Filter by source: the URL keeps it, a reload keeps it.
    await page.getByLabel("Source").fill("cli");
    await page.getByLabel("Source").press("Enter");
    await page.waitForURL(/\/ui\/\?source=cli$/u);
    await expect.poll(() => rowIds(page)).toEqual(["s-gamma", "s-long", "s-alpha"]);
    await page.reload();
    await expect.poll(() => rowIds(page)).toEqual(["s-gamma", "s-long", "s-alpha"]);
    expect(await page.getByLabel("Source").inputValue()).toBe("cli");

    // Keyboard: arrows move between rows, Enter opens the transcript.
    await page.locator("a.session-link").first().focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowUp");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Gamma tools");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/ui\/sessions\/s-gamma$/u);
    await page.locator("article.message").nth(2).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("transcript-heading");
    expect(await page.locator("article.role-assistant .markdown strong").last().textContent()).toBe("4");
    expect(await page.locator("article.role-assistant .tokens").last().textContent()).toBe("17 tokens");

    // The tool call is folded; it opens to show its arguments and result.
    const call = page.locator("details.tool-call").first();
    expect(await call.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await page.locator("pre.tool-args").first().isVisible()).toBe(false);
    await call.locator("summary").click();
    expect(await page.locator("pre.tool-args").first().isVisible()).toBe(true);
    expect(JSON.parse((await page.locator("pre.tool-args").first().textContent()) ?? "")).toEqual({ expression: "2+2" });
    expect(await page.locator("pre.tool-result").first().textContent()).toBe("4");
    // The tool result is shown inside its call, not again on its own.
    expect(await page.locator("article.role-tool").count()).toBe(0);

    // Reasoning is hidden behind its toggle (keyboard: focus the summary, Enter).
    const reasoning = page.locator("details.reasoning");
    expect(await page.locator(".reasoning-text").isVisible()).toBe(false);
    await reasoning.locator("summary").focus();
    await page.keyboard.press("Enter");
    expect(await page.locator(".reasoning-text").isVisible()).toBe(true);
    expect(await page.locator(".reasoning-text").textContent()).toContain("use the calculator");
    await screenshot(page, "transcript");

    // Escape goes back to the list with its filter.
    await page.locator("#transcript-heading").focus();
    await page.keyboard.press("Escape");
    await page.waitForURL(/\/ui\/\?source=cli$/u);
    await expect.poll(() => rowIds(page)).toEqual(["s-gamma", "s-long", "s-alpha"]);

    // Sort by created.
    await page.getByLabel("Sort by").selectOption("started");
    await page.waitForURL(/order=started/u);

    expect(watch.pageErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    await page.close();
  });

  it("loads a long transcript in pages as the reader scrolls, and deep links work", async () => {
    await start();
    const page = await newPage();
    await page.goto(`${gateway.url}/ui/sessions/s-long`);
    await page.locator("article.message").nth(99).waitFor();
    // The first page is 100 messages; scrolling to the end loads the rest (230 in all).
    for (let i = 0; i < 10 && (await page.locator("p.end").count()) === 0; i++) {
      const shown = await page.locator("article.message").count();
      await page.locator(".sentinel").scrollIntoViewIfNeeded();
      // The next page is in (more messages) or the end is reached.
      await page.waitForFunction((n) => document.querySelector("p.end") !== null || document.querySelectorAll("article.message").length > n, shown);
    }
    await page.locator("p.end").waitFor();
    expect(await page.locator("article.message").count()).toBe(230);
    expect((await page.locator("article.message .markdown").last().textContent())?.trim()).toBe("answer 114");
    await page.close();
  });

  it("serves the page with a strict CSP, nosniff, no framing, no-cache HTML and immutable hashed assets", async () => {
    await start();
    const res = await fetch(`${gateway.url}/ui/sessions/s-alpha?x=1`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const html = await res.text();
    expect(html).toContain('<base href="../">');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/u);
    const js = /src="(assets\/main-[0-9a-f]+\.js)"/u.exec(html)![1]!;
    const asset = await fetch(`${gateway.url}/ui/${js}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/u);
    // The page's API is mounted for it (api.enabled is false here) and needs no key on loopback.
    const list = await fetch(`${gateway.url}/ui/api/sessions?limit=1`);
    expect(list.status).toBe(200);
    expect((await fetch(`${gateway.url}/ui/api/nope`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/sessions`)).status).toBe(404);
  });
});

describe("web page: a compressed and handed-off session", () => {
  it("shows the summary and the handoff note as what they are, not as the user's words; the list preview is a user message", async () => {
    const home = await makeHome({ gateway: { logLevel: "info" } });
    await seed(databaseOf(home), [
      { id: "s-root", source: "cli", title: "Trip", startedAt: T0, messages: exchange(T0 + 1, "plan a trip", "Where to?"), endReason: "compression" },
      {
        id: "s-cont",
        source: "cli",
        startedAt: T0 + 600,
        parentSessionId: "s-root",
        messages: [
          {
            role: "user",
            content: "[Summary of the earlier conversation (session s-root)]\nWe are planning a trip.",
            platformMessageId: "summary:s-root",
            timestamp: T0 + 600,
          },
          { role: "user", content: "book the hotel", timestamp: T0 + 601 },
          {
            role: "user",
            content: "[System note: This conversation was handed off from the terminal to telegram; summarise where things stand and what is next.]",
            platformMessageId: "handoff:h-1",
            timestamp: T0 + 602,
          },
          { role: "assistant", content: "The hotel is next.", timestamp: T0 + 603 },
        ],
      },
    ]);
    const gateway = await spawnGateway({ home });
    const page = await newPage();
    const watch = watchPage(page);
    await page.goto(`${gateway.url}/ui/sessions/s-cont`);
    await page.locator("article.message").nth(3).waitFor();
    const summary = page.locator("article.message").nth(0);
    expect(await summary.getAttribute("class")).toContain("role-summary");
    expect(await summary.getAttribute("aria-label")).toBe("Summary of the earlier conversation");
    expect((await summary.locator(".message-role").textContent())?.trim()).toBe("Summary of the earlier conversation (s-root)");
    expect((await summary.locator(".markdown").textContent())?.trim()).toBe("We are planning a trip.");
    const note = page.locator("article.message").nth(2);
    expect(await note.getAttribute("class")).toContain("role-note");
    expect((await note.locator(".message-role").textContent())?.trim()).toBe("System note");
    expect((await note.locator(".markdown").textContent())?.trim()).toBe(
      "This conversation was handed off from the terminal to telegram; summarise where things stand and what is next.",
    );
    // Only the message the user typed is headed User.
    expect(await page.locator("article.role-user").count()).toBe(1);
    expect((await page.locator("article.role-user .markdown").textContent())?.trim()).toBe("book the hotel");
    await screenshot(page, "synthetic-messages");
    // The list shows the continuation (a chain is listed as its tip) by its first user message, never the summary.
    await page.goto(`${gateway.url}/ui/`);
    await page.locator('li.session-row[data-session-id="s-cont"]').waitFor();
    const row = (await page.locator('li.session-row[data-session-id="s-cont"]').textContent()) ?? "";
    expect(row).toContain("book the hotel");
    expect(row).not.toContain("[Summary");
    expect(watch.pageErrors).toEqual([]);
    expect(watch.consoleErrors.filter((e) => /Content Security Policy|Refused to/iu.test(e))).toEqual([]);
    await page.close();
  });
});

describe("web page: keys and tenants", () => {
  it("asks for a key, refuses a wrong one, and a tenant key sees only its own sessions", async () => {
    const home = await makeHome({
      api: {
        keys: [
          { key: "admin-key-0123456789abcdef", name: "ops" },
          { key: "alice-key-0123456789abcdef", userId: "alice" },
        ],
      },
    });
    await seed(databaseOf(home), [
      { id: "s-alice", source: "cli", title: "Alice plans", userId: "alice", startedAt: T0, messages: exchange(T0 + 1, "hi", "hello alice") },
      { id: "s-bob", source: "cli", title: "Bob secrets", userId: "bob", startedAt: T0 + 10, messages: exchange(T0 + 11, "hi", "hello bob") },
    ]);
    const gateway = await spawnGateway({ home });
    const page = await newPage();
    await page.goto(`${gateway.url}/ui/`);
    await page.getByLabel("API key").waitFor();
    await screenshot(page, "login");
    expect(await page.locator("li.session-row").count()).toBe(0);

    await page.getByLabel("API key").fill("wrong-key-0123456789abcdef");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("That key is not valid").waitFor();

    await page.getByLabel("API key").fill("alice-key-0123456789abcdef");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("li.session-row").first().waitFor();
    expect(await rowIds(page)).toEqual(["s-alice"]);
    // The key lives in this tab: a reload keeps the login.
    await page.reload();
    await page.locator("li.session-row").first().waitFor();
    expect(await rowIds(page)).toEqual(["s-alice"]);
    // Another tenant's transcript does not exist for alice.
    await page.goto(`${gateway.url}/ui/sessions/s-bob`);
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("not found");
    expect(await page.content()).not.toContain("hello bob");

    // Sign out: the form comes back; the admin key sees both.
    await page.goto(`${gateway.url}/ui/`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").fill("admin-key-0123456789abcdef");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("li.session-row").nth(1).waitFor();
    expect(await rowIds(page)).toEqual(["s-bob", "s-alice"]);
    await page.close();
  });
});

describe("web page: hostile stored content", () => {
  it("runs nothing, injects nothing, and keeps the layout at phone width", async () => {
    const home = await makeHome();
    const huge = "W".repeat(50_000);
    const rtl = "\u202Eevil\u202Dtxt.exe \u2067rtl\u2069";
    const payload = [
      `<img src=x onerror="window.__pwned='img'">`,
      `<script>window.__pwned='script'</script>`,
      `[click me](javascript:window.__pwned='link') [data](data:text/html,<script>window.__pwned='data'</script>) [safe](https://example.com/x)`,
      `<a href="javascript:window.__pwned='a'">raw anchor</a> <iframe src="javascript:window.__pwned='iframe'"></iframe>`,
      `<svg onload="window.__pwned='svg'"></svg> <div style="position:fixed;inset:0;width:5000px">cover</div>`,
      `![img](https://example.com/pixel.png) ${rtl}`,
      huge,
    ].join("\n\n");
    await seed(databaseOf(home), [
      {
        id: "s-hostile",
        source: "cli",
        title: `<img src=x onerror="window.__pwned='title'"> ${rtl} ${"T".repeat(30)}`,
        model: `<script>window.__pwned='model'</script>`,
        startedAt: T0,
        messages: [
          { role: "user", content: payload, timestamp: T0 + 1 },
          {
            role: "assistant",
            content: payload,
            reasoning: `<img src=x onerror="window.__pwned='reasoning'"> ${huge}`,
            toolCalls: [
              {
                id: "c1",
                type: "function",
                function: { name: `<img src=x onerror="window.__pwned='tool'">`, arguments: `{"x":"<script>window.__pwned='args'</script>${huge}"}` },
              },
            ],
            timestamp: T0 + 2,
          },
          { role: "tool", content: `<img src=x onerror="window.__pwned='result'"> ${huge}`, toolCallId: "c1", timestamp: T0 + 3 },
        ],
      },
    ]);
    const gateway = await spawnGateway({ home });
    const page = await newPage();
    await page.setViewportSize({ width: 375, height: 740 });
    const watch = watchPage(page);

    await page.goto(`${gateway.url}/ui/`);
    await page.locator("li.session-row").first().waitFor();
    await screenshot(page, "hostile-list-phone");
    const noOverflow = (): Promise<boolean> =>
      page.evaluate(
        () => document.documentElement.scrollWidth <= document.documentElement.clientWidth && document.body.scrollWidth <= document.documentElement.clientWidth,
      );
    expect(await noOverflow()).toBe(true);

    await page.locator("a.session-link").first().click();
    await page.locator("article.message").nth(1).waitFor();
    // Open every fold so their content is laid out too.
    for (const summary of await page.locator("details > summary").all()) await summary.click();
    await page.waitForFunction(() => Array.from(document.querySelectorAll("details")).every((d) => d.open));
    await screenshot(page, "hostile-transcript-phone");

    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(watch.dialogs).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    const injected = await page.evaluate(() => ({
      img: document.querySelectorAll("#app img").length,
      script: document.querySelectorAll("#app script, body > script").length,
      iframe: document.querySelectorAll("iframe, object, embed, svg").length,
      handlers: Array.from(document.querySelectorAll("#app *")).filter((el) =>
        Array.from(el.attributes).some((a) => a.name.startsWith("on") || a.name === "style"),
      ).length,
      badLinks: Array.from(document.querySelectorAll("a[href]")).filter((a) => !/^(https?:|mailto:|\/|#)/u.test(a.getAttribute("href") ?? "")).length,
    }));
    expect(injected).toEqual({ img: 0, script: 0, iframe: 0, handlers: 0, badLinks: 0 });
    // Raw HTML is shown as text; the safe link keeps its target and gets rel=noopener noreferrer.
    expect(await page.locator("article.role-user .markdown").textContent()).toContain("<script>window.__pwned='script'</script>");
    const safe = page.locator('article.role-user a[href="https://example.com/x"]');
    expect(await safe.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await page.locator("article.role-user a", { hasText: "click me" }).getAttribute("href")).toBeNull();
    // The title with RTL overrides is isolated in a <bdi>.
    expect(await page.locator("#transcript-heading bdi").count()).toBe(1);
    expect(await noOverflow()).toBe(true);
    const widest = await page.evaluate(() =>
      Math.max(...Array.from(document.querySelectorAll("article.message")).map((el) => el.getBoundingClientRect().right)),
    );
    expect(widest).toBeLessThanOrEqual(375);
    await page.close();
  });
});
