/// <reference lib="dom" />
/**
 * The executions, stats and gateway-live views in a real Chromium against a real
 * `threadline serve` (and `threadline api`) child process: runs listed, filtered by agent
 * and workflow (filters in the URL), paged, a workflow's steps, results shown as text;
 * stats charts drawn (canvas with a size) with the seeded numbers in the table fallback,
 * and a tenant seeing only its own figures; the live view updating while a chat
 * completion is held by a fake provider, without a reload; clear messages under
 * `threadline api` and for a scoped key. Screenshots go to test-artifacts/web/.
 */
import { spawn } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { Executions } from "../../src/executions/index.js";
import { openSessionDB } from "../../src/store/index.js";
import { startFakeOpenAiServer, fakeTextReply, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { BIN, cleanupProcesses, databaseOf, freePort, GatewayProcess, makeHome, postChat, spawnGateway, waitFor } from "../serve/gateway-process.js";
import { launchBrowser, screenshot, watchPage, type PageWatch, type TestBrowser } from "./browser.js";
import { exchange, seed, T0 } from "./seed.js";

let browser: TestBrowser;
const fakes: FakeOpenAiServer[] = [];
const extra = new Set<GatewayProcess>();
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  for (const child of extra) await child.kill().catch(() => {});
  extra.clear();
  await cleanupProcesses();
  for (const fake of fakes.splice(0)) await fake.close();
});

async function newPage(): Promise<{ page: Page; watch: PageWatch }> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1200, height: 900 });
  return { page, watch: watchPage(page) };
}

/** No uncaught error, no dialog, no CSP violation (Chart.js must not need inline styles). */
function expectClean(watch: PageWatch): void {
  expect(watch.pageErrors).toEqual([]);
  expect(watch.dialogs).toEqual([]);
  expect(watch.consoleErrors.filter((e) => /Content Security Policy|Refused to/iu.test(e))).toEqual([]);
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

const runIds = (page: Page): Promise<string[]> =>
  page.locator("li.execution-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-execution-id") ?? ""));

describe("web page: executions", () => {
  it("lists runs, filters by agent and workflow in the URL, pages, and shows a workflow's steps as text", async () => {
    const home = await makeHome();
    const db = await openSessionDB(databaseOf(home));
    try {
      let now = T0;
      const ex = new Executions(db, { clock: () => now });
      for (let i = 0; i < 26; i++) {
        now = T0 + i;
        await ex.saveAgentResult({ finalResponse: `bulk ${i}` }, { sessionId: `bulk${String(i).padStart(2, "0")}`, name: "bulk" });
      }
      now = T0 + 100;
      await ex.saveAgentResult(
        {
          finalResponse: `<img src=x onerror="window.__pwned='exec'">`,
          messages: [
            { role: "user", content: "2+2?" },
            { role: "assistant", content: "4" },
          ],
        },
        { sessionId: "calc", name: "calculator" },
      );
      now = T0 + 200;
      await ex.saveWorkflowResult(
        {
          status: "completed",
          finalResponse: "report sent",
          steps: [
            { agentName: "fetcher", finalResponse: "fetched 3 items", messages: [{ role: "assistant", content: "fetched" }] },
            { agentName: "summarizer", status: "failed", error: new Error("model timed out") },
          ],
        },
        { sessionId: "report", name: "daily-report" },
      );
    } finally {
      await db.close();
    }
    const gateway = await spawnGateway({ home });
    const { page, watch } = await newPage();
    await page.goto(`${gateway.url}/ui/executions`);
    await page.locator("li.execution-row").nth(24).waitFor();
    // Newest update first, 25 a page of the 28 runs.
    expect((await runIds(page)).slice(0, 3)).toEqual(["workflow-report", "agent-calc", "agent-bulk25"]);
    expect(await page.locator("#executions-total").textContent()).toBe("28 runs");
    await screenshot(page, "executions");
    await page.getByRole("link", { name: "Next" }).click();
    await page.waitForURL(/\/ui\/executions\?page=2$/u);
    await expect.poll(() => runIds(page)).toEqual(["agent-bulk02", "agent-bulk01", "agent-bulk00"]);

    // Filter by agent: in the URL, kept on reload.
    await page.goto(`${gateway.url}/ui/executions`);
    await page.getByLabel("Name").fill("calculator");
    await page.getByLabel("Name").press("Enter");
    await page.waitForURL(/\/ui\/executions\?agent=calculator$/u);
    await expect.poll(() => runIds(page)).toEqual(["agent-calc"]);
    await page.reload();
    await expect.poll(() => runIds(page)).toEqual(["agent-calc"]);
    expect(await page.getByLabel("Name").inputValue()).toBe("calculator");

    // An agent run: the hostile final response is text; the conversation is folded.
    await page.locator("a.session-link").first().click();
    await page.waitForURL(/\/ui\/executions\/agent-calc$/u);
    await page.locator(".run-final").waitFor();
    expect(await page.locator(".run-final").textContent()).toBe(`<img src=x onerror="window.__pwned='exec'">`);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(await page.locator("details.run-messages").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);

    // Filter by workflow, then open it: its steps, each with its agent, status, result and link.
    await page.goto(`${gateway.url}/ui/executions`);
    await page.getByLabel("Runs of").selectOption("workflow");
    await page.getByLabel("Name").fill("daily-report");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(/\/ui\/executions\?workflow=daily-report$/u);
    await expect.poll(() => runIds(page)).toEqual(["workflow-report"]);
    await page.locator("a.session-link").first().click();
    await page.locator("li.step").nth(1).waitFor();
    expect(await page.locator(".run-status").textContent()).toBe("completed");
    expect(await page.locator(".run-final").textContent()).toBe("report sent");
    expect(await page.locator("li.step").evaluateAll((steps) => steps.map((s) => s.getAttribute("data-step-id")))).toEqual([
      "workflow-report-0",
      "workflow-report-1",
    ]);
    expect(await page.locator("li.step .step-agent").allTextContents()).toEqual(["fetcher", "summarizer"]);
    expect(await page.locator("li.step .step-final").first().textContent()).toBe("fetched 3 items");
    expect(await page.locator("li.step .step-status").nth(1).textContent()).toContain("failed");
    await screenshot(page, "execution-workflow");
    // A step links to its own run, which links back to its workflow.
    await page.getByRole("link", { name: "workflow-report-1" }).click();
    await page.waitForURL(/\/ui\/executions\/workflow-report-1$/u);
    await page.locator(".run-error").waitFor();
    expect(await page.locator(".run-error").textContent()).toContain("model timed out");
    expect(await page.getByRole("link", { name: "workflow-report", exact: true }).count()).toBe(1);
    expectClean(watch);
    await page.close();
  });
});

describe("web page: stats", () => {
  it("draws the charts with the seeded numbers in the tables; a tenant sees only its own figures", async () => {
    const home = await makeHome({
      api: {
        keys: [
          { key: "admin-key-0123456789abcdef", name: "ops" },
          { key: "alice-key-0123456789abcdef", userId: "alice" },
        ],
      },
    });
    const path = databaseOf(home);
    await seed(path, [
      { id: "s-a1", source: "cli", userId: "alice", model: "gpt-4o", startedAt: T0, messages: exchange(T0 + 1, "a", "b") },
      {
        id: "s-a2",
        source: "telegram",
        userId: "alice",
        model: "gpt-4o",
        startedAt: T0 + 10,
        messages: [...exchange(T0 + 11, "c", "d"), ...exchange(T0 + 13, "e", "f")],
      },
      { id: "s-b1", source: "cli", userId: "bob", model: "claude-x", startedAt: T0 + 20, messages: exchange(T0 + 21, "g", "h") },
    ]);
    const db = await openSessionDB(path);
    try {
      await db.recordUsage("s-a1", { inputTokens: 1000, outputTokens: 200, estimatedCostUsd: 0.5 });
      await db.recordUsage("s-a2", { inputTokens: 3000, outputTokens: 800, estimatedCostUsd: 1.5 });
      await db.recordUsage("s-b1", { inputTokens: 70000, outputTokens: 7000, estimatedCostUsd: 9 });
    } finally {
      await db.close();
    }
    const gateway = await spawnGateway({ home });
    const { page, watch } = await newPage();
    await page.goto(`${gateway.url}/ui/stats`);
    await signIn(page, "admin-key-0123456789abcdef");
    await page.locator("figure.chart-database canvas").waitFor();

    // Every chart is a canvas with a size.
    for (const name of ["chart-sessions", "chart-messages", "chart-tokens", "chart-cost", "chart-database"]) {
      const box = await page.locator(`figure.${name} canvas`).boundingBox();
      expect(box, name).not.toBeNull();
      expect(box!.width, name).toBeGreaterThan(100);
      expect(box!.height, name).toBeGreaterThan(100);
      expect(await page.locator(`figure.${name} canvas`).getAttribute("role")).toBe("img");
    }
    // The canvas has been drawn on (some pixel is not transparent).
    const painted = await page.locator("figure.chart-tokens canvas").evaluate((c) => {
      const canvas = c as HTMLCanvasElement;
      const data = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
      return false;
    });
    expect(painted).toBe(true);
    expect(await page.locator("#total-sessions").textContent()).toBe("3");
    expect(await page.locator("#total-messages").textContent()).toBe("8");
    expect(await page.locator("#total-tokens").textContent()).toBe("82,000");
    expect(await page.locator("#database-size").textContent()).toMatch(/\d/u);

    // The fallback tables hold the numbers (opened, they are readable text).
    const table = async (name: string): Promise<string[][]> => {
      await page.locator(`figure.${name} details summary`).click();
      return page.locator(`figure.${name} table tr`).evaluateAll((rows) => rows.map((r) => Array.from(r.children).map((c) => c.textContent ?? "")));
    };
    const tokens = await table("chart-tokens");
    expect(tokens[0]).toEqual(["Model", "input", "output"]);
    expect(tokens.slice(1).sort()).toEqual([
      ["claude-x", "70,000", "7,000"],
      ["gpt-4o", "4,000", "1,000"],
    ]);
    const cost = await table("chart-cost");
    expect(cost.slice(1).sort()).toEqual([
      ["claude-x", "$9.00"],
      ["gpt-4o", "$2.00"],
    ]);
    const sessions = await table("chart-sessions");
    expect(sessions[0]).toEqual(["Day", "cli", "telegram"]);
    const sum = (rows: string[][], col: number): number => rows.slice(1).reduce((n, r) => n + Number(r[col]), 0);
    expect([sum(sessions, 1), sum(sessions, 2)]).toEqual([2, 1]);
    const messages = await table("chart-messages");
    expect([sum(messages, 1), sum(messages, 2)]).toEqual([4, 4]);
    await screenshot(page, "stats");
    expectClean(watch);

    // Alice sees her own figures only, and no database size.
    await page.getByRole("button", { name: "Sign out" }).click();
    await signIn(page, "alice-key-0123456789abcdef");
    await page.locator("figure.chart-tokens canvas").waitFor();
    expect(await page.locator("#total-sessions").textContent()).toBe("2");
    expect(await page.locator("#total-tokens").textContent()).toBe("5,000");
    expect(await page.locator("#database-size").count()).toBe(0);
    expect(await page.locator("figure.chart-database").count()).toBe(0);
    expect(await page.locator("#database-size-hidden").isVisible()).toBe(true);
    const aliceTokens = await table("chart-tokens");
    expect(aliceTokens.slice(1)).toEqual([["gpt-4o", "4,000", "1,000"]]);
    expect(await page.content()).not.toContain("claude-x");
    await screenshot(page, "stats-tenant");
    expectClean(watch);
    await page.close();
  });
});

describe("web page: gateway live", () => {
  it("updates running turns and active sessions while a chat completion is held, without a reload", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const fake = await startFakeOpenAiServer({
      models: ["fake-model"],
      script: async () => {
        await gate;
        return fakeTextReply("held reply");
      },
    });
    fakes.push(fake);
    const home = await makeHome({ titles: { enabled: false } });
    const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: "sk-fake", THREADLINE_MODEL: "fake-model" } });
    const { page, watch } = await newPage();
    await page.goto(`${gateway.url}/ui/live`);
    await page.locator("#live-turns").waitFor();
    await expect.poll(() => page.locator("#live-state").textContent()).toContain("Live");
    expect(await page.locator("#live-turns").textContent()).toBe("0");
    expect(await page.locator("#live-completed").textContent()).toBe("0");
    expect(await page.locator(".adapters li[data-platform='api-server']").textContent()).toContain("connected");
    // A marker that a reload would lose.
    await page.evaluate(() => ((window as unknown as { __marker?: number }).__marker = 1));

    const reply = postChat(gateway.url, "hello live", { sessionKey: "live-test" });
    await waitFor(() => fake.chatRequests().length === 1, { what: "the held provider request", describe: () => gateway.output() });
    await expect.poll(() => page.locator("#live-turns").textContent(), { timeout: 15_000 }).toBe("1");
    expect(Number(await page.locator("#live-sessions").textContent())).toBeGreaterThanOrEqual(1);
    expect(await page.locator("table.running-sessions tbody tr").count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator("table.running-sessions tbody").textContent()).toContain("running a turn");

    // A second message to the same conversation waits in its queue.
    const second = postChat(gateway.url, "and again", { sessionKey: "live-test" });
    await expect.poll(() => page.locator("#live-queued").textContent(), { timeout: 15_000 }).toBe("1");
    expect(await page.locator("table.queues tbody tr td").nth(1).textContent()).toBe("1");
    await screenshot(page, "live");

    release();
    expect((await reply).status).toBe(200);
    expect((await second).status).toBe(200);
    await expect.poll(() => page.locator("#live-turns").textContent(), { timeout: 15_000 }).toBe("0");
    await expect.poll(() => page.locator("#live-completed").textContent(), { timeout: 15_000 }).toBe("2");
    expect(await page.locator("#live-queued").textContent()).toBe("0");
    expect(await page.evaluate(() => (window as unknown as { __marker?: number }).__marker)).toBe(1);
    expectClean(watch);
    await page.close();
  });

  it("says a scoped key cannot see it, and that `threadline api` runs no gateway", async () => {
    const home = await makeHome({ api: { keys: [{ key: "alice-key-0123456789abcdef", userId: "alice" }] } });
    const gateway = await spawnGateway({ home });
    const { page, watch } = await newPage();
    await page.goto(`${gateway.url}/ui/live`);
    await signIn(page, "alice-key-0123456789abcdef");
    await page.locator("#live-unavailable").waitFor();
    expect(await page.locator("#live-unavailable").textContent()).toContain("needs an admin key");
    await gateway.kill();

    const apiHome = await makeHome({ api: { allowUnauthenticatedLoopback: true } });
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: apiHome };
    for (const name of ["THREADLINE_DB", "THREADLINE_CONFIG"]) delete env[name];
    const child = new GatewayProcess(
      spawn(process.execPath, [BIN, "api", "--db", databaseOf(apiHome), "--port", String(port)], { env, stdio: ["ignore", "pipe", "pipe"] }),
      apiHome,
      port,
    );
    extra.add(child);
    await waitFor(() => child.logLines().some((l) => l["msg"] === `web page: ${child.url}/ui/`), { what: "the web page line", describe: () => child.output() });
    await page.goto(`${child.url}/ui/live`);
    await page.locator("#live-unavailable").waitFor();
    expect(await page.locator("#live-unavailable").textContent()).toContain("threadline serve");
    await screenshot(page, "live-api");
    expect(watch.pageErrors).toEqual([]);
    await page.close();
  });
});
