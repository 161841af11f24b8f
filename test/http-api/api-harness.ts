/**
 * Helpers of the HTTP API tests: a real server on 127.0.0.1:<free port> (`buildServer` +
 * `listen`), requests with `fetch`, and a seeded database with two tenants (alice and
 * bob), a session nobody owns, and execution runs of both tenants.
 *
 * Keys: {@link ADMIN} (sees all), {@link ALICE} (userId alice), {@link BOB} (userId bob).
 *
 * @module
 */
import type { FastifyInstance } from "fastify";
import type { SessionDB } from "../../src/index.js";
import { Executions } from "../../src/executions/index.js";
import { buildServer, type BuildServerOptions } from "../../src/http-api/index.js";
import { DeadlineError, withDeadline } from "../support/wait-for.js";

export const ADMIN = "admin-key-0123456789abcdef";
export const ALICE = "alice-key-0123456789abcdef";
export const BOB = "bob-key-0123456789abcdefgh";

/** The keys of the test server. */
export const KEYS = [
  { key: ADMIN, name: "ops" },
  { key: ALICE, userId: "alice", name: "alice-app" },
  { key: BOB, userId: "bob" },
];

/** A running API server. */
export interface ApiServer {
  url: string;
  app: FastifyInstance;
  close(): Promise<void>;
}

const servers = new Set<ApiServer>();

/** Starts the API on a free loopback port (closed by {@link closeServers}). */
export async function startApi(db: SessionDB, options: Partial<BuildServerOptions> = {}): Promise<ApiServer> {
  const app = await buildServer({ db, keys: KEYS, listenHost: "127.0.0.1", ...options });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  const server: ApiServer = {
    url: `http://127.0.0.1:${address.port}`,
    app,
    close: async () => {
      servers.delete(server);
      // close() waits for open connections; a fetch client may hold a fresh one that never sends a request:
      // those are cut if close() has not finished within 500 ms.
      const closing = app.close();
      try {
        await withDeadline(closing, { timeoutMs: 500, what: "the API server to close" });
      } catch (error) {
        if (!(error instanceof DeadlineError)) throw error;
        app.server.closeAllConnections();
        await closing;
      }
    },
  };
  servers.add(server);
  return server;
}

/** Closes every server still open (call in `afterEach`, before the databases close). */
export async function closeServers(): Promise<void> {
  await Promise.all([...servers].map((s) => s.close()));
}

/** A response: status, headers, the raw text and the parsed JSON body (`undefined` when not JSON). */
export interface ApiReply<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

/** Options of {@link call}. */
export interface CallOptions {
  /** Sent as `X-API-Key` (default {@link ADMIN}; `null`: no key). */
  key?: string | null;
  /** Sent as `Authorization: Bearer <token>` instead of `X-API-Key`. */
  bearer?: string;
  /** A JSON body (a string is sent as is, with `content-type: application/json`). */
  body?: unknown;
  headers?: Record<string, string>;
}

/** One request over real HTTP. */
export async function call<T = any>(server: ApiServer | string, method: string, path: string, options: CallOptions = {}): Promise<ApiReply<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const key = options.key === undefined ? ADMIN : options.key;
  if (options.bearer !== undefined) headers["authorization"] = `Bearer ${options.bearer}`;
  else if (key !== null) headers["x-api-key"] = key;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const base = typeof server === "string" ? server : server.url;
  const response = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }), signal: AbortSignal.timeout(20_000) });
  const text = await response.text();
  let parsed: unknown;
  if ((response.headers.get("content-type") ?? "").startsWith("application/json")) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, text, body: parsed as T };
}

/** Asserts nothing like a stack trace or a driver detail is in a reply. */
export function hasNoStack(text: string): boolean {
  return !/\bat .+\.(ts|js):\d+|node_modules|Error: /u.test(text);
}

/** What {@link seed} created. */
export interface Seeded {
  /** alice's sessions: a1 (cli, title "Alice deploy"), a2 (telegram). */
  a1: string;
  a2: string;
  /** bob's session (cli, title "Bob deploy"). */
  b1: string;
  /** A session without owner (cli). */
  n1: string;
  /** Runs: alice's agent run, bob's agent run, alice's workflow with two steps. */
  aliceRun: string;
  bobRun: string;
  aliceWorkflow: string;
  executions: Executions;
}

/** Creates the tenants' sessions and runs. */
export async function seed(db: SessionDB): Promise<Seeded> {
  const t0 = 1_700_000_000;
  const a1 = (await db.createSession({ id: "sess-alice-1", source: "cli", userId: "alice", title: "Alice deploy", model: "m1", startedAt: t0 })).id;
  await db.appendTurn(a1, [
    { role: "user", content: "How do I deploy the rocket?", timestamp: t0 + 1 },
    { role: "assistant", content: "Run the deploy script for the rocket.", timestamp: t0 + 2 },
    { role: "user", content: "And roll back?", timestamp: t0 + 3 },
    { role: "assistant", content: "Use the rollback command.", timestamp: t0 + 4 },
  ]);
  const a2 = (await db.createSession({ id: "sess-alice-2", source: "telegram", userId: "alice", startedAt: t0 + 10 })).id;
  await db.appendMessage(a2, { role: "user", content: "rocket fuel prices", timestamp: t0 + 11 });
  const b1 = (await db.createSession({ id: "sess-bob-1", source: "cli", userId: "bob", title: "Bob deploy", startedAt: t0 + 20 })).id;
  await db.appendTurn(b1, [
    { role: "user", content: "deploy the rocket secretly", timestamp: t0 + 21 },
    { role: "assistant", content: "bob's rocket is deployed", timestamp: t0 + 22 },
  ]);
  const n1 = (await db.createSession({ id: "sess-nobody-1", source: "cli", startedAt: t0 + 30 })).id;
  await db.appendMessage(n1, { role: "user", content: "a rocket without owner", timestamp: t0 + 31 });

  const executions = new Executions(db);
  const aliceRun = (
    await executions.saveAgentResult(
      {
        finalResponse: "4",
        messages: [
          { role: "user", content: "2+2?" },
          { role: "assistant", content: "4" },
        ],
      },
      { sessionId: "calc-alice", name: "calculator", userId: "alice" },
    )
  ).id;
  const bobRun = (
    await executions.saveAgentResult(
      {
        finalResponse: "6",
        messages: [
          { role: "user", content: "3+3?" },
          { role: "assistant", content: "6" },
        ],
      },
      { sessionId: "calc-bob", name: "calculator", userId: "bob" },
    )
  ).id;
  const aliceWorkflow = (
    await executions.saveWorkflowResult(
      {
        finalResponse: "report done",
        steps: [
          {
            agentName: "researcher",
            messages: [
              { role: "user", content: "find" },
              { role: "assistant", content: "found" },
            ],
          },
          {
            agentName: "writer",
            messages: [
              { role: "user", content: "write" },
              { role: "assistant", content: "written" },
            ],
          },
        ],
      },
      { sessionId: "report", name: "daily-report", userId: "alice" },
    )
  ).id;
  return { a1, a2, b1, n1, aliceRun, bobRun, aliceWorkflow, executions };
}

/** Parses a JSON Lines body. */
export function jsonLines(text: string): unknown[] {
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as unknown);
}
