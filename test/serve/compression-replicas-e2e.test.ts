/**
 * Automatic compression with two real `threadline serve` replicas on one PostgreSQL database
 * (issue 28): messages to one session alternate between the replicas, both check the session
 * after their turns, and the `compress:<key>` lease lets one summary run at a time. The
 * lineage stays a line (no session gets two continuations) and every message is answered and
 * kept in the chain.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openSessionDB } from "../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { fakeTextReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";
import { contentText } from "./model-dialogue.js";

const KEY_HEADER = "compressed-conversation";
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

async function startReplica(name: string, db: string, fakeUrl: string): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), `tl-crep-${name}-`));
  writeFileSync(
    join(home, "config.yaml"),
    `gateway:\n  replicaId: ${name}\n  leases: "on"\n  leaseTtlSeconds: 2\n  drainTimeoutSeconds: 1\n  logLevel: warn\ntitles:\n  enabled: false\ncompression:\n  hardMessageLimit: 10\n  protectFirstN: 1\n  protectLastN: 2\n`,
  );
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, "serve", "--port", String(port), "--db", db], {
    env: { ...process.env, THREADLINE_HOME: home, OPENAI_BASE_URL: fakeUrl, OPENAI_API_KEY: "k", THREADLINE_MODEL: "fake-model" },
    stdio: ["ignore", "ignore", "pipe"],
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
  return url;
}

async function ask(url: string, text: string): Promise<string | null> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-threadline-session-key": KEY_HEADER },
    body: JSON.stringify({ messages: [{ role: "user", content: text }] }),
  });
  const body = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
  return body.choices?.[0]?.message.content ?? null;
}

describe("automatic compression with two replicas on PostgreSQL", () => {
  const schema = `tl_crep_${randomBytes(5).toString("hex")}`;
  const db = `${TEST_PG_URL}?schema=${schema}`;
  let fake: FakeOpenAiServer;
  let summaries = 0;

  beforeAll(async () => {
    await requirePostgres();
    fake = await startFakeOpenAiServer({
      title: null,
      script: (request) => {
        const users = (request.body?.messages ?? []).filter((m) => m.role === "user");
        const last = contentText(users.at(-1)?.content);
        if (!last.startsWith("Summarise our conversation so far")) return null;
        summaries += 1;
        const facts = [...new Set(last.match(/\b[A-Z]+-\d+\b/gu) ?? [])];
        // Slow enough for the other replica's check to come while it runs.
        return { ...fakeTextReply(`Facts: ${facts.join(", ") || "none"}`), delayMs: 300 };
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

  it("each summary ends in exactly one continuation (the lease: no replica summarises a session another one is summarising); a linear lineage; every message answered and kept", async () => {
    const a = await startReplica("a", db, fake.url);
    const b = await startReplica("b", db, fake.url);
    const said: string[] = [];
    for (let i = 0; i < 16; i++) {
      const text = `note ${i} CODE-${i}`;
      said.push(text);
      expect(await ask(i % 2 === 0 ? a : b, text)).toBe(`Reply to: ${text}`);
    }
    const store = await openSessionDB(db);
    try {
      const chain = async () => {
        const all = (await store.listSessions({ includeChildren: true, limit: 100 })).items;
        const sessions = await Promise.all(all.map((s) => store.getSession(s.id)));
        return sessions.filter((s) => s?.sessionKey?.includes(KEY_HEADER)).map((s) => s!);
      };
      // Every summary asked for ends in exactly one continuation (none is made twice, none wasted).
      await waitFor(async () => summaries >= 1 && (await chain()).filter((s) => s.endedAt !== null).length === summaries, {
        what: "each summary to end in its continuation",
      });
      const ours = await chain();
      const childrenOf = new Map<string, number>();
      for (const s of ours) if (s.parentSessionId !== null) childrenOf.set(s.parentSessionId, (childrenOf.get(s.parentSessionId) ?? 0) + 1);
      expect([...childrenOf.values()].every((n) => n === 1)).toBe(true);
      expect(ours.filter((s) => s.endedAt === null)).toHaveLength(1);
      expect(ours.filter((s) => s.endedAt !== null).every((s) => s.endReason === "compression")).toBe(true);
      // Every message said is in the chain: verbatim, or its fact in a summary.
      const texts = (await Promise.all(ours.map((s) => store.getMessages(s.id)))).flat().map((m) => String(m.content));
      for (const text of said)
        expect(
          texts.some((t) => t === text || t.includes(text.split(" ")[2]!)),
          text,
        ).toBe(true);
    } finally {
      await store.close();
    }
  }, 120_000);
});
