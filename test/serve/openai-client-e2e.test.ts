/**
 * The OpenAI-compatible endpoint of a real `threadline serve` process, driven by the
 * official `openai` npm client (with its automatic retries and `Idempotency-Key`
 * header), with the fake OpenAI-compatible provider behind the gateway.
 *
 * Covers: refused slash commands are normal replies, never 5xx (so never retried);
 * only known commands are commands; client retries never store a message twice and a
 * failed turn is stored once with its failure recorded; every error on `/v1/*` has the
 * OpenAI error shape; one access-log line per request.
 */
import { createHash } from "node:crypto";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/index.js";
import { fakeTextReply, messageText, startFakeOpenAiServer, type FakeOpenAiServer } from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";

const TEST_TIMEOUT = 60_000;
const FAKE_KEY = "sk-fake-openai-e2e";
const TOKEN = "serve-token-0123456789";

const fakes: FakeOpenAiServer[] = [];
afterEach(async () => {
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

interface Setup {
  fake: FakeOpenAiServer;
  gateway: GatewayProcess;
  home: string;
  /** An official client for a session key (default retries: 2, i.e. up to 3 attempts). */
  client(sessionKey: string, options?: { maxRetries?: number }): OpenAI;
}

async function start(config: Record<string, unknown> = {}): Promise<Setup> {
  const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, models: ["fake-model"] });
  fakes.push(fake);
  const home = await makeHome({ titles: { enabled: false }, adapters: { apiServer: { tokens: [TOKEN] } }, ...config });
  const gateway = await spawnGateway({ home, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" } });
  const client = (sessionKey: string, options: { maxRetries?: number } = {}): OpenAI =>
    new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: TOKEN,
      defaultHeaders: { "X-Threadline-Session-Key": sessionKey },
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    });
  return { fake, gateway, home, client };
}

/** Asks; `idempotencyKey` is sent as the `Idempotency-Key` header (openai-node 6 does not send one by itself). */
async function ask(client: OpenAI, content: string, options: { idempotencyKey?: string } = {}): Promise<OpenAI.Chat.Completions.ChatCompletion> {
  const headers = options.idempotencyKey === undefined ? {} : { headers: { "Idempotency-Key": options.idempotencyKey } };
  return client.chat.completions.create({ model: "threadline", messages: [{ role: "user", content }] }, headers);
}

/** Waits until `count` access lines of chat completions are logged (a line is written just after its response). */
async function settledAccessLines(gateway: GatewayProcess, count: number): Promise<Array<Record<string, unknown>>> {
  await waitFor(() => accessLines(gateway).length >= count, { what: `${count} access lines`, describe: () => gateway.output() });
  return accessLines(gateway);
}

/** Asks and returns the reply text and the session id the gateway reports. */
async function askInSession(client: OpenAI, content: string): Promise<{ text: string | null; sessionId: string }> {
  const { data, response } = await client.chat.completions.create({ model: "threadline", messages: [{ role: "user", content }] }).withResponse();
  return { text: data.choices[0]!.message.content, sessionId: response.headers.get("x-threadline-session-id")! };
}

/** Every visible message of the session the key routes to. */
function transcript(home: string, sessionId: string): Promise<Message[]> {
  return withDatabase(home, (db) => db.getMessages(sessionId));
}

/** The access-log lines of chat-completions requests so far. */
function accessLines(gateway: GatewayProcess, route = "/v1/chat/completions"): Array<Record<string, unknown>> {
  return gateway.logLines().filter((l) => l["msg"] === "request" && l["route"] === route);
}

const userTexts = (messages: Array<{ role: string; content?: unknown }>): string[] =>
  messages.filter((m) => m.role === "user").map((m) => messageText(m.content));

describe("the OpenAI-compatible endpoint through the official openai client (real serve)", () => {
  it(
    "a refused slash command is a normal 200 reply (sent once, never retried); only known commands are commands",
    async () => {
      const setup = await start();
      const a = setup.client("cmd-a");
      const b = setup.client("cmd-b");
      await ask(a, "hello");
      expect((await ask(a, "/title Taken Title")).choices[0]!.message.content).toMatch(/Title set: Taken Title/);
      const cases: Array<[OpenAI, string, RegExp]> = [
        [b, "/bogus", /Unknown command \/bogus/],
        [b, "/undo 0", /Usage: \/undo/],
        [b, "/title Taken Title", /already|taken|in use/i],
        [b, "/resume no-such", /No session of this chat/],
      ];
      for (const [client, text, expected] of cases) {
        const completion = await ask(client, text);
        expect(completion.choices[0]!.message.content, text).toMatch(expected);
      }
      // One request each (2 before + 4): the client retried none of them.
      expect((await settledAccessLines(setup.gateway, 6)).map((l) => l["status"])).toEqual([200, 200, 200, 200, 200, 200]);
      // None of them reached the model.
      expect(setup.fake.chatRequests().flatMap((r) => userTexts(r.body?.messages ?? []))).toEqual(["hello"]);

      // An unknown "/word" followed by more text is a message for the model.
      const message = await ask(b, "/etc is full");
      expect(message.choices[0]!.message.content).toBe("Reply to: /etc is full");
      expect(userTexts(setup.fake.chatRequests().at(-1)!.body!.messages!)).toEqual(["/etc is full"]);
    },
    TEST_TIMEOUT,
  );

  it(
    "a provider failure retried by the client stores the user message once, records the failure, and the next turn sees it once",
    async () => {
      const setup = await start();
      setup.fake.enqueue({ status: 500, json: { error: { message: "boom", type: "server_error" } } }, { status: 500 }, { status: 500 });
      const client = setup.client("fail-key");
      const error = await ask(client, "first question").then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      // The client tried three times; the provider was asked three times (each retry re-ran the turn once).
      expect(setup.fake.chatRequests()).toHaveLength(3);
      for (const request of setup.fake.chatRequests()) expect(userTexts(request.body!.messages!)).toEqual(["first question"]);

      const next = await askInSession(client, "second question");
      expect(next.text).toBe("Reply to: second question");
      const seen = setup.fake.chatRequests().at(-1)!.body!.messages!;
      expect(userTexts(seen)).toEqual(["first question", "second question"]);
      // The failure is recorded, not silently dropped.
      expect(
        seen
          .filter((m) => m.role === "assistant")
          .map((m) => messageText(m.content))
          .join("\n"),
      ).toMatch(/could not answer/);

      const stored = await transcript(setup.home, next.sessionId);
      expect(stored.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["first question", "second question"]);
      expect((await settledAccessLines(setup.gateway, 4)).map((l) => l["status"])).toEqual([502, 502, 502, 200]);
    },
    TEST_TIMEOUT,
  );

  it(
    "a retry after one provider failure re-runs the turn and answers 200; the message is stored once",
    async () => {
      const setup = await start({ provider: { timeoutMs: 300 } });
      // The first attempt times out at the provider; the client's retry gets an answer.
      setup.fake.enqueue({ ...fakeTextReply("too late"), delayMs: 5_000 }, fakeTextReply("second try worked"));
      const client = setup.client("timeout-key");
      const completion = await askInSession(client, "slow question");
      expect(completion.text).toBe("second try worked");
      const requests = setup.fake.chatRequests();
      expect(requests).toHaveLength(2);
      expect(userTexts(requests[1]!.body!.messages!)).toEqual(["slow question"]);
      const stored = await transcript(setup.home, completion.sessionId);
      expect(stored.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["slow question"]);
      expect(stored.at(-1)!.content).toBe("second try worked");
      expect((await settledAccessLines(setup.gateway, 2)).map((l) => l["status"])).toEqual([502, 200]);
    },
    TEST_TIMEOUT,
  );

  it(
    "the same Idempotency-Key gets the same stored message and the same reply (also while the first attempt runs)",
    async () => {
      const setup = await start();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      setup.fake.setScript(async (request) => {
        if (request.kind !== "chat") return null;
        await gate;
        return fakeTextReply("the one answer");
      });
      const client = setup.client("idem-key", { maxRetries: 0 });
      const first = ask(client, "only once", { idempotencyKey: "key-1" });
      first.catch(() => {}); // awaited below; no unhandled rejection if the test fails earlier
      await waitFor(() => setup.fake.chatRequests().length === 1, { what: "the provider request of the first attempt" });
      const second = ask(client, "only once", { idempotencyKey: "key-1" });
      second.catch(() => {});
      await waitFor(() => setup.gateway.logLines().some((l) => l["msg"] === "joined a request already running"), {
        what: "the retry to join the running attempt",
      });
      release();
      const [a, b] = await Promise.all([first, second]);
      expect(a.choices[0]!.message.content).toBe("the one answer");
      expect(b.choices[0]!.message.content).toBe("the one answer");
      // After the reply: a third request with the key gets the stored reply, without a model call.
      const third = await client.chat.completions
        .create({ model: "threadline", messages: [{ role: "user", content: "only once" }] }, { headers: { "Idempotency-Key": "key-1" } })
        .withResponse();
      expect(third.data.choices[0]!.message.content).toBe("the one answer");
      expect(setup.fake.chatRequests()).toHaveLength(1);
      const stored = await transcript(setup.home, third.response.headers.get("x-threadline-session-id")!);
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ["user", "only once"],
        ["assistant", "the one answer"],
      ]);
      // Another key is another message.
      setup.fake.setScript(null);
      expect((await ask(client, "only once", { idempotencyKey: "key-2" })).choices[0]!.message.content).toBe("Reply to: only once");
    },
    TEST_TIMEOUT,
  );

  it(
    "every error on /v1/* has the OpenAI error shape",
    async () => {
      const setup = await start();
      const headers = { authorization: `Bearer ${TOKEN}`, "x-threadline-session-key": "shape" };
      const shaped = async (response: Response, status: number): Promise<void> => {
        expect(response.status).toBe(status);
        const body = (await response.json()) as { error?: { message?: unknown; type?: unknown; code?: unknown } };
        expect(Object.keys(body)).toEqual(["error"]);
        expect(typeof body.error?.message).toBe("string");
        expect(typeof body.error?.type).toBe("string");
        expect(body.error).toHaveProperty("code");
      };
      const url = `${setup.gateway.url}/v1/chat/completions`;
      await shaped(await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{not json" }), 400);
      await shaped(await fetch(url, { method: "POST", headers: { ...headers, "content-type": "text/plain" }, body: "hello" }), 400);
      await shaped(await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/xml" }, body: "<a/>" }), 415);
      await shaped(await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "[1]" }), 400);
      await shaped(await fetch(url, { method: "GET", headers }), 404);
      await shaped(await fetch(`${setup.gateway.url}/v1/nope`, { method: "POST", headers, body: "{}" }), 404);
      await shaped(await fetch(`${setup.gateway.url}/v1/embeddings`, { headers }), 404);
      await shaped(await fetch(`${setup.gateway.url}/v1/nope`, { headers: {} }), 404);
      // The official client reads the message.
      const client = setup.client("shape");
      const error = await client.post("/nope", { body: {} }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as Error).message).toMatch(/POST \/v1\/nope/);
    },
    TEST_TIMEOUT,
  );

  it(
    "logs one access line per request at info level, with the session key hashed and no secrets",
    async () => {
      const setup = await start();
      const client = setup.client("secret-session-key");
      await ask(client, "hi");
      await fetch(`${setup.gateway.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
      await fetch(`${setup.gateway.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer wrong-token-123" }, body: "{}" });
      await fetch(`${setup.gateway.url}/healthz`);
      // The lines from the first chat request on (before it: the start-up health checks).
      const ours = (): Array<Record<string, unknown>> => {
        const all = setup.gateway.logLines().filter((l) => l["msg"] === "request");
        return all.slice(all.findIndex((l) => l["route"] === "/v1/chat/completions"));
      };
      await waitFor(() => ours().length >= 4, { what: "four access lines" });
      const lines = ours();
      expect(lines).toHaveLength(4);
      for (const line of lines) {
        expect(line["level"]).toBe(30);
        expect(typeof line["durationMs"]).toBe("number");
      }
      const hash = createHash("sha256").update("secret-session-key", "utf8").digest("hex").slice(0, 12);
      expect(lines.map((l) => [l["method"], l["route"], l["status"], l["sessionKeyHash"] ?? null])).toEqual([
        ["POST", "/v1/chat/completions", 200, hash],
        ["GET", "/v1/models", 200, null],
        ["POST", "/v1/chat/completions", 401, null],
        ["GET", "/healthz", 200, null],
      ]);
      const output = setup.gateway.output();
      expect(output).not.toContain("secret-session-key");
      expect(output).not.toContain(TOKEN);
      expect(output).not.toContain("wrong-token-123");
    },
    TEST_TIMEOUT,
  );
});
