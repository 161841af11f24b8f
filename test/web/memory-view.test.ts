/// <reference lib="dom" />
/**
 * The memory view in a real Chromium against the real API and page (`buildServer` +
 * `uiRoutes` on a loopback port, a SQLite file, the page built into dist/web by
 * `node scripts/build-web.mjs`): an admin lists the people with memories, opens one, sees
 * both memories, edits one (the § editor with its live count, the over-limit refusal), meets
 * a write made elsewhere (409: "changed elsewhere", Reload, save again) and clears one after a
 * confirmation; a memory holding markup is shown as text (no element, no script, and a long
 * right-to-left entry wraps at phone width); the list pages with "Load more"; the open form
 * reaches a person without memory, whose first one the editor creates; a key scoped to a user
 * sees only its own. Screenshots go to test-artifacts/web/.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import type { Page } from "playwright-core";
import { buildServer, uiRoutes } from "../../src/http-api/index.js";
import { openSessionDB, type SessionDB } from "../../src/store/index.js";
import { launchBrowser, screenshot, watchPage, type PageWatch, type TestBrowser } from "./browser.js";

const ADMIN = "admin-key-0123456789abcdef";
const ALICE = "alice-key-0123456789abcdef";
const HOSTILE = `<img src=x onerror="window.__pwned='memory'">`;

let browser: TestBrowser;
let dir: string;
beforeAll(async () => {
  browser = await launchBrowser();
  dir = await mkdtemp(join(tmpdir(), "threadline-memory-web-"));
});
afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

const open: Array<{ app: FastifyInstance; db: SessionDB }> = [];
afterEach(async () => {
  for (const { app, db } of open.splice(0)) {
    await app.close();
    await db.close();
  }
});

/** The API and the page on a free loopback port, over a SQLite file with three people's memories. */
async function start(): Promise<{ url: string; db: SessionDB }> {
  const db = await openSessionDB(join(dir, `memory-${open.length}-${Date.now()}.db`));
  const write = async (platform: string, userId: string, kind: "memory" | "user", entries: string[], at: number): Promise<void> => {
    if ((await db.writeMemory({ owner: { platform, userId }, kind, entries, expectedVersion: null, now: Date.now() - 60_000 + at })) === null)
      throw new Error("seed conflict");
  };
  await write("slack", "bob", "memory", [HOSTILE, "Bob likes **bold** claims."], 1);
  await write("slack", "bob", "user", [`\u202eBob${"x".repeat(1300)}`], 2);
  await write("telegram", "alice", "memory", ["Alice's project is called Kestrel.", "She deploys on Fridays."], 3);
  await write("telegram", "alice", "user", ["Alice is a pilot."], 4);
  const app = await buildServer({
    db,
    keys: [
      { key: ADMIN, name: "ops" },
      { key: ALICE, userId: "alice" },
    ],
    listenHost: "127.0.0.1",
  });
  await app.register(uiRoutes, { prefix: "/ui", apiPrefix: "" });
  await app.listen({ host: "127.0.0.1", port: 0 });
  open.push({ app, db });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return { url: `http://127.0.0.1:${address.port}`, db };
}

async function newPage(): Promise<{ page: Page; watch: PageWatch }> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1200, height: 900 });
  return { page, watch: watchPage(page) };
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

const peopleRows = (page: Page): Promise<string[]> =>
  page.locator("tr.memory-person").evaluateAll((rows) => rows.map((r) => `${r.getAttribute("data-platform")}/${r.getAttribute("data-user-id")}`));
const entriesOf = (page: Page, kind: string): Promise<string[]> =>
  page.locator(`section.memory-kind-${kind} pre.memory-entry`).evaluateAll((items) => items.map((i) => i.textContent ?? ""));

describe("web page: memory", { timeout: 90_000 }, () => {
  it("an admin lists people, reads both memories, edits one with the § editor, meets a conflict, and clears one after confirming", async () => {
    const { url, db } = await start();
    const { page, watch } = await newPage();
    await page.goto(`${url}/ui/memory`);
    await signIn(page, ADMIN);
    await page.locator("tr.memory-person").nth(1).waitFor();
    expect(await peopleRows(page)).toEqual(["telegram/alice", "slack/bob"]);
    expect(await page.locator('tr.memory-person[data-user-id="bob"]').textContent()).toContain("memory 74/2,200, user 1,304/1,375");
    expect(await page.locator('tr.memory-person[data-user-id="alice"]').textContent()).toContain("memory 60/2,200, user 17/1,375");
    await screenshot(page, "memory-list");

    // Bob's memory holds markup: shown as the text it is, nothing rendered, nothing ran.
    await page.getByRole("link", { name: "Memory of user bob on slack" }).click();
    await page.locator("section.memory-kind-memory pre.memory-entry").nth(1).waitFor();
    expect(await entriesOf(page, "memory")).toEqual([HOSTILE, "Bob likes **bold** claims."]);
    expect(await page.locator("main img, main strong, main b").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    // A 1,300-character word with a right-to-left override: wrapped, isolated, no sideways scroll at phone width.
    await page.setViewportSize({ width: 375, height: 740 });
    await expect
      .poll(() =>
        page.evaluate(
          () =>
            document.documentElement.scrollWidth <= document.documentElement.clientWidth && document.body.scrollWidth <= document.documentElement.clientWidth,
        ),
      )
      .toBe(true);
    expect(await page.locator("section.memory-kind-user pre.memory-entry bdi").count()).toBe(1);
    await screenshot(page, "memory-hostile-phone");
    await page.setViewportSize({ width: 1200, height: 900 });

    // Alice: both memories; edit her notes.
    await page.goto(`${url}/ui/memory/telegram/alice`);
    await page.locator("section.memory-kind-user pre.memory-entry").waitFor();
    expect(await entriesOf(page, "memory")).toEqual(["Alice's project is called Kestrel.", "She deploys on Fridays."]);
    expect(await entriesOf(page, "user")).toEqual(["Alice is a pilot."]);
    expect(await page.locator("section.memory-kind-memory .memory-count").textContent()).toBe("60 / 2,200 characters");
    await page.getByRole("button", { name: "Edit Agent's notes (memory)" }).click();
    const editor = page.locator("section.memory-kind-memory textarea");
    expect(await editor.inputValue()).toBe("Alice's project is called Kestrel.\n§\nShe deploys on Fridays.");
    await editor.fill("Alice's project is called Kestrel.\n§\nShe deploys on Thursdays now.\n  §  \n\nShe uses <script>alert(1)</script> in examples.\n§\n");
    await expect
      .poll(() => page.locator("section.memory-kind-memory .memory-chars").textContent())
      .toBe(
        `${[..."Alice's project is called Kestrel.\n§\nShe deploys on Thursdays now.\n§\nShe uses <script>alert(1)</script> in examples."].length} / 2,200 characters`,
      );
    // Over the limit: the count says so and Save is off.
    await editor.fill("x".repeat(2201));
    await expect
      .poll(() => page.locator("section.memory-kind-memory .memory-chars").textContent())
      .toBe("2,201 / 2,200 characters — 1 over the limit: shorten or remove entries");
    expect(await page.locator("section.memory-kind-memory").getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await editor.fill("Alice's project is called Kestrel.\n§\nShe deploys on Thursdays now.\n§\nShe uses <script>alert(1)</script> in examples.");
    await screenshot(page, "memory-edit");
    await page.locator("section.memory-kind-memory").getByRole("button", { name: "Save" }).click();
    await page.locator("section.memory-kind-memory .memory-saved").waitFor();
    expect(await entriesOf(page, "memory")).toEqual([
      "Alice's project is called Kestrel.",
      "She deploys on Thursdays now.",
      "She uses <script>alert(1)</script> in examples.",
    ]);
    const stored = await db.getMemory({ platform: "telegram", userId: "alice" }, "memory");
    expect(stored).toMatchObject({
      version: 2,
      entries: ["Alice's project is called Kestrel.", "She deploys on Thursdays now.", "She uses <script>alert(1)</script> in examples."],
    });

    // A write elsewhere (the agent's memory tool) while the editor is open: refused, then Reload and save again.
    await page.getByRole("button", { name: "Edit About the person (user)" }).click();
    const userEditor = page.locator("section.memory-kind-user textarea");
    await userEditor.fill("Alice is a pilot.\n§\nAlice flies gliders.");
    expect(
      await db.writeMemory({
        owner: { platform: "telegram", userId: "alice" },
        kind: "user",
        entries: ["Alice is a pilot.", "Alice has a dog."],
        expectedVersion: 1,
      }),
    ).not.toBeNull();
    await page.locator("section.memory-kind-user").getByRole("button", { name: "Save" }).click();
    await page.locator("section.memory-kind-user .memory-error").waitFor();
    expect(await page.locator("section.memory-kind-user .memory-error").textContent()).toContain("changed elsewhere");
    expect((await db.getMemory({ platform: "telegram", userId: "alice" }, "user"))?.entries).toEqual(["Alice is a pilot.", "Alice has a dog."]);
    await screenshot(page, "memory-conflict");
    await page.locator("section.memory-kind-user").getByRole("button", { name: "Reload" }).click();
    await expect.poll(() => entriesOf(page, "user")).toEqual(["Alice is a pilot.", "Alice has a dog."]);
    expect(await userEditor.inputValue()).toBe("Alice is a pilot.\n§\nAlice flies gliders."); // the draft is kept
    await userEditor.fill("Alice is a pilot.\n§\nAlice has a dog.\n§\nAlice flies gliders.");
    await page.locator("section.memory-kind-user").getByRole("button", { name: "Save" }).click();
    await page.locator("section.memory-kind-user .memory-saved").waitFor();
    expect(await db.getMemory({ platform: "telegram", userId: "alice" }, "user")).toMatchObject({
      version: 3,
      entries: ["Alice is a pilot.", "Alice has a dog.", "Alice flies gliders."],
    });

    // Clear, after a confirmation (Cancel first: nothing happens).
    await page.getByRole("button", { name: "Clear About the person (user)" }).click();
    const dialog = page.locator("dialog.memory-confirm");
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Clear what the agent knows about user alice on telegram?");
    await screenshot(page, "memory-clear");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect((await db.getMemory({ platform: "telegram", userId: "alice" }, "user"))?.version).toBe(3);
    await page.getByRole("button", { name: "Clear About the person (user)" }).click();
    await page.locator("dialog.memory-confirm").getByRole("button", { name: "Clear", exact: true }).click();
    await page.locator("section.memory-kind-user .memory-empty").waitFor();
    expect(await db.getMemory({ platform: "telegram", userId: "alice" }, "user")).toBeNull();
    expect((await db.getMemory({ platform: "telegram", userId: "alice" }, "memory"))?.version).toBe(2);

    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(watch.pageErrors).toEqual([]);
    expect(watch.dialogs).toEqual([]);
    expect(watch.consoleErrors.filter((e) => /Content Security Policy|Refused to/iu.test(e))).toEqual([]);
    await page.close();
  });

  it("pages the people with 'Load more', and opens a person without memory by the form to write their first", async () => {
    const { url, db } = await start();
    for (let i = 0; i < 110; i++) {
      await db.writeMemory({
        owner: { platform: "discord", userId: `u${String(i).padStart(3, "0")}` },
        kind: "memory",
        entries: [`note ${i}`],
        expectedVersion: null,
        now: Date.now() - 120_000 + i,
      });
    }
    const { page, watch } = await newPage();
    await page.goto(`${url}/ui/memory`);
    await signIn(page, ADMIN);
    await page.getByRole("button", { name: "Load more" }).waitFor();
    // 100 records a page: alice's two and bob's two, then the 96 newest of the seeded 110 (those are older).
    expect(await page.locator("tr.memory-person").count()).toBe(98);
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => page.locator("tr.memory-person").count()).toBe(112);
    expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0);
    const rows = await peopleRows(page);
    expect(rows.slice(0, 2)).toEqual(["telegram/alice", "slack/bob"]);
    expect(rows.at(-1)).toBe("discord/u000");
    expect(new Set(rows).size).toBe(112);

    await page.getByLabel("Platform").fill("matrix");
    await page.getByLabel("User id").fill("@carol:example.org");
    await page.getByRole("button", { name: "Open" }).click();
    await page.locator("section.memory-kind-user .memory-empty").waitFor();
    expect(await page.locator("#memory-person-heading").textContent()).toBe("Memory of user @carol:example.org on matrix");
    await page.getByRole("button", { name: "Edit About the person (user)" }).click();
    await page.locator("section.memory-kind-user textarea").fill("Carol runs the homeserver.");
    await page.locator("section.memory-kind-user").getByRole("button", { name: "Save" }).click();
    await page.locator("section.memory-kind-user .memory-saved").waitFor();
    expect(await db.getMemory({ platform: "matrix", userId: "@carol:example.org" }, "user")).toMatchObject({
      version: 1,
      entries: ["Carol runs the homeserver."],
    });
    expect(watch.pageErrors).toEqual([]);
    await page.close();
  });

  it("a key scoped to a user lists and opens only its own memories", async () => {
    const { url } = await start();
    const { page, watch } = await newPage();
    await page.goto(`${url}/ui/memory`);
    await signIn(page, ALICE);
    await page.locator("tr.memory-person").first().waitFor();
    expect(await peopleRows(page)).toEqual(["telegram/alice"]);
    // Bob's page by URL: nothing of his, as if he had none.
    await page.goto(`${url}/ui/memory/slack/bob`);
    await page.locator("section.memory-kind-user .memory-empty").waitFor();
    expect(await page.locator("section.memory-kind-memory .memory-empty").textContent()).toBe("Nothing stored.");
    expect(await page.locator("main").textContent()).not.toContain("bold");
    expect(await page.locator("main img").count()).toBe(0);
    expect(watch.pageErrors).toEqual([]);
    await page.close();
  });
});
