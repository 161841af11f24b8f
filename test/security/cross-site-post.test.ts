/**
 * Threat: cross-site request forgery against the keyless admin surface (issue 27, point 4).
 * `curl -X POST -H 'Origin: http://attacker.example' http://127.0.0.1:8787/ui/api/execution/history/cleanup`
 * answered 200 and deleted runs: any page the operator visits can post a form to it. A
 * state-changing request whose `Origin` (or `Sec-Fetch-Site`) says it comes from another
 * site is refused with 403 and changes nothing; without browser headers (curl, SDKs,
 * platform webhooks) it still works, and so does the page's own same-origin request.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { Executions } from "../../src/executions/index.js";
import { openSessionDB } from "../../src/store/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { cleanupProcesses, databaseOf, makeHome, postWebhook, spawnGateway, startCallbackServer } from "../serve/gateway-process.js";
import { rawRequest } from "./raw-http.js";

const TEST_TIMEOUT = 60_000;
const CLEANUP = "/ui/api/execution/history/cleanup";
const SECRET = "cross-site-webhook-secret-0123";

const schemas: string[] = [];
afterEach(async () => {
  await cleanupProcesses();
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

/** Two saved agent runs in a fresh database of the backend; returns its target. */
async function seedRuns(backend: "sqlite" | "postgres", home: string): Promise<string> {
  let target = databaseOf(home);
  if (backend === "postgres") {
    await requirePostgres();
    const schema = `tl_sec_${randomBytes(5).toString("hex")}`;
    schemas.push(schema);
    target = `${TEST_PG_URL}?schema=${schema}`;
  }
  const db = await openSessionDB(target);
  try {
    const executions = new Executions(db);
    for (const name of ["alpha", "beta"]) await executions.saveAgentResult({ messages: [{ role: "user", content: name }] }, { sessionId: `run-${name}`, name });
  } finally {
    await db.close();
  }
  return target;
}

async function runCount(url: string): Promise<number> {
  const listed = await rawRequest(`${url}/ui/api/execution/history`);
  expect(listed.status).toBe(200);
  return (listed.json as { total: number }).total;
}

describe.each(["sqlite", "postgres"] as const)("cross-site POSTs are refused (%s)", (backend) => {
  it(
    "Origin: http://attacker.example POST to the cleanup route → 403, nothing deleted; without Origin (or same-origin) it works",
    async () => {
      const home = await makeHome({ titles: { enabled: false } });
      const database = await seedRuns(backend, home);
      const gateway = await spawnGateway({ home, env: { THREADLINE_DB: database } });
      expect(gateway.output()).toContain(`"backend":"${backend}"`);
      const body = JSON.stringify({ olderThanDays: 0 });
      expect(await runCount(gateway.url)).toBe(2);

      const forged: Array<Record<string, string>> = [
        { origin: "http://attacker.example", "content-type": "application/json" },
        // A form post: the body type a page may send without a preflight.
        { origin: "http://attacker.example", "content-type": "text/plain" },
        { origin: "null", "content-type": "application/json" },
        // Another port of this machine is another origin (a local dev server, another tool).
        { origin: "http://127.0.0.1:1", "content-type": "application/json" },
        { "sec-fetch-site": "cross-site", "content-type": "application/json" },
      ];
      for (const headers of forged) {
        const refused = await rawRequest(`${gateway.url}${CLEANUP}`, { method: "POST", headers, body });
        expect(refused.status, JSON.stringify(headers)).toBe(403);
        expect(refused.text).toMatch(/another site/);
      }
      // A cross-site DELETE and a cross-site chat completion are refused too.
      expect(
        (await rawRequest(`${gateway.url}/ui/api/execution/history/run-alpha`, { method: "DELETE", headers: { origin: "http://attacker.example" } })).status,
      ).toBe(403);
      const chat = await rawRequest(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { origin: "http://attacker.example", "content-type": "text/plain", "x-threadline-session-key": "csrf" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      expect(chat.status).toBe(403);
      expect(await runCount(gateway.url)).toBe(2);

      // The page's own request (same origin) works: here it removes one of the two runs.
      const own = await rawRequest(`${gateway.url}${CLEANUP}`, {
        method: "POST",
        headers: { origin: gateway.url, "sec-fetch-site": "same-origin", "content-type": "application/json" },
        body: JSON.stringify({ maxSessions: 1 }),
      });
      expect(own.status).toBe(200);
      expect(await runCount(gateway.url)).toBe(1);
      // And so does curl, without browser headers.
      const curl = await rawRequest(`${gateway.url}${CLEANUP}`, { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(curl.status).toBe(200);
      expect(await runCount(gateway.url)).toBe(0);
    },
    TEST_TIMEOUT,
  );
});

describe("platform webhooks are not browser requests", () => {
  it(
    "platform webhooks (no browser Origin) keep working",
    async () => {
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({ titles: { enabled: false }, adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } } });
      const gateway = await spawnGateway({ home });
      const posted = await postWebhook(gateway.url, SECRET, { chatId: "c1", userId: "u1", text: "hello", messageId: "m1" });
      expect(posted.status).toBe(202);
      expect((await callback.replyTo("m1")).signatureValid).toBe(true);
    },
    TEST_TIMEOUT,
  );
});
