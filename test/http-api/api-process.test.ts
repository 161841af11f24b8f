/**
 * The HTTP API in real processes (the BUILT bin, `dist/cli/main.js`; `npm run build`
 * first), on SQLite and PostgreSQL: `threadline serve` with `api.enabled` serves the API on
 * the gateway's port next to the chat endpoint (whose own auth is unchanged), and
 * `threadline api` runs it alone with pino logs and stops on SIGTERM with exit 0. Both
 * refuse to start without keys.
 */
import { spawn } from "node:child_process";
import { afterEach, expect, it } from "vitest";
import { Executions } from "../../src/executions/index.js";
import { forEachBackend, type TestDatabase } from "../gateway/backends.js";
import {
  BIN,
  cleanupProcesses,
  completionText,
  freePort,
  GatewayProcess,
  makeHome,
  postChat,
  runServe,
  spawnGateway,
  waitFor,
} from "../serve/gateway-process.js";
import { ADMIN, ALICE, call, jsonLines, KEYS } from "./api-harness.js";

const TEST_TIMEOUT = 60_000;
const apiChildren = new Set<GatewayProcess>();

afterEach(async () => {
  await Promise.all([...apiChildren].map((child) => child.kill().catch(() => {})));
  apiChildren.clear();
  await cleanupProcesses();
});

/** The `--db` argument that points a child at a test database. */
function dbArgument(database: TestDatabase): string {
  return database.target.schema === undefined ? database.target.url : `${database.target.url}?schema=${database.target.schema}`;
}

/** The environment of a child: no Threadline/OpenAI settings of the parent leak in. */
function childEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: home };
  for (const name of ["THREADLINE_DB", "THREADLINE_CONFIG", "OPENAI_BASE_URL", "OPENAI_API_KEY", "THREADLINE_MODEL"]) delete env[name];
  return env;
}

/** Runs `threadline api …`; resolves once `/openapi.json` answers (or the child exits, for refusals). */
async function spawnApi(home: string, args: string[], options: { expectExit?: boolean } = {}): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, "api", ...args, "--port", String(port)], { env: childEnv(home), stdio: ["ignore", "pipe", "pipe"] });
  const api = new GatewayProcess(child, home, port);
  apiChildren.add(api);
  if (options.expectExit) {
    await api.exited;
    return api;
  }
  await waitFor(
    async () => {
      if (api.exitStatus !== null) throw new Error(`threadline api exited: ${api.output()}`);
      return (await fetch(`${api.url}/openapi.json`).catch(() => null))?.ok === true;
    },
    { what: `threadline api on ${api.url}`, describe: () => api.output() },
  );
  return api;
}

forEachBackend((backend) => {
  it(
    "threadline serve with api.enabled serves the API on its port; the chat endpoint keeps its own auth",
    async () => {
      const database = await backend.fresh();
      const home = await makeHome({ api: { enabled: true, keys: KEYS }, titles: { enabled: false }, gateway: { logLevel: "warn" } });
      const gateway = await spawnGateway({ home, args: ["--db", dbArgument(database)] });

      // The chat endpoint needs no API key (loopback, no tokens configured), as before.
      expect(completionText(await postChat(gateway.url, "hello api", { sessionKey: "api-e2e" }))).toContain("hello api");
      const listed = await call(gateway.url, "GET", "/sessions");
      expect(listed.status).toBe(200);
      expect(listed.body.items).toHaveLength(1);
      const id = listed.body.items[0].id as string;
      expect(listed.body.items[0]).toMatchObject({ source: "api-server", preview: "hello api" });
      const messages = await call(gateway.url, "GET", `/sessions/${id}/messages`, { bearer: ADMIN });
      expect(messages.body.items.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
      const exported = jsonLines((await call(gateway.url, "GET", `/sessions/${id}/export`)).text);
      expect(exported).toHaveLength(1);
      expect((await call(gateway.url, "GET", "/sessions", { key: null })).status).toBe(401);
      expect((await call(gateway.url, "GET", "/sessions", { key: "wrong-key-0123456789abcdef" })).status).toBe(403);
      expect((await call(gateway.url, "GET", "/openapi.json", { key: null })).body.openapi).toBe("3.1.0");
      // The gateway's own routes are untouched by the API's auth and error handling.
      expect((await call(gateway.url, "GET", "/healthz", { key: null })).status).toBe(200);
      expect((await fetch(`${gateway.url}/metrics`)).status).toBe(200);

      await new Executions(database.db).saveAgentResult({ messages: [{ role: "user", content: "hi" }] }, { sessionId: "e2e", userId: "alice" });
      expect((await call(gateway.url, "GET", "/execution/history/e2e", { key: ALICE })).body.id).toBe("agent-e2e");
      expect((await call(gateway.url, "DELETE", "/execution/history/agent-e2e", { key: ALICE })).status).toBe(204);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "threadline api runs the API alone with pino logs and exits 0 on SIGTERM",
    async () => {
      const database = await backend.fresh();
      await database.db.createSession({ id: "standalone-1", source: "cli", userId: "alice" });
      const home = await makeHome({ api: { keys: KEYS } });
      const api = await spawnApi(home, ["--db", dbArgument(database)]);
      const reply = await call(api.url, "GET", "/sessions", { key: ALICE });
      expect(reply.status).toBe(200);
      expect(reply.body.items.map((s: { id: string }) => s.id)).toEqual(["standalone-1"]);
      expect((await call(api.url, "GET", "/sessions/standalone-1", { key: "wrong-key-0123456789abcdef" })).status).toBe(403);
      expect((await call(api.url, "GET", "/nope")).body.error.code).toBe("TL_ERR_NOT_FOUND");
      expect(await api.stop()).toEqual({ code: 0, signal: null });
      const logs = api.logLines();
      expect(logs.some((l) => String(l["msg"]).startsWith("HTTP API listening on"))).toBe(true);
      expect(logs.some((l) => l["msg"] === "HTTP API stopped")).toBe(true);
      expect(api.output()).not.toContain(ALICE); // keys never reach the log
    },
    TEST_TIMEOUT,
  );
});

it(
  "without keys, threadline serve (api.enabled) and threadline api refuse to start with a clear error; loopback-only opt-in works",
  async () => {
    const home = await makeHome({ api: { enabled: true } });
    const serve = await runServe({ home });
    expect(serve.code).toBe(2); // a config problem: the CLI's usage exit code
    expect(serve.stderr).toMatch(/threadline: The HTTP API needs at least one key in api\.keys/);

    const apiHome = await makeHome({});
    const refused = await spawnApi(apiHome, [], { expectExit: true });
    expect(refused.exitStatus?.code).toBe(2);
    expect(refused.output()).toMatch(/needs at least one key in api\.keys/);

    const openHome = await makeHome({ api: { allowUnauthenticatedLoopback: true } });
    const wide = await spawnApi(openHome, ["--host", "0.0.0.0"], { expectExit: true });
    expect(wide.exitStatus?.code).toBe(2);
    expect(wide.output()).toMatch(/api\.allowUnauthenticatedLoopback: the API would listen on 0\.0\.0\.0/);

    const open = await spawnApi(openHome, []);
    expect((await call(open.url, "GET", "/sessions", { key: null })).status).toBe(200);
    expect(await open.stop()).toEqual({ code: 0, signal: null });
  },
  TEST_TIMEOUT,
);
