/**
 * `threadline mcp` over stdio, driven by the MCP SDK's real `Client` through its
 * `StdioClientTransport`, which spawns the BUILT bin (`dist/cli/main.js mcp --db <file>`;
 * `npm run build` first) on a real SQLite file: the tools and their results (the search equal
 * to the agents' built-in session_search tool), paging of session_show, bad arguments as tool
 * errors, writes only with --allow-writes, the session resources, stored text delimited as
 * data, and a clean exit when the client goes away.
 */
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { formatSessionSearch, sessionSearch, sessionSearchTool } from "../../src/tools/index.js";
import { builtCli } from "../cli/cli-run.js";
import { withDeadline } from "../support/wait-for.js";
import { ALICE_DEPLOY, BOB_SECRET, dataBlockOf, INJECTION, LONG, LONG_MESSAGES, ORPHAN, seededDatabase, textOf, type Fixture } from "./mcp-fixture.js";

const TIMEOUT = 30_000;
let fixture: Fixture;
const clients: Client[] = [];

beforeAll(async () => {
  fixture = await seededDatabase();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await fixture.cleanup();
});

/** The environment of a child: a fresh home, none of the parent's Threadline settings. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(THREADLINE_|OPENAI_)/u.test(k)) env[k] = v;
  env["THREADLINE_HOME"] = fixture.dir;
  return env;
}

/** A connected client of `threadline mcp --db <fixture> …extra`. */
async function connect(extra: string[] = []): Promise<Client> {
  const [node, bin] = builtCli();
  const transport = new StdioClientTransport({ command: node!, args: [bin!, "mcp", "--db", fixture.file, ...extra], env: childEnv(), stderr: "pipe" });
  const client = new Client({ name: "threadline-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

describe("threadline mcp over stdio", () => {
  it(
    "lists the read tools only, and the session resources; writes are absent without --allow-writes",
    async () => {
      const client = await connect();
      expect(client.getServerVersion()?.name).toBe("threadline");
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(["session_search", "session_show", "sessions_list"]);
      const refused = await client.callTool({ name: "session_delete", arguments: { id: ALICE_DEPLOY } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/session_delete not found/u);
      expect(await fixture.db.getSession(ALICE_DEPLOY)).not.toBeNull();

      const resources = (await client.listResources()).resources;
      expect(resources.map((r) => r.uri)).toEqual([ORPHAN, BOB_SECRET, LONG, ALICE_DEPLOY].map((id) => `threadline://sessions/${id}`));
      expect(resources.find((r) => r.name === ALICE_DEPLOY)?.title).toBe("Deploy plan");
      const templates = (await client.listResourceTemplates()).resourceTemplates;
      expect(templates.map((t) => t.uriTemplate)).toEqual(["threadline://sessions/{id}"]);
      const read = await client.readResource({ uri: `threadline://sessions/${LONG}` });
      const body = JSON.parse((read.contents[0] as { text: string }).text) as {
        session: { id: string };
        messages: Array<{ text: string }>;
        earlierMessages: number;
      };
      expect(body.session.id).toBe(LONG);
      expect(body.messages).toHaveLength(Math.min(LONG_MESSAGES, 50));
      expect(body.messages.at(-1)?.text).toBe(`long message ${LONG_MESSAGES}`);
      await expect(client.readResource({ uri: "threadline://sessions/no-such-session" })).rejects.toThrow(/No session with the id 'no-such-session'/u);
    },
    TIMEOUT,
  );

  it(
    "session_search returns what the built-in session_search tool returns for the same query, with stored text delimited as data",
    async () => {
      const client = await connect();
      for (const query of ["kraken", "long message", "deploy*"]) {
        const result = await client.callTool({ name: "session_search", arguments: { query, limit: 5 } });
        expect(result.isError ?? false).toBe(false);
        const expected = await sessionSearch(fixture.db, query, { limit: 5 });
        expect(result.structuredContent).toEqual(JSON.parse(JSON.stringify(expected)));
        expect(dataBlockOf(textOf(result))).toBe(formatSessionSearch(expected));
        // The agents' tool itself, asked from a session that has no messages (scope all: every session).
        const asking = await fixture.db.createSession({ source: "test" });
        const builtIn = await sessionSearchTool(fixture.db, { scope: "all" }).execute(
          { query, limit: 5 },
          { sessionId: asking.id, signal: AbortSignal.timeout(10_000) },
        );
        await fixture.db.deleteSession(asking.id);
        expect(dataBlockOf(textOf(result))).toBe(builtIn);
      }
      // The injected marker is inside the data block, which ends only at the nonce's own marker.
      const kraken = textOf(await client.callTool({ name: "session_search", arguments: { query: "kraken" } }));
      expect(dataBlockOf(kraken)).toContain(INJECTION);
      // A blank query browses recent sessions, as the built-in tool does.
      const browse = await client.callTool({ name: "session_search", arguments: {} });
      expect((browse.structuredContent as { mode: string }).mode).toBe("browse");
    },
    TIMEOUT,
  );

  it(
    "session_show pages through a transcript with cursor and limit, and refuses bad arguments with clear tool errors",
    async () => {
      const client = await connect();
      const seen: number[] = [];
      let cursor: string | null = null;
      const sizes: number[] = [];
      do {
        const args: Record<string, unknown> = { id: LONG, limit: 20, ...(cursor === null ? {} : { cursor }) };
        const page = await client.callTool({ name: "session_show", arguments: args });
        expect(page.isError ?? false).toBe(false);
        const data = page.structuredContent as {
          session: { id: string; messageCount: number };
          messages: Array<{ id: number; text: string }>;
          nextCursor: string | null;
        };
        expect(data.session).toMatchObject({ id: LONG, messageCount: LONG_MESSAGES });
        sizes.push(data.messages.length);
        seen.push(...data.messages.map((m) => m.id));
        for (const m of data.messages) expect(dataBlockOf(textOf(page))).toContain(m.text);
        cursor = data.nextCursor;
        if (cursor !== null) expect(textOf(page)).toContain(`nextCursor: ${cursor}`);
      } while (cursor !== null);
      expect(sizes).toEqual([20, 20, 5]);
      expect(seen).toEqual((await fixture.db.getMessages(LONG)).map((m) => m.id));

      const defaultPage = await client.callTool({ name: "session_show", arguments: { id: LONG } });
      expect((defaultPage.structuredContent as { messages: unknown[] }).messages).toHaveLength(20);

      const first = (await client.callTool({ name: "session_show", arguments: { id: LONG, limit: 2 } })).structuredContent as { nextCursor: string };
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ id: LONG, limit: 0 }, /limit must be at least 1/u],
        [{ id: LONG, limit: 101 }, /limit must be at most 100/u],
        [{ id: LONG, limit: 2.5 }, /limit must be a whole number/u],
        [{ id: LONG, cursor: "not a cursor!" }, /cursor is not valid \(not a cursor string\).*leave cursor out/u],
        [{ id: ALICE_DEPLOY, cursor: first.nextCursor }, /cursor is not valid \(it belongs to another session\)/u],
        [{ id: "" }, /id must not be empty/u],
        [{}, /id/u],
        [{ id: LONG, page: 2 }, /unknown argument\(s\) 'page'; this tool takes: id, cursor, limit/u],
        [{ id: "no-such-session" }, /No session with the id 'no-such-session'.*sessions_list or session_search/u],
      ];
      for (const [args, message] of cases) {
        const result = await client.callTool({ name: "session_show", arguments: args });
        expect(result.isError, JSON.stringify(args)).toBe(true);
        expect(textOf(result), JSON.stringify(args)).toMatch(message);
      }
      const badList = await client.callTool({ name: "sessions_list", arguments: { cursor: "bogus" } });
      expect(badList.isError).toBe(true);
      expect(textOf(badList)).toMatch(/sessions_list: The cursor is not valid/u);
      // The server is still there after every refusal.
      expect((await client.callTool({ name: "sessions_list", arguments: { limit: 2 } })).isError ?? false).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "sessions_list pages with nextCursor and delimits titles and previews as data",
    async () => {
      const client = await connect();
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await client.callTool({ name: "sessions_list", arguments: { limit: 3, ...(cursor === null ? {} : { cursor }) } });
        const data = page.structuredContent as { items: Array<{ id: string; title: string | null }>; nextCursor: string | null };
        ids.push(...data.items.map((s) => s.id));
        for (const s of data.items) expect(dataBlockOf(textOf(page))).toContain(s.id);
        cursor = data.nextCursor;
      } while (cursor !== null);
      expect(ids).toEqual([ORPHAN, BOB_SECRET, LONG, ALICE_DEPLOY]);
    },
    TIMEOUT,
  );

  it(
    "with --allow-writes it offers session_rename and session_delete, which change the database",
    async () => {
      const victim = await fixture.db.createSession({ id: "to-delete", source: "cli" });
      const client = await connect(["--allow-writes"]);
      const tools = (await client.listTools()).tools;
      expect(tools.map((t) => t.name).sort()).toEqual(["session_delete", "session_rename", "session_search", "session_show", "sessions_list"]);
      expect(tools.find((t) => t.name === "session_delete")?.annotations?.destructiveHint).toBe(true);

      const renamed = await client.callTool({ name: "session_rename", arguments: { id: LONG, title: "  Long   chat " } });
      expect(renamed.structuredContent).toEqual({ id: LONG, title: "Long chat" });
      expect(await fixture.db.getTitle(LONG)).toBe("Long chat");
      const taken = await client.callTool({ name: "session_rename", arguments: { id: LONG, title: "Deploy plan" } });
      expect(taken.isError).toBe(true);
      expect(textOf(taken)).toMatch(/session_rename: .*title/iu);
      expect(await fixture.db.getTitle(LONG)).toBe("Long chat");
      await client.callTool({ name: "session_rename", arguments: { id: LONG, title: "" } });
      expect(await fixture.db.getTitle(LONG)).toBeNull();

      const deleted = await client.callTool({ name: "session_delete", arguments: { id: victim.id } });
      expect(deleted.structuredContent).toEqual({ id: victim.id, deleted: true });
      expect(await fixture.db.getSession(victim.id)).toBeNull();
      const again = await client.callTool({ name: "session_delete", arguments: { id: victim.id } });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toMatch(/No session with the id 'to-delete'/u);
    },
    TIMEOUT,
  );

  it(
    "exits 0 when the client closes stdin, with nothing but protocol on stdout",
    async () => {
      const [node, bin] = builtCli();
      const child = spawn(node!, [bin!, "mcp", "--db", fixture.file], { env: childEnv(), stdio: ["pipe", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.stdin.end(
        `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })}\n`,
      );
      expect(await withDeadline(exited, { timeoutMs: 15_000, what: "threadline mcp to exit after stdin closed" })).toBe(0);
      const lines = stdout.split("\n").filter((l) => l !== "");
      expect(lines.length).toBeGreaterThanOrEqual(1);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
      expect(stderr).toContain("serving");
    },
    TIMEOUT,
  );

  it(
    "refuses a missing database and HTTP-only options without --http, with exit codes",
    async () => {
      const [node, bin] = builtCli();
      const run = (args: string[]) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(node!, [bin!, "mcp", ...args], { env: childEnv(), stdio: ["ignore", "pipe", "pipe"] });
          let stderr = "";
          child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
          child.once("exit", (code) => resolve({ code, stderr }));
        });
      const missing = await run(["--db", `${fixture.dir}/nope.db`]);
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(/No database at .*nope\.db/u);
      const portOnly = await run(["--db", fixture.file, "--port", "9999"]);
      expect(portOnly.code).toBe(2);
      expect(portOnly.stderr).toMatch(/--port, --host and --allowed-host apply to --http only/u);
    },
    TIMEOUT,
  );
});
