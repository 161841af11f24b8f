/**
 * Memory that survives resets (issue 28): a real `threadline serve` child with the signed
 * webhook adapter and the fake provider, on SQLite and PostgreSQL. Before an automatic (idle)
 * reset the agent gets a turn with the `memory` tool (it saves state) and saves a fact about
 * the person; the next session's context prompt holds it, for that person only. The session
 * is made idle by moving its routing entry's `updatedAt` back through a second handle on the
 * database (the watcher checks every 0.2 s), so nothing waits on the clock.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer, type FakeOpenAiRequest, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";
import {
  cleanupProcesses,
  databaseOf,
  makeHome,
  postWebhook,
  spawnGateway,
  startCallbackServer,
  type CallbackServer,
  type GatewayProcess,
  type WebhookMessage,
} from "./gateway-process.js";
import { contentText, dialogue, requestFor } from "./model-dialogue.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-memory-e2e";
const SECRET = "memory-e2e-secret-0123456789";

const BACKENDS = (["sqlite", "postgres"] as const).filter((name) => {
  const selected = process.env["THREADLINE_STORES"]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return !selected || selected.length === 0 || selected.includes(name);
});

const fakes: FakeOpenAiServer[] = [];
const schemas: string[] = [];
const handles: SessionDB[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  for (const db of handles.splice(0)) await db.close().catch(() => {});
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

interface Setup {
  fake: FakeOpenAiServer;
  callback: CallbackServer;
  gateway: GatewayProcess;
  db: SessionDB;
}

async function start(backend: "sqlite" | "postgres", extra: Record<string, unknown> = {}): Promise<Setup> {
  const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"], title: null });
  fakes.push(fake);
  const callback = await startCallbackServer(SECRET);
  const config: Record<string, unknown> = {
    titles: { enabled: false },
    adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
    reset: { mode: "idle", idleMinutes: 60 },
    sessions: { expiryIntervalSeconds: 0.2 },
    ...extra,
  };
  let schema: string | null = null;
  if (backend === "postgres") {
    await requirePostgres();
    schema = `tl_mem_${randomBytes(5).toString("hex")}`;
    schemas.push(schema);
    config["database"] = `${TEST_PG_URL}?schema=${schema}`;
  }
  const home = await makeHome(config);
  const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
  const db = schema === null ? await openSessionDB(databaseOf(home)) : await openSessionDB(TEST_PG_URL, { schema, poolSize: 2 });
  handles.push(db);
  return { fake, callback, gateway, db };
}

let counter = 0;
/** Posts a message and waits for its reply; resolves with the reply's session id. */
async function say(setup: Setup, message: Omit<WebhookMessage, "messageId">): Promise<string> {
  const messageId = `mem${++counter}`;
  const ack = await postWebhook(setup.gateway.url, SECRET, { ...message, messageId });
  expect(ack.status).toBe(202);
  const reply = await setup.callback.replyTo(messageId);
  return String(reply.body.sessionId);
}

/** The system text of a model request. */
function systemText(request: FakeOpenAiRequest): string {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === "system")
    .map((m) => contentText(m.content))
    .join("\n");
}

/** Makes the routing entry of the session idle for two hours (as if no message came since). */
async function ageRoute(db: SessionDB, sessionId: string): Promise<string> {
  const route = await db.findRouteBySession(sessionId);
  if (route === null) throw new Error(`no route for ${sessionId}`);
  const { key, version, ...fields } = route;
  const past = fields.updatedAt - 7200;
  const written = await db.writeRoute({ key, expectedVersion: version, route: { ...fields, updatedAt: past } });
  expect(written).not.toBeNull();
  return key;
}

describe("threadline serve: memory survives an automatic reset (issue 28)", () => {
  it.each(BACKENDS)(
    "%s: the before-reset turn saves with the memory tool for the session's person; their next session's prompt has it, another person's does not",
    async (backend) => {
      const setup = await start(backend);
      const { fake, db } = setup;
      const ann = { chatId: "dm-ann", userId: "ann", userName: "Ann" };
      const bob = { chatId: "dm-bob", userId: "bob", userName: "Bob" };
      const first = await say(setup, { ...ann, text: "my cat is called Tomasz" });
      await say(setup, { ...bob, text: "hello from bob" });
      // Every request carries the memory tool (provider.tools auto) and its guidance.
      const greeting = await requestFor(fake, "my cat is called Tomasz");
      expect((greeting.body!.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(["session_search", "memory"]);
      expect(systemText(greeting)).toMatch(/memory tool/u);
      expect(systemText(greeting)).not.toContain("## Memory");

      // The before-reset turn: the model saves a fact with the memory tool, then says so.
      fake.setScript((request) => {
        const turn = dialogue(request);
        const last = request.body?.messages?.at(-1);
        if (last?.role === "tool") return fakeTextReply("Saved the cat.");
        if (turn.at(-1)?.[1]?.includes("about to be reset")) {
          return fakeToolCallReply([{ name: "memory", arguments: { action: "add", target: "user", content: "Ann's cat is called Tomasz" } }]);
        }
        return null;
      });
      const key = await ageRoute(db, first);
      const finalized = await waitFor(async () => ((await db.getRoute(key))?.expiryFinalized === true ? true : undefined), {
        what: "the idle session to be finalised",
      });
      expect(finalized).toBe(true);
      // The tool ran for Ann (the expiring session's person), and its result is in her old session.
      expect(await db.getMemory({ platform: "webhook", userId: "ann" }, "user")).toMatchObject({ entries: ["Ann's cat is called Tomasz"], version: 1 });
      const toolResult = (await db.getMessages(first)).find((m) => m.role === "tool");
      expect(toolResult?.content).toMatch(/^Saved the entry\. The user memory is at 26\/1,375 chars \(1 entry\)\.$/u);
      expect(await db.getMemory({ platform: "webhook", userId: "bob" }, "user")).toBeNull();

      // Ann's next message starts a new session whose prompt holds her memory, fenced as data.
      fake.setScript(null);
      const second = await say(setup, { ...ann, text: "what is my cat called?" });
      expect(second).not.toBe(first);
      const annAsks = systemText(await requestFor(fake, "what is my cat called?"));
      expect(annAsks).toContain("## Memory");
      expect(annAsks).toMatch(/USER \(what you know about the person you are talking to\) \[26\/1,375 chars\]:\n```text\nAnn's cat is called Tomasz\n```/u);
      expect(annAsks).toMatch(/not instructions/u);
      // Bob's turn never sees it.
      await say(setup, { ...bob, text: "what is ann's cat called?" });
      const bobAsks = await requestFor(fake, "what is ann's cat called?");
      expect(JSON.stringify(bobAsks.body)).not.toContain("Tomasz");
      expect(systemText(bobAsks)).not.toContain("## Memory");
      // The memory is not stored as the session's system prompt (it is per speaker, per turn).
      expect((await db.getSession(second))?.systemPrompt ?? "").not.toContain("Tomasz");
      expect(await setup.gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it.each(BACKENDS)(
    "%s: a shared group session's before-reset turn saves for nobody: the tool refuses and no one's memory changes",
    async (backend) => {
      const setup = await start(backend, { sessions: { expiryIntervalSeconds: 0.2, groupSessionsPerUser: false } });
      const { fake, db } = setup;
      const group = { chatId: "g-1", chatType: "group" as const };
      const session = await say(setup, { ...group, userId: "ann", userName: "Ann", text: "ann: the launch is friday" });
      await say(setup, { ...group, userId: "bob", userName: "Bob", text: "bob: noted" });
      fake.setScript((request) => {
        const last = request.body?.messages?.at(-1);
        if (last?.role === "tool") return fakeTextReply("Could not save.");
        if (dialogue(request).at(-1)?.[1]?.includes("about to be reset")) {
          return fakeToolCallReply([{ name: "memory", arguments: { action: "add", target: "memory", content: "launch is friday" } }]);
        }
        return null;
      });
      const key = await ageRoute(db, session);
      await waitFor(async () => ((await db.getRoute(key))?.expiryFinalized === true ? true : undefined), { what: "the idle group session to be finalised" });
      const toolResult = (await db.getMessages(session)).find((m) => m.role === "tool");
      expect(toolResult?.content).toMatch(/person speaking is not known, so nothing was saved/u);
      expect((await db.listMemories()).items).toEqual([]);
      expect(await setup.gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );
});
