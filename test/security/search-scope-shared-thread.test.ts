/**
 * Threat (issue 27, point 3): in a shared thread every speaker's `session_search` searched as
 * the thread's creator, so a second speaker could read the creator's other sessions of that
 * chat. The tool now searches as the person speaking: the second speaker finds their own
 * sessions, never the creator's.
 *
 * A real `threadline serve` child with the signed webhook adapter (threads are shared by
 * default) and the fake provider calling `session_search`, on SQLite and PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { openSessionDB, type SessionDB } from "../../src/index.js";
import { dropSchema, requirePostgres, TEST_PG_URL } from "../contract/postgres-server.js";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import {
  cleanupProcesses,
  databaseOf,
  makeHome,
  postWebhook,
  spawnGateway,
  startCallbackServer,
  type GatewayProcess,
  type CallbackServer,
  type WebhookMessage,
} from "../serve/gateway-process.js";

const TEST_TIMEOUT = 90_000;
const FAKE_KEY = "sk-fake-shared-thread";
const SECRET = "shared-thread-secret-0123456789";

const BACKENDS = (["sqlite", "postgres"] as const).filter((name) => {
  const selected = process.env["THREADLINE_STORES"]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return !selected || selected.length === 0 || selected.includes(name);
});

const fakes: FakeOpenAiServer[] = [];
const schemas: string[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
  for (const schema of schemas.splice(0)) await dropSchema(schema);
});

interface Setup {
  fake: FakeOpenAiServer;
  callback: CallbackServer;
  gateway: GatewayProcess;
  open: () => Promise<SessionDB>;
}

async function start(backend: "sqlite" | "postgres"): Promise<Setup> {
  const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"], title: null });
  fakes.push(fake);
  const callback = await startCallbackServer(SECRET);
  const config: Record<string, unknown> = { titles: { enabled: false }, adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } } };
  let schema: string | null = null;
  if (backend === "postgres") {
    await requirePostgres();
    schema = `tl_sec_${randomBytes(5).toString("hex")}`;
    schemas.push(schema);
    config["database"] = `${TEST_PG_URL}?schema=${schema}`;
  }
  const home = await makeHome(config);
  const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
  const open = (): Promise<SessionDB> => (schema === null ? openSessionDB(databaseOf(home)) : openSessionDB(TEST_PG_URL, { schema, poolSize: 2 }));
  return { fake, callback, gateway, open };
}

let counter = 0;
async function say(setup: Setup, message: Omit<WebhookMessage, "messageId">): Promise<string> {
  const messageId = `st${++counter}`;
  const ack = await postWebhook(setup.gateway.url, SECRET, { ...message, messageId });
  expect(ack.status).toBe(202);
  const reply = await setup.callback.replyTo(messageId);
  return String((reply.body as { sessionId?: string | null }).sessionId);
}

describe("security: session_search in a shared thread searches as the person speaking", () => {
  it.each(BACKENDS)(
    "%s: a second speaker in alice's thread finds their own earlier thread, never alice's",
    async (backend) => {
      const setup = await start(backend);
      const inRoom = { chatId: "room", chatType: "thread" as const };
      // Earlier threads of the same room: one alice started, one bob started.
      const alicesOld = await say(setup, { ...inRoom, threadId: "t-alice", userId: "alice", text: "alice: the payroll password is marigold-7731" });
      const bobsOld = await say(setup, { ...inRoom, threadId: "t-bob", userId: "bob", text: "bob: my marigold seeds arrive tuesday" });
      // Alice opens a new thread; bob speaks in it and his model searches.
      const shared = await say(setup, { ...inRoom, threadId: "t-shared", userId: "alice", text: "alice opens the shared thread" });
      setup.fake.enqueue(fakeToolCallReply([{ name: "session_search", arguments: JSON.stringify({ query: "marigold" }) }]), fakeTextReply("Searched."));
      const asked = await say(setup, { ...inRoom, threadId: "t-shared", userId: "bob", text: "what do we know about marigold?" });
      expect(await setup.gateway.stop()).toEqual({ code: 0, signal: null });
      expect(asked).toBe(shared);
      expect(new Set([alicesOld, bobsOld, shared]).size).toBe(3);

      const db = await setup.open();
      try {
        expect((await db.getSession(shared))?.userId).toBe("alice");
        const found = (await db.getMessages(shared))
          .filter((m) => m.role === "tool")
          .map((m) => String(m.content))
          .join("\n");
        expect(found).not.toMatch(/payroll password/u);
        expect(found).toMatch(/marigold seeds arrive tuesday/u);
      } finally {
        await db.close();
      }
      // What the provider received as the tool result is what was stored.
      const sent = setup.fake
        .chatRequests()
        .flatMap((r) => r.body?.messages ?? [])
        .filter((m) => m.role === "tool")
        .map((m) => String(m.content));
      expect(sent.join("\n")).not.toMatch(/payroll password/u);
    },
    TEST_TIMEOUT,
  );
});
