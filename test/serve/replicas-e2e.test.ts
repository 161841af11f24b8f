/**
 * Two real `threadline serve` processes on one PostgreSQL database, interleaved messages
 * to one session, one replica killed mid-turn: never two turns of the session at once,
 * every acknowledged message answered, in order.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";

/** The session key of the shared conversation. */
const KEY = "agent:main:api-server:dm:shared-conversation";
const BIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const children: ChildProcess[] = [];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startReplica(name: string, db: string, fakeUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const home = mkdtempSync(join(tmpdir(), `tl-rep-${name}-`));
  writeFileSync(
    join(home, "config.yaml"),
    `gateway:\n  replicaId: ${name}\n  leases: "on"\n  leaseTtlSeconds: 2\n  drainTimeoutSeconds: 1\n  logLevel: ${process.env["REPLICA_LOG"] ?? "warn"}\ntitles:\n  enabled: false\n`,
  );
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, "serve", "--port", String(port), "--db", db], {
    env: { ...process.env, THREADLINE_HOME: home, OPENAI_BASE_URL: fakeUrl, OPENAI_API_KEY: "k", THREADLINE_MODEL: `model-${name}` },
    stdio: ["ignore", process.env["REPLICA_LOG"] ? "inherit" : "ignore", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  const url = `http://127.0.0.1:${port}`;
  const state = await waitFor(
    async () => {
      if (child.exitCode !== null) return "exited";
      return (await fetch(`${url}/healthz`)).ok && "up";
    },
    { what: `replica ${name} to answer GET /healthz`, intervalMs: 100, describe: () => stderr },
  );
  if (state === "exited") throw new Error(`replica ${name} did not start: ${stderr}`);
  return { child, url };
}

/** The user messages of a session key the gateways have taken: stored in the transcript or waiting in the queue. */
async function taken(store: SessionDB, key: string): Promise<string[]> {
  const texts = new Set<string>();
  const [session] = (await store.listSessions({ sessionKey: key })).items;
  if (session !== undefined) for (const m of await store.getMessages(session.id)) if (m.role === "user") texts.add(String(m.content));
  for (const item of await store.listQueue(key)) for (const payload of item.payloads) texts.add(String((payload as { text?: unknown }).text));
  return [...texts];
}

function ask(url: string, text: string, session = "shared-conversation"): Promise<{ status: number; content: string | null }> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-threadline-session-key": session },
    body: JSON.stringify({ messages: [{ role: "user", content: text }] }),
  }).then(
    async (response) => {
      const body = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
      return { status: response.status, content: body.choices?.[0]?.message.content ?? null };
    },
    () => ({ status: 0, content: null }),
  );
}

describe("two gateway replicas on one PostgreSQL database", () => {
  const schema = `tl_rep_${randomBytes(5).toString("hex")}`;
  const db = `${TEST_PG_URL}?schema=${schema}`;
  let fake: FakeOpenAiServer;
  let inFlight = 0;
  let maxInFlight = 0;
  const inFlightBy = new Map<string, number>();

  beforeAll(async () => {
    await requirePostgres();
    fake = await startFakeOpenAiServer({
      title: null,
      script: async (request) => {
        if (request.kind !== "chat") return null;
        const model = String(request.body?.model);
        inFlight += 1;
        inFlightBy.set(model, (inFlightBy.get(model) ?? 0) + 1);
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 250));
        inFlight -= 1;
        inFlightBy.set(model, (inFlightBy.get(model) ?? 1) - 1);
        const messages = request.body?.messages ?? [];
        const lastUser = [...messages].reverse().find((m) => m.role === "user");
        return {
          json: {
            choices: [{ message: { role: "assistant", content: `${model} answers ${String(lastUser?.content)}` }, finish_reason: "stop" }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          },
        };
      },
    });
  });

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  });

  afterAll(async () => {
    await fake?.close();
    await dropSchema(schema);
  });

  it("never runs two turns of one session at once; a replica killed mid-turn hands its session over", async () => {
    const a = await startReplica("a", db, fake.url);
    const b = await startReplica("b", db, fake.url);
    // Warm both up (first requests open connection pools), then interleave six messages to one
    // session between the replicas without waiting for answers: each is sent once the previous
    // one is taken (stored, or in the session's queue), so their order is the send order.
    await Promise.all([ask(a.url, "warm up", "warmup-a"), ask(b.url, "warm up", "warmup-b")]);
    maxInFlight = 0;
    const pending: Array<Promise<{ status: number; content: string | null }>> = [];
    const watcher = await openSessionDB(db);
    try {
      for (let i = 1; i <= 6; i++) {
        pending.push(ask(i % 2 === 1 ? a.url : b.url, `m${i}`));
        await waitFor(async () => (await taken(watcher, KEY)).includes(`m${i}`), { what: `m${i} to be taken by a replica`, intervalMs: 20 });
      }
    } finally {
      await watcher.close();
    }
    const answers = await Promise.all(pending);
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const [i, answer] of answers.entries()) expect(answer.content).toMatch(new RegExp(`answers m${i + 1}$`));
    expect(maxInFlight).toBe(1);

    // Kill whichever replica runs the next turn, mid-turn; the other must take the session over
    // once the lease expires (resuming the cut-off turn) and answer what comes next.
    const killed = ask(a.url, "m7");
    await waitFor(() => inFlight > 0, { what: "the turn of m7 at the model", timeoutMs: 5_000, intervalMs: 10 });
    expect(inFlight).toBe(1);
    const runningModel = (inFlightBy.get("model-a") ?? 0) > 0 ? "model-a" : "model-b";
    const [victim, survivor, survivorModel] = runningModel === "model-a" ? [a, b, "model-b"] : [b, a, "model-a"];
    victim.child.kill("SIGKILL");
    void killed; // a's client either sees the connection drop or (b killed) gets the resumed reply
    const after = await ask(survivor.url, "m8");
    expect(after.status).toBe(200);
    expect(after.content).toBe(`${survivorModel} answers m8`);
    expect(maxInFlight).toBe(1);

    // Every acknowledged message is in the transcript once, in order, and answered.
    survivor.child.kill("SIGTERM");
    await new Promise((r) => survivor.child.once("exit", r));
    const store = await openSessionDB(db);
    try {
      const [session] = (await store.listSessions({ sessionKey: KEY })).items;
      const messages = await store.getMessages(session!.id);
      expect(messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"]);
      // m7 (cut off with replica a) was resumed by b before m8 ran.
      const m7 = messages.findIndex((m) => m.content === "m7");
      expect(messages[m7 + 1]).toMatchObject({ role: "assistant" });
      expect(String(messages[m7 + 1]!.content)).toBe(`${survivorModel} answers m7`);
    } finally {
      await store.close();
    }
  }, 60_000);
});
