/**
 * `threadline mcp` over Streamable HTTP on 127.0.0.1: a real server ({@link startMcpHttp}, and
 * once the built bin with `--http`) and the MCP SDK's real `Client` over
 * `StreamableHTTPClientTransport`. Tenant keys as the HTTP API has them: a key of tenant A
 * never sees B's sessions (tools, search and resources alike); no key → 401, a wrong key → 403;
 * without keys only loopback; Host/Origin checked against DNS rebinding.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startMcpHttp, type RunningMcpHttp } from "../../src/mcp/index.js";
import { InvalidInputError } from "../../src/store/index.js";
import { builtCli } from "../cli/cli-run.js";
import { waitFor, withDeadline } from "../support/wait-for.js";
import { ADMIN, ALICE, ALICE_DEPLOY, BOB, BOB_SECRET, dataBlockOf, KEYS, LONG, ORPHAN, seededDatabase, textOf, type Fixture } from "./mcp-fixture.js";

const TIMEOUT = 30_000;
let fixture: Fixture;
const servers: RunningMcpHttp[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  fixture = await seededDatabase();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await fixture.cleanup();
});

async function serve(options: Partial<Parameters<typeof startMcpHttp>[0]> = {}): Promise<RunningMcpHttp> {
  const server = await startMcpHttp({
    db: fixture.db,
    host: "127.0.0.1",
    port: 0,
    keys: KEYS,
    onError: (error) => {
      throw error;
    },
    ...options,
  });
  servers.push(server);
  return server;
}

async function connect(url: string, key: string | null): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), key === null ? {} : { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const client = new Client({ name: "threadline-http-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A raw request with headers fetch would not let us set (Host). */
function rawPost(url: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const ids = (items: Array<{ id: string }>): string[] => items.map((s) => s.id).sort();

describe("threadline mcp over Streamable HTTP", () => {
  it(
    "a tenant's key sees only its own sessions: list, show, search and resources",
    async () => {
      const server = await serve();
      const alice = await connect(server.url, ALICE);
      const list = (await alice.callTool({ name: "sessions_list", arguments: {} })).structuredContent as { items: Array<{ id: string }> };
      expect(ids(list.items)).toEqual([ALICE_DEPLOY, LONG].sort());

      const search = await alice.callTool({ name: "session_search", arguments: { query: "kraken", limit: 10 } });
      const found = (search.structuredContent as { sessions: Array<{ sessionId: string }> }).sessions.map((s) => s.sessionId);
      expect(found).toEqual([ALICE_DEPLOY]);
      expect(dataBlockOf(textOf(search))).not.toMatch(/hunter2|unowned/u);
      const browse = (await alice.callTool({ name: "session_search", arguments: { limit: 10 } })).structuredContent as {
        sessions: Array<{ sessionId: string }>;
      };
      expect(browse.sessions.map((s) => s.sessionId).sort()).toEqual([ALICE_DEPLOY, LONG].sort());

      for (const other of [BOB_SECRET, ORPHAN]) {
        const shown = await alice.callTool({ name: "session_show", arguments: { id: other } });
        expect(shown.isError).toBe(true);
        expect(textOf(shown)).toBe(`session_show: No session with the id '${other}'. Session ids are exact: call sessions_list or session_search to find one.`);
        await expect(alice.readResource({ uri: `threadline://sessions/${other}` })).rejects.toThrow(/No session with the id/u);
      }
      const resources = (await alice.listResources()).resources.map((r) => r.name).sort();
      expect(resources).toEqual([ALICE_DEPLOY, LONG].sort());

      const bob = await connect(server.url, BOB);
      const bobList = (await bob.callTool({ name: "sessions_list", arguments: {} })).structuredContent as { items: Array<{ id: string }> };
      expect(ids(bobList.items)).toEqual([BOB_SECRET]);
      expect((await bob.callTool({ name: "session_show", arguments: { id: ALICE_DEPLOY } })).isError).toBe(true);

      const admin = await connect(server.url, ADMIN);
      const all = (await admin.callTool({ name: "sessions_list", arguments: {} })).structuredContent as { items: Array<{ id: string }> };
      expect(ids(all.items)).toEqual([ALICE_DEPLOY, LONG, BOB_SECRET, ORPHAN].sort());
    },
    TIMEOUT,
  );

  it(
    "no key is a 401 (with WWW-Authenticate), a wrong key a 403; the client cannot connect without a key",
    async () => {
      const server = await serve();
      const none = await rawPost(server.url, {});
      expect(none.status).toBe(401);
      expect(none.headers["www-authenticate"]).toBe('Bearer realm="threadline"');
      expect(JSON.parse(none.body)).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringMatching(/An API key is required/u) } });
      const wrong = await rawPost(server.url, { "x-api-key": "wrong-key-0123456789abcdef" });
      expect(wrong.status).toBe(403);
      expect(JSON.parse(wrong.body).error.message).toBe("The API key is not valid.");
      await expect(connect(server.url, null)).rejects.toMatchObject({ code: 401, message: expect.stringMatching(/An API key is required/u) });
      // With a key the same raw request goes through.
      const ok = await rawPost(server.url, { "x-api-key": ALICE });
      expect(ok.status).toBe(200);
      // GET (a stream) is not offered by this stateless server.
      expect((await fetch(server.url, { headers: { authorization: `Bearer ${ALICE}`, accept: "text/event-stream" } })).status).toBe(405);
    },
    TIMEOUT,
  );

  it(
    "writes exist only with allowWrites, and a tenant can neither rename nor delete another tenant's session",
    async () => {
      const readOnly = await serve();
      const aliceRead = await connect(readOnly.url, ALICE);
      expect((await aliceRead.listTools()).tools.map((t) => t.name)).not.toContain("session_delete");

      const writable = await serve({ allowWrites: true });
      const alice = await connect(writable.url, ALICE);
      expect((await alice.listTools()).tools.map((t) => t.name)).toContain("session_delete");
      const rename = await alice.callTool({ name: "session_rename", arguments: { id: BOB_SECRET, title: "mine now" } });
      expect(rename.isError).toBe(true);
      expect(textOf(rename)).toMatch(/No session with the id 'bob-secret'/u);
      const del = await alice.callTool({ name: "session_delete", arguments: { id: BOB_SECRET } });
      expect(del.isError).toBe(true);
      expect(await fixture.db.getSession(BOB_SECRET)).not.toBeNull();
      expect(await fixture.db.getTitle(BOB_SECRET)).toBe("Bob's kraken notes");
      // A title another tenant holds is refused without naming the holder.
      const taken = await alice.callTool({ name: "session_rename", arguments: { id: LONG, title: "Bob's kraken notes" } });
      expect(taken.isError).toBe(true);
      expect(textOf(taken)).toBe("session_rename: That title is already in use; choose another title.");
    },
    TIMEOUT,
  );

  it(
    "refuses requests whose Host or Origin is not this server's (DNS rebinding)",
    async () => {
      const server = await serve();
      const port = new URL(server.url).port;
      const evilHost = await rawPost(server.url, { host: `evil.example:${port}`, "x-api-key": ALICE });
      expect(evilHost.status).toBe(403);
      expect(JSON.parse(evilHost.body).error.message).toMatch(/Invalid Host: evil\.example/u);
      const evilOrigin = await rawPost(server.url, { origin: "http://evil.example", "x-api-key": ALICE });
      expect(evilOrigin.status).toBe(403);
      expect(JSON.parse(evilOrigin.body).error.message).toMatch(/Invalid Origin/u);
      expect((await rawPost(server.url, { host: `localhost:${port}`, origin: `http://localhost:${port}`, "x-api-key": ALICE })).status).toBe(200);
      // Names given with allowedHosts are accepted too.
      const proxied = await serve({ allowedHosts: ["mcp.internal"] });
      expect((await rawPost(proxied.url, { host: "mcp.internal", "x-api-key": ALICE })).status).toBe(200);
    },
    TIMEOUT,
  );

  it(
    "without keys it serves loopback clients without a key, and refuses to listen on a non-loopback address",
    async () => {
      const open = await serve({ keys: [] });
      const client = await connect(open.url, null);
      const all = (await client.callTool({ name: "sessions_list", arguments: {} })).structuredContent as { items: Array<{ id: string }> };
      expect(all.items).toHaveLength(4);
      const error = await startMcpHttp({ db: fixture.db, host: "0.0.0.0", port: 0, keys: [] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toMatch(/without API keys serves this machine only, but --host 0\.0\.0\.0 is not a loopback address/u);
      const shortKey = await startMcpHttp({ db: fixture.db, port: 0, keys: [{ key: "short" }] }).then(
        () => null,
        (e: unknown) => e,
      );
      expect((shortKey as Error).message).toMatch(/at least 16 characters/u);
    },
    TIMEOUT,
  );

  it(
    "the built bin: threadline mcp --http with api.keys from the config file, stopped by SIGTERM with exit 0",
    async () => {
      const config = join(fixture.dir, "mcp-config.yaml");
      await writeFile(config, stringify({ api: { keys: KEYS } }));
      const [node, bin] = builtCli();
      const env: NodeJS.ProcessEnv = { ...process.env, THREADLINE_HOME: fixture.dir };
      delete env["THREADLINE_DB"];
      delete env["THREADLINE_CONFIG"];
      const child = spawn(node!, [bin!, "mcp", "--http", "--port", "0", "--db", fixture.file, "--config", config], { env, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      try {
        const url = await waitFor(() => /listening on (http:\/\/\S+)/u.exec(stderr)?.[1], { what: "threadline mcp --http to listen", describe: () => stderr });
        expect(stderr).toMatch(/3 API key\(s\); read-only/u);
        expect(stderr).not.toContain(ALICE);
        const alice = await connect(url, ALICE);
        const list = (await alice.callTool({ name: "sessions_list", arguments: {} })).structuredContent as { items: Array<{ id: string }> };
        expect(ids(list.items)).toEqual([ALICE_DEPLOY, LONG].sort());
        expect((await rawPost(url, {})).status).toBe(401);
        await alice.close();
      } finally {
        child.kill("SIGTERM");
      }
      expect(await withDeadline(exited, { timeoutMs: 15_000, what: "threadline mcp --http to exit on SIGTERM" })).toBe(0);
    },
    TIMEOUT,
  );
});
