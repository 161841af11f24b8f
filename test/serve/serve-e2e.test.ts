/**
 * End-to-end tests of `threadline serve`: the BUILT bin (`dist/cli/main.js`; `npm test`
 * builds it first) runs as a real child process with its own temp THREADLINE_HOME and a
 * free loopback port, pointed at the fake OpenAI-protocol server through the environment
 * (OPENAI_BASE_URL, OPENAI_API_KEY, THREADLINE_MODEL). Everything goes over real HTTP;
 * transcripts are read from the SQLite file after the gateway has stopped.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/index.js";
import { countWords, FAKE_TITLE, messageText, startFakeOpenAiServer, type FakeOpenAiRequest, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import {
  cleanupProcesses,
  completionText,
  databaseOf,
  makeHome,
  metricValue,
  postChat,
  postWebhook,
  runServe,
  signBody,
  spawnGateway,
  startCallbackServer,
  waitFor,
  withDatabase,
  writeConfig,
  type CallbackServer,
  type WebhookMessage,
} from "./gateway-process.js";

const TEST_TIMEOUT = 60_000;
const FAKE_KEY = "sk-fake-e2e-key";
const SECRET = "e2e-webhook-secret-0123456789";
const RESUME_NOTE = "interrupted by a gateway restart";

const fakes: FakeOpenAiServer[] = [];

afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** A fake OpenAI server that requires the key the gateways are given. */
async function fakeServer(): Promise<FakeOpenAiServer> {
  const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"] });
  fakes.push(fake);
  return fake;
}

/** The environment that points a gateway at a fake server. */
function providerEnv(fake: FakeOpenAiServer): Record<string, string> {
  return { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" };
}

/** Webhook adapter config replying to a callback server. */
function webhookConfig(callback: CallbackServer): Record<string, unknown> {
  return { enabled: true, secret: SECRET, callbackUrl: callback.url };
}

/** The last user message of a model request. */
function lastUser(request: FakeOpenAiRequest): string {
  const messages = request.body?.messages ?? [];
  const last = [...messages].reverse().find((m) => m.role === "user");
  return last === undefined ? "" : messageText(last.content);
}

/** The non-system messages of a model request as [role, text] pairs. */
function dialogue(request: FakeOpenAiRequest): Array<[string, string]> {
  return (request.body?.messages ?? []).filter((m) => m.role !== "system").map((m) => [m.role, messageText(m.content)]);
}

/** The system messages' text of a model request. */
function systemText(request: FakeOpenAiRequest): string {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === "system")
    .map((m) => messageText(m.content))
    .join("\n");
}

/** Waits for the model request whose last user message is `text` (counting only requests from index `from` on). */
function modelRequestFor(fake: FakeOpenAiServer, text: string, from = 0): Promise<FakeOpenAiRequest> {
  return waitFor(() => fake.chatRequests().find((r) => r.index >= from && lastUser(r) === text), {
    what: `the model request for "${text}"`,
    describe: () => `model requests so far: ${JSON.stringify(fake.chatRequests().map(lastUser))}`,
  });
}

/** A transcript as [role, text] pairs. */
function pairs(messages: Message[]): Array<[string, string]> {
  return messages.map((m) => [m.role, typeof m.content === "string" ? m.content : JSON.stringify(m.content)]);
}

/** Marks a request the test may abandon (when it fails early) as handled, so it cannot become an unhandled rejection. */
function inFlight<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("threadline serve (built bin, real processes)", () => {
  it(
    "1. a conversation keeps its context across requests; the response is OpenAI-shaped with usage",
    async () => {
      const fake = await fakeServer();
      const home = await makeHome();
      const gateway = await spawnGateway({ home, env: providerEnv(fake) });

      const health = await fetch(`${gateway.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: "ok", activeTurns: 0, backend: "sqlite" });

      const first = await postChat(gateway.url, "My name is Ada", { sessionKey: "conv-1" });
      expect(completionText(first)).toBe("Reply to: My name is Ada");
      const second = await postChat(gateway.url, "What is my name?", { sessionKey: "conv-1" });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({
        object: "chat.completion",
        // The model that answered (issue 12, point 17), not the gateway's own name.
        model: "fake-model",
        choices: [{ index: 0, message: { role: "assistant", content: "Reply to: What is my name?" }, finish_reason: "stop" }],
      });
      expect(second.body.id).toMatch(/^chatcmpl-/u);
      expect(typeof second.body.created).toBe("number");

      // The model saw the earlier exchange in the second request.
      const requests = fake.chatRequests();
      expect(requests).toHaveLength(2);
      expect(requests[1]!.body?.model).toBe("fake-model");
      expect(requests[1]!.headers.authorization).toBe(`Bearer ${FAKE_KEY}`);
      expect(dialogue(requests[0]!)).toEqual([["user", "My name is Ada"]]);
      expect(dialogue(requests[1]!)).toEqual([
        ["user", "My name is Ada"],
        ["assistant", "Reply to: My name is Ada"],
        ["user", "What is my name?"],
      ]);

      // Usage is the provider's (the fake counts the words of every message it was sent).
      const promptTokens = (requests[1]!.body?.messages ?? []).reduce((n, m) => n + countWords(messageText(m.content)), 0);
      const completionTokens = countWords("Reply to: What is my name?");
      expect(second.body.usage).toEqual({
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      });
      expect(second.body.usage.prompt_tokens).toBeGreaterThan(0);

      // Both requests went to one session; another session key (here: the `user` field) is separate.
      const sessionId = first.headers.get("x-threadline-session-id");
      expect(sessionId).toMatch(/^\d{8}_\d{6}_[0-9a-f]{8}$/u);
      expect(second.headers.get("x-threadline-session-id")).toBe(sessionId);
      const other = await postChat(gateway.url, "Who am I?", { user: "someone-else" });
      expect(completionText(other)).toBe("Reply to: Who am I?");
      expect(other.headers.get("x-threadline-session-id")).not.toBe(sessionId);
      expect(dialogue(fake.chatRequests()[2]!)).toEqual([["user", "Who am I?"]]);

      expect(await metricValue(gateway.url, 'threadline_turns_total{outcome="ok"}')).toBe(3);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect(pairs(await db.getMessages(sessionId!))).toEqual([
          ["user", "My name is Ada"],
          ["assistant", "Reply to: My name is Ada"],
          ["user", "What is my name?"],
          ["assistant", "Reply to: What is my name?"],
        ]);
        const session = await db.getSession(sessionId!);
        expect(session).toMatchObject({ source: "api-server", title: FAKE_TITLE });
        expect(session!.usage.inputTokens).toBeGreaterThan(0);
      });
    },
    TEST_TIMEOUT,
  );

  describe("2. users of a group chat (webhook adapter)", () => {
    /**
     * Alice and Bob talk in one group; each message waits for its signed reply on the callback.
     * In a shared group the model is given each message of a turn as `[sender] text` (issue 26,
     * point 5), and the fake model's reply repeats what it was given.
     */
    async function groupConversation(sessions?: Record<string, unknown>) {
      const shared = sessions?.["groupSessionsPerUser"] === false;
      const fake = await fakeServer();
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({ adapters: { webhook: webhookConfig(callback) }, ...(sessions ? { sessions } : {}) });
      const gateway = await spawnGateway({ home, env: providerEnv(fake) });
      const keys: Record<string, unknown> = {};
      const say = async (userId: string, text: string, messageId: string) => {
        const message: WebhookMessage = { chatId: "team-room", chatType: "group", chatName: "Team room", userId, userName: userId, text, messageId };
        const ack = await postWebhook(gateway.url, SECRET, message);
        expect(ack.status).toBe(202);
        expect(ack.body).toMatchObject({ status: "accepted" });
        keys[messageId] = ack.body["sessionKey"];
        const reply = await callback.replyTo(messageId);
        expect(reply.signatureValid).toBe(true);
        const given = shared ? `[${userId}] ${text}` : text;
        expect(reply.body).toMatchObject({ chatId: "team-room", userId, kind: "reply", text: `Reply to: ${given}`, inReplyTo: [messageId] });
        return reply;
      };
      const a1 = await say("alice", "Alice here: the launch code is tulip", "a1");
      const b1 = await say("bob", "Bob here: the launch code is cactus", "b1");
      const a2 = await say("alice", "What launch code did I give?", "a2");
      const request = await modelRequestFor(fake, shared ? "[alice] What launch code did I give?" : "What launch code did I give?");
      // Every callback carried a valid signature (the replies and nothing else).
      expect(callback.deliveries.every((d) => d.signatureValid)).toBe(true);
      expect(callback.deliveries.map((d) => d.body.kind)).toEqual(["reply", "reply", "reply"]);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      return { a1, b1, a2, keys, request, home };
    }

    it(
      "two users → two sessions by default",
      async () => {
        const { a1, b1, a2, keys, request, home } = await groupConversation();
        expect(keys).toEqual({
          a1: "agent:main:webhook:group:team-room:alice",
          b1: "agent:main:webhook:group:team-room:bob",
          a2: "agent:main:webhook:group:team-room:alice",
        });
        expect(a1.body.sessionId).toBe(a2.body.sessionId);
        expect(b1.body.sessionId).not.toBe(a1.body.sessionId);
        // Alice's second turn sees her first message and nothing of Bob's.
        expect(dialogue(request)).toEqual([
          ["user", "Alice here: the launch code is tulip"],
          ["assistant", "Reply to: Alice here: the launch code is tulip"],
          ["user", "What launch code did I give?"],
        ]);
        await withDatabase(home, async (db) => {
          expect(pairs(await db.getMessages(b1.body.sessionId!))).toEqual([
            ["user", "Bob here: the launch code is cactus"],
            ["assistant", "Reply to: Bob here: the launch code is cactus"],
          ]);
          expect((await db.listSessions()).items).toHaveLength(2);
        });
      },
      TEST_TIMEOUT,
    );

    it(
      "with sessions.groupSessionsPerUser: false → one shared session",
      async () => {
        const { a1, b1, a2, keys, request, home } = await groupConversation({ groupSessionsPerUser: false });
        expect(new Set(Object.values(keys))).toEqual(new Set(["agent:main:webhook:group:team-room"]));
        expect(b1.body.sessionId).toBe(a1.body.sessionId);
        expect(a2.body.sessionId).toBe(a1.body.sessionId);
        // The turn's own message carries its sender; earlier ones are given as stored (the store keeps no sender per message).
        expect(dialogue(request)).toEqual([
          ["user", "Alice here: the launch code is tulip"],
          ["assistant", "Reply to: [alice] Alice here: the launch code is tulip"],
          ["user", "Bob here: the launch code is cactus"],
          ["assistant", "Reply to: [bob] Bob here: the launch code is cactus"],
          ["user", "[alice] What launch code did I give?"],
        ]);
        await withDatabase(home, async (db) => {
          expect((await db.listSessions()).items).toHaveLength(1);
          expect(await db.getMessages(a1.body.sessionId!)).toHaveLength(6);
        });
      },
      TEST_TIMEOUT,
    );
  });

  it(
    "3. five rapid requests to one session key → five turns, one at a time, in send order",
    async () => {
      const fake = await fakeServer();
      const firstReleased = deferred();
      let running = 0;
      let maxRunning = 0;
      fake.setScript(async (request) => {
        if (request.kind !== "chat") return null;
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        try {
          // The first turn is held until all five messages are in; every turn then takes a little while.
          if (lastUser(request) === "message 1") await firstReleased.promise;
          await new Promise((resolve) => setTimeout(resolve, 150));
        } finally {
          running -= 1;
        }
        return null;
      });
      const home = await makeHome();
      const gateway = await spawnGateway({ home, env: providerEnv(fake) });
      const send = (n: number) => inFlight(postChat(gateway.url, `message ${n}`, { sessionKey: "rapid" }));

      // Send one after the other, each only once the gateway has taken the previous one
      // (the first is at the model; the others show up in the queue-depth gauge).
      const responses = [send(1)];
      await modelRequestFor(fake, "message 1");
      for (let n = 2; n <= 5; n++) {
        responses.push(send(n));
        await waitFor(async () => (await metricValue(gateway.url, "threadline_queue_depth")) === n - 1, {
          what: `message ${n} to be queued`,
        });
      }
      firstReleased.resolve();
      const texts = (await Promise.all(responses)).map(completionText);
      expect(texts).toEqual([1, 2, 3, 4, 5].map((n) => `Reply to: message ${n}`));
      expect(maxRunning).toBe(1);

      // Each turn's model request carried every earlier exchange, in order.
      const requests = fake.chatRequests();
      expect(requests.map(lastUser)).toEqual([1, 2, 3, 4, 5].map((n) => `message ${n}`));
      const expected: Array<[string, string]> = [];
      for (let n = 1; n <= 5; n++) {
        expected.push(["user", `message ${n}`]);
        expect(dialogue(requests[n - 1]!)).toEqual(expected);
        expected.push(["assistant", `Reply to: message ${n}`]);
      }

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const sessions = (await db.listSessions()).items;
        expect(sessions).toHaveLength(1);
        expect(pairs(await db.getMessages(sessions[0]!.id))).toEqual(expected);
        expect(await db.listQueuedKeys()).toEqual([]);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "4. /undo, /retry, /compress and /resume by title over HTTP",
    async () => {
      const fake = await fakeServer();
      const home = await makeHome();
      const gateway = await spawnGateway({ home, env: providerEnv(fake) });
      const chat = async (text: string): Promise<string> => completionText(await postChat(gateway.url, text, { sessionKey: "cmds" }));

      expect(await chat("first message alpha")).toBe("Reply to: first message alpha");
      // The titler (the fake answers title requests) names the session after the first exchange.
      const status = await waitFor(
        async () => {
          const text = await chat("/status");
          return text.includes(`Title: ${FAKE_TITLE}`) ? text : null;
        },
        { what: "the session title in /status" },
      );
      const firstSession = /Session: (\S+)/u.exec(status)![1]!;
      expect(await chat("second message beta")).toBe("Reply to: second message beta");

      // /undo removes the last user message and its reply.
      expect(await chat("/undo")).toBe("Removed 1 message of yours and its reply.");
      expect(await chat("third message gamma")).toBe("Reply to: third message gamma");
      const afterUndo = fake.chatRequests().at(-1)!;
      expect(dialogue(afterUndo)).toEqual([
        ["user", "first message alpha"],
        ["assistant", "Reply to: first message alpha"],
        ["user", "third message gamma"],
      ]);

      // /retry runs the last message again; its reply answers the /retry request.
      const before = fake.chatRequests().length;
      expect(await chat("/retry")).toBe("Reply to: third message gamma");
      const retried = fake.chatRequests();
      expect(retried).toHaveLength(before + 1);
      expect(dialogue(retried.at(-1)!)).toEqual(dialogue(afterUndo));

      // /compress asks the model for a summary and continues in a titled child session.
      const compressed = await chat("/compress");
      const summaryRequest = fake.chatRequests().at(-1)!;
      expect(lastUser(summaryRequest)).toMatch(/^Summarise our conversation so far/u);
      const summary = `Reply to: ${lastUser(summaryRequest)}`;
      const match = /^Compressed into a new session "(.+)" \((\S+)\) that starts from the summary\.$/u.exec(compressed);
      expect(match, compressed).not.toBeNull();
      const [, childTitle, childSession] = match!;
      expect(childTitle).toBe(`${FAKE_TITLE} #2`);
      expect(childSession).not.toBe(firstSession);
      expect(await chat("after compress delta")).toBe("Reply to: after compress delta");
      expect(dialogue(fake.chatRequests().at(-1)!)).toEqual([
        ["user", `[Summary of the earlier conversation (session ${firstSession})]\n${summary}`],
        ["user", "after compress delta"],
      ]);

      // /new starts over; /resume <title> switches back to the compressed session.
      expect(await chat("/new")).toMatch(/^Started a new session \(\S+\)\./u);
      expect(await chat("in the new session epsilon")).toBe("Reply to: in the new session epsilon");
      expect(dialogue(fake.chatRequests().at(-1)!)).toEqual([["user", "in the new session epsilon"]]);
      expect(await chat(`/resume ${childTitle}`)).toBe(`Resumed ${childTitle} (3 messages).`);
      expect(await chat("back again zeta")).toBe("Reply to: back again zeta");
      expect(dialogue(fake.chatRequests().at(-1)!)).toEqual([
        ["user", `[Summary of the earlier conversation (session ${firstSession})]\n${summary}`],
        ["user", "after compress delta"],
        ["assistant", "Reply to: after compress delta"],
        ["user", "back again zeta"],
      ]);
      expect(await chat("/status")).toContain(`Session: ${childSession}`);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        // The rewound and retried messages are hidden; the first session ended by compression.
        expect(pairs(await db.getMessages(firstSession))).toEqual([
          ["user", "first message alpha"],
          ["assistant", "Reply to: first message alpha"],
          ["user", "third message gamma"],
          ["assistant", "Reply to: third message gamma"],
        ]);
        expect(await db.getSession(firstSession)).toMatchObject({ endReason: "compression", title: FAKE_TITLE });
        expect(await db.getSession(childSession!)).toMatchObject({ parentSessionId: firstSession, title: childTitle, endedAt: null });
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "5. a turn cut by SIGKILL is resumed after restart and no acknowledged message is lost",
    async () => {
      const fake = await fakeServer();
      let slow = true;
      fake.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 30_000 } : null));
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({ adapters: { webhook: webhookConfig(callback) } });
      const env = providerEnv(fake);
      const first = await spawnGateway({ home, env });
      const message = (text: string, messageId: string): WebhookMessage => ({ chatId: "crash-chat", userId: "carol", text, messageId });

      const accepted = await postWebhook(first.url, SECRET, message("a slow question", "m1"));
      expect(accepted).toMatchObject({ status: 202, body: { status: "accepted" } });
      await modelRequestFor(fake, "a slow question");
      const queued = await postWebhook(first.url, SECRET, message("a queued follow-up", "m2"));
      expect(queued).toMatchObject({ status: 202, body: { status: "queued", depth: 1 } });

      expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
      expect(callback.deliveries).toEqual([]);

      slow = false;
      const restartedAt = fake.requests.length;
      const second = await spawnGateway({ home, env });
      // The interrupted turn runs again from the stored user message.
      const resumed = await modelRequestFor(fake, "a slow question", restartedAt);
      expect(systemText(resumed)).toContain(RESUME_NOTE);
      expect(dialogue(resumed)).toEqual([["user", "a slow question"]]);
      const resumedReply = await callback.waitFor((d) => d.body.text === "Reply to: a slow question", "the resumed reply");
      expect(resumedReply).toMatchObject({ signatureValid: true, body: { kind: "reply", chatId: "crash-chat" } });
      // The queued message survived the crash and is answered after the resumed turn.
      const followUp = await callback.replyTo("m2");
      expect(followUp).toMatchObject({ signatureValid: true, body: { kind: "reply", text: "Reply to: a queued follow-up" } });
      expect(callback.deliveries.indexOf(resumedReply)).toBeLessThan(callback.deliveries.indexOf(followUp));
      expect(dialogue(await modelRequestFor(fake, "a queued follow-up", restartedAt))).toEqual([
        ["user", "a slow question"],
        ["assistant", "Reply to: a slow question"],
        ["user", "a queued follow-up"],
      ]);

      expect(await second.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect(pairs(await db.getMessages(resumedReply.body.sessionId!))).toEqual([
          ["user", "a slow question"],
          ["assistant", "Reply to: a slow question"],
          ["user", "a queued follow-up"],
          ["assistant", "Reply to: a queued follow-up"],
        ]);
        expect(await db.listQueuedKeys()).toEqual([]);
        const routes = (await db.listRoutes()).items;
        expect(routes).toHaveLength(1);
        expect(routes[0]).toMatchObject({ resumePending: false, turnStartedAt: null, suspended: false });
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "6. SIGTERM with a slow agent marks the session (exit 0) and the next start resumes it",
    async () => {
      const fake = await fakeServer();
      let slow = true;
      fake.setScript((request) => (request.kind === "chat" && slow ? { delayMs: 30_000 } : null));
      const callback = await startCallbackServer(SECRET);
      const home = await makeHome({ gateway: { drainTimeoutSeconds: 1 }, adapters: { webhook: webhookConfig(callback) } });
      const env = providerEnv(fake);
      const first = await spawnGateway({ home, env });

      const accepted = await postWebhook(first.url, SECRET, { chatId: "drain-chat", userId: "dave", text: "think about this slowly", messageId: "d1" });
      expect(accepted).toMatchObject({ status: 202, body: { status: "accepted" } });
      await modelRequestFor(fake, "think about this slowly");

      // A deadline, not a speed check: the model holds its reply for 30 s; the helper SIGKILLs and throws after 15 s.
      expect(await first.stop(15_000)).toEqual({ code: 0, signal: null });
      expect(first.logLines().some((line) => String(line["msg"]).startsWith("drain timed out"))).toBe(true);
      // No reply (and no error) went out for the interrupted turn.
      expect(callback.deliveries).toEqual([]);
      const sessionId = await withDatabase(home, async (db) => {
        const routes = (await db.listRoutes()).items;
        expect(routes).toHaveLength(1);
        expect(routes[0]).toMatchObject({ resumePending: true, resumeReason: "shutdown_timeout", suspended: false });
        expect(pairs(await db.getMessages(routes[0]!.sessionId))).toEqual([["user", "think about this slowly"]]);
        // A turn was cut off: no clean-shutdown marker, so the next start treats it as interrupted.
        expect(await db.getMeta("gateway.main.clean_shutdown")).toBeNull();
        return routes[0]!.sessionId;
      });

      slow = false;
      const restartedAt = fake.requests.length;
      const second = await spawnGateway({ home, env });
      const resumed = await modelRequestFor(fake, "think about this slowly", restartedAt);
      expect(systemText(resumed)).toContain(RESUME_NOTE);
      const reply = await callback.waitFor((d) => d.body.text === "Reply to: think about this slowly", "the resumed reply");
      expect(reply).toMatchObject({ signatureValid: true, body: { kind: "reply", chatId: "drain-chat", sessionId } });

      expect(await second.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect(pairs(await db.getMessages(sessionId))).toEqual([
          ["user", "think about this slowly"],
          ["assistant", "Reply to: think about this slowly"],
        ]);
        expect((await db.listRoutes()).items[0]).toMatchObject({ resumePending: false, resumeReason: null, turnStartedAt: null });
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "6b. SIGTERM while an api-server client waits for the interrupted turn still exits within the drain timeout",
    async () => {
      const fake = await fakeServer();
      fake.setScript((request) => (request.kind === "chat" ? { delayMs: 30_000 } : null));
      // Default adapters.apiServer.replyTimeoutSeconds (600): the waiting request must not hold the shutdown.
      const home = await makeHome({ gateway: { drainTimeoutSeconds: 1 } });
      const gateway = await spawnGateway({ home, env: providerEnv(fake) });
      const waiting = postChat(gateway.url, "a slow question over http", { sessionKey: "waiting-client" }).then(
        (response) => response.status,
        () => "connection closed",
      );
      await modelRequestFor(fake, "a slow question over http");

      // Drain timeout 1 s + generous margin; the helper SIGKILLs and throws (with the output) after 10 s: the deadline.
      expect(await gateway.stop(10_000)).toEqual({ code: 0, signal: null });
      // The client is told (an error status or a closed connection), not left hanging, and never gets a 200.
      expect(await waiting).not.toBe(200);
      await withDatabase(home, async (db) => {
        const routes = (await db.listRoutes()).items;
        expect(routes[0]).toMatchObject({ resumePending: true, resumeReason: "shutdown_timeout" });
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "9. sessions.maxQueueDepth in config.yaml limits a session's queue (the next message gets 429)",
    async () => {
      const fake = await fakeServer();
      const firstReleased = deferred();
      fake.setScript(async (request) => {
        if (request.kind === "chat" && lastUser(request) === "held 1") await firstReleased.promise;
        return null;
      });
      const home = await makeHome({ sessions: { maxQueueDepth: 1 } });
      const gateway = await spawnGateway({ home, env: providerEnv(fake) });
      try {
        const send = (n: number) => inFlight(postChat(gateway.url, `held ${n}`, { sessionKey: "bounded" }));
        const first = send(1);
        await modelRequestFor(fake, "held 1");
        const second = send(2);
        await waitFor(async () => (await metricValue(gateway.url, "threadline_queue_depth")) === 1, { what: "held 2 to be queued" });
        // The queue (limit 1) is full: the third message must be refused, not queued as number 2.
        const third = send(3);
        const outcome = await Promise.race([
          third.then((response) => response),
          waitFor(async () => (await metricValue(gateway.url, "threadline_queue_depth")) === 2, { what: "held 3 to be queued" }).then(
            () => "queued beyond sessions.maxQueueDepth" as const,
          ),
        ]);
        expect(outcome).not.toBe("queued beyond sessions.maxQueueDepth");
        expect(outcome).toMatchObject({ status: 429, body: { error: { type: "rate_limit_error" } } });
        expect((outcome as { body: { error: { message: string } } }).body.error.message).toContain("the limit is 1");
        firstReleased.resolve();
        expect(completionText(await first)).toBe("Reply to: held 1");
        expect(completionText(await second)).toBe("Reply to: held 2");
      } finally {
        firstReleased.resolve();
      }
    },
    TEST_TIMEOUT,
  );

  describe("7. request authentication", () => {
    it(
      "a webhook with a missing or wrong signature gets 401 and nothing is stored",
      async () => {
        const fake = await fakeServer();
        const callback = await startCallbackServer(SECRET);
        const home = await makeHome({ adapters: { webhook: webhookConfig(callback) } });
        const gateway = await spawnGateway({ home, env: providerEnv(fake) });
        const forged = { chatId: "auth-chat", userId: "mallory", text: "forged message", messageId: "f1" };

        const unsigned = await postWebhook(gateway.url, SECRET, forged, { signature: null });
        expect(unsigned.status).toBe(401);
        expect(unsigned.body).toMatchObject({ error: { code: "bad_signature" } });
        const wrongSecret = await postWebhook(gateway.url, SECRET, forged, { signature: signBody("another-secret-0123456789", JSON.stringify(forged)) });
        expect(wrongSecret.status).toBe(401);
        const otherBody = await postWebhook(gateway.url, SECRET, forged, { signature: signBody(SECRET, JSON.stringify({ ...forged, text: "hello" })) });
        expect(otherBody.status).toBe(401);
        const garbage = await postWebhook(gateway.url, SECRET, forged, { signature: "sha256=00" });
        expect(garbage.status).toBe(401);

        // A correctly signed message from the same chat still works.
        const genuine = await postWebhook(gateway.url, SECRET, { ...forged, userId: "alice", text: "genuine message", messageId: "g1" });
        expect(genuine).toMatchObject({ status: 202, body: { status: "accepted" } });
        expect((await callback.replyTo("g1")).body.text).toBe("Reply to: genuine message");
        expect(fake.chatRequests().map(lastUser)).toEqual(["genuine message"]);
        expect(callback.deliveries).toHaveLength(1);

        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
        await withDatabase(home, async (db) => {
          const sessions = (await db.listSessions()).items;
          expect(sessions).toHaveLength(1);
          expect(pairs(await db.getMessages(sessions[0]!.id))).toEqual([
            ["user", "genuine message"],
            ["assistant", "Reply to: genuine message"],
          ]);
          expect(await db.searchMessages("forged")).toEqual([]);
          expect(await db.listQueuedKeys()).toEqual([]);
        });
      },
      TEST_TIMEOUT,
    );

    it(
      "with api-server tokens configured, a missing or wrong bearer gets 401 and the right one works",
      async () => {
        const fake = await fakeServer();
        const token = "e2e-api-token-0123456789";
        const home = await makeHome({ adapters: { apiServer: { tokens: [token] } } });
        const gateway = await spawnGateway({ home, env: providerEnv(fake) });

        const missing = await postChat(gateway.url, "no token", { sessionKey: "auth" });
        expect(missing.status).toBe(401);
        expect(missing.body.error).toMatchObject({ type: "authentication_error", code: 401 });
        const wrong = await postChat(gateway.url, "wrong token", { sessionKey: "auth", token: "e2e-api-token-9876543210" });
        expect(wrong.status).toBe(401);
        const basic = await postChat(gateway.url, "basic auth", { sessionKey: "auth", authorization: `Basic ${token}` });
        expect(basic.status).toBe(401);
        const models = await fetch(`${gateway.url}/v1/models`);
        expect(models.status).toBe(401);

        const right = await postChat(gateway.url, "right token", { sessionKey: "auth", token });
        expect(completionText(right)).toBe("Reply to: right token");
        const listed = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
        expect(listed.status).toBe(200);
        expect(fake.chatRequests().map(lastUser)).toEqual(["right token"]);

        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
        await withDatabase(home, async (db) => {
          const sessions = (await db.listSessions()).items;
          expect(sessions).toHaveLength(1);
          expect(pairs(await db.getMessages(sessions[0]!.id)).map(([, text]) => text)).toEqual(["right token", "Reply to: right token"]);
        });
      },
      TEST_TIMEOUT,
    );
  });

  it(
    "8. --config with an invalid value exits non-zero naming the key",
    async () => {
      const home = await makeHome();
      const bad = await writeConfig(home, { gateway: { port: "eighty" } });
      const result = await runServe({ home, args: ["--config", bad] });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("gateway.port");
      expect(result.stderr).toMatch(/0 to 65535/u);
      expect(result.stderr).toContain('"eighty"');
      // It failed before opening (and creating) the database.
      expect(existsSync(databaseOf(home))).toBe(false);

      const outOfRange = await writeConfig(home, "gateway:\n  port: 70000\n");
      const second = await runServe({ home, args: ["--config", outOfRange] });
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain("gateway.port");

      const typo = await writeConfig(home, { gateway: { prot: 8080 } });
      const third = await runServe({ home, args: ["--config", typo] });
      expect(third.code).not.toBe(0);
      expect(third.stderr).toMatch(/gateway: unknown key\(s\) "prot"/u);

      const missing = await runServe({ home, args: ["--config", join(home, "no-such-config.yaml")] });
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain("no-such-config.yaml");
    },
    TEST_TIMEOUT,
  );
});
