/**
 * The `session_search` tool through a real `threadline serve` process: a model that calls
 * the tool for one user must never receive another user's conversations (and so never
 * store them in the asking user's transcript). Users talk over the signed webhook adapter
 * (DMs and a group); the fake provider answers `session_search` calls on cue.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeTextReply, fakeToolCallReply, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import {
  cleanupProcesses,
  makeHome,
  postWebhook,
  spawnGateway,
  startCallbackServer,
  withDatabase,
  type CallbackServer,
  type GatewayProcess,
  type WebhookMessage,
} from "./gateway-process.js";

const TEST_TIMEOUT = 60_000;
const FAKE_KEY = "sk-fake-scope-key";
const SECRET = "scope-webhook-secret-0123456789";

const fakes: FakeOpenAiServer[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

interface Setup {
  fake: FakeOpenAiServer;
  callback: CallbackServer;
  gateway: GatewayProcess;
  home: string;
}

async function start(tools?: Record<string, unknown>): Promise<Setup> {
  const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"] });
  fakes.push(fake);
  const callback = await startCallbackServer(SECRET);
  const home = await makeHome({
    adapters: { webhook: { enabled: true, secret: SECRET, callbackUrl: callback.url } },
    ...(tools ? { tools } : {}),
  });
  const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
  return { fake, callback, gateway, home };
}

let counter = 0;
/** Sends one webhook message and waits for its reply. */
async function say(setup: Setup, message: Omit<WebhookMessage, "messageId">): Promise<string | null> {
  const messageId = `m${++counter}`;
  const ack = await postWebhook(setup.gateway.url, SECRET, { ...message, messageId });
  expect(ack.status).toBe(202);
  const reply = await setup.callback.replyTo(messageId);
  return (reply.body as { sessionId?: string | null }).sessionId ?? null;
}

/** The next model turn calls `session_search` for `query`, then answers. */
function nextTurnSearches(fake: FakeOpenAiServer, query: string): void {
  fake.enqueue(fakeToolCallReply([{ name: "session_search", arguments: JSON.stringify({ query }) }]), fakeTextReply("Searched."));
}

/** The `session_search` results stored in a session. */
function toolResults(home: string, sessionId: string): Promise<string[]> {
  return withDatabase(home, async (db) => (await db.getMessages(sessionId)).filter((m) => m.role === "tool").map((m) => String(m.content)));
}

describe("session_search is scoped to what the asking user may see (real serve)", () => {
  it(
    "user A's model never receives user B's DMs; A finds A's own earlier session",
    async () => {
      const setup = await start();
      await say(setup, { chatId: "bob", chatType: "dm", userId: "bob", text: "my secret word is zanzibar" });
      await say(setup, { chatId: "alice", chatType: "dm", userId: "alice", text: "my favourite colour is zanzibar-blue" });
      // Alice starts a new session, then her model searches for the word both users said.
      await say(setup, { chatId: "alice", chatType: "dm", userId: "alice", text: "/new" });
      nextTurnSearches(setup.fake, "zanzibar");
      const asking = await say(setup, { chatId: "alice", chatType: "dm", userId: "alice", text: "what did we say about zanzibar?" });
      // Bob's model searches too.
      await say(setup, { chatId: "bob", chatType: "dm", userId: "bob", text: "/new" });
      nextTurnSearches(setup.fake, "zanzibar");
      const bobAsking = await say(setup, { chatId: "bob", chatType: "dm", userId: "bob", text: "zanzibar?" });
      expect(await setup.gateway.stop()).toEqual({ code: 0, signal: null });

      const alice = (await toolResults(setup.home, asking!)).join("\n");
      expect(alice).toMatch(/zanzibar-blue/u);
      expect(alice).not.toMatch(/secret word/u);
      const bob = (await toolResults(setup.home, bobAsking!)).join("\n");
      expect(bob).toMatch(/secret word is zanzibar/u);
      expect(bob).not.toMatch(/favourite colour/u);
      // What the provider was sent as the tool result is what was stored.
      const sentTools = setup.fake
        .chatRequests()
        .flatMap((r) => r.body?.messages ?? [])
        .filter((m) => m.role === "tool")
        .map((m) => String(m.content));
      expect(sentTools.filter((t) => /favourite colour/u.test(t) && /secret word/u.test(t))).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "in a group, the default scope sees only the asker's sessions of that chat (no DMs, no other members); scope chat sees the chat",
    async () => {
      for (const scope of ["user", "chat"] as const) {
        const setup = await start({ sessionSearch: { scope } });
        await say(setup, { chatId: "alice", chatType: "dm", userId: "alice", text: "private: my pin is orchid" });
        await say(setup, { chatId: "room", chatType: "group", userId: "bob", text: "bob in the room: orchid delivery friday" });
        await say(setup, { chatId: "room", chatType: "group", userId: "alice", text: "alice in the room: orchid budget approved" });
        await say(setup, { chatId: "room", chatType: "group", userId: "alice", text: "/new" });
        nextTurnSearches(setup.fake, "orchid");
        const asking = await say(setup, { chatId: "room", chatType: "group", userId: "alice", text: "orchid status?" });
        expect(await setup.gateway.stop()).toEqual({ code: 0, signal: null });
        const found = (await toolResults(setup.home, asking!)).join("\n");
        expect(found, scope).not.toMatch(/my pin is orchid/u);
        expect(found, scope).toMatch(/orchid budget approved/u);
        if (scope === "user") expect(found, scope).not.toMatch(/orchid delivery friday/u);
        else expect(found, scope).toMatch(/orchid delivery friday/u);
        await cleanupProcesses();
      }
    },
    2 * TEST_TIMEOUT,
  );
});
