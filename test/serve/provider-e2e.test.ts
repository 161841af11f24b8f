/**
 * The model provider behind a real `threadline serve` (issue 12, points 14, 17, 18, 20):
 * streamed replies pass the provider's tokens through as they arrive, the model that
 * answered is reported and recorded, auto-titling never holds up a turn, and tools are
 * configurable and dropped when the provider refuses them. The provider is the fake
 * OpenAI-compatible server in this process; the gateway is the built bin as a child.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  FAKE_TITLE,
  FAKE_TOOL_REJECTIONS,
  fakeTextReply,
  startFakeOpenAiServer,
  type FakeOpenAiServer,
  type FakeOpenAiServerOptions,
} from "../support/fake-openai-server.js";
import { cleanupProcesses, makeHome, runServe, spawnGateway, waitFor, withDatabase, type GatewayProcess } from "./gateway-process.js";

const TEST_TIMEOUT = 60_000;
const FAKE_KEY = "sk-fake-provider-key";

const fakes: FakeOpenAiServer[] = [];
const releases: Array<() => void> = [];
afterEach(async () => {
  for (const release of releases.splice(0)) release();
  await cleanupProcesses();
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fakeServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const fake = await startFakeOpenAiServer({ apiKey: FAKE_KEY, ...options });
  fakes.push(fake);
  return fake;
}

function providerEnv(fake: FakeOpenAiServer): Record<string, string> {
  return { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: FAKE_KEY, THREADLINE_MODEL: "fake-model" };
}

/** A promise and the function that settles it (settled in afterEach at the latest). */
function gate(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  releases.push(release);
  return { promise, release };
}

async function startGateway(fake: FakeOpenAiServer, config?: Record<string, unknown>): Promise<{ gateway: GatewayProcess; home: string }> {
  const home = await makeHome(config);
  const gateway = await spawnGateway({ home, env: providerEnv(fake) });
  return { gateway, home };
}

/** POSTs a chat completion with any body; returns status, headers and JSON body. */
async function complete(
  gateway: GatewayProcess,
  body: Record<string, unknown>,
  sessionKey = "provider-e2e",
): Promise<{ status: number; headers: Headers; json: Record<string, any> }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-threadline-session-key": sessionKey },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as Record<string, any> };
}

function say(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messages: [{ role: "user", content: text }], ...extra };
}

/** Reads an SSE response in the background: the events so far, and whether it has ended. */
function readEvents(response: Response): { events: string[]; ended: () => boolean; done: Promise<void> } {
  const events: string[] = [];
  let ended = false;
  const done = (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done: finished, value } = await reader.read();
      if (value !== undefined) buffer += decoder.decode(value, { stream: true });
      let at: number;
      while ((at = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        if (event.startsWith("data: ")) events.push(event.slice(6));
      }
      if (finished) break;
    }
    ended = true;
  })();
  return { events, ended: () => ended, done };
}

/** The text of the content deltas among SSE events. */
function streamedText(events: string[]): string {
  return events
    .filter((event) => event !== "[DONE]")
    .map((event) => JSON.parse(event) as { choices?: Array<{ delta?: { content?: string } }> })
    .map((chunk) => chunk.choices?.[0]?.delta?.content ?? "")
    .join("");
}

describe("provider behind threadline serve (issue 12)", () => {
  it(
    "14. stream: true passes the provider's tokens through as they arrive; the turn is stored whole at the end",
    async () => {
      const fake = await fakeServer({ streamTokens: true });
      const { gateway, home } = await startGateway(fake, { titles: { enabled: false } });
      const last = gate();
      fake.enqueue({
        ...fakeTextReply("alpha beta gamma delta", { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }),
        holdLastToken: last.promise,
      });

      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-threadline-session-key": "stream-1" },
        body: JSON.stringify(say("stream please", { stream: true })),
        signal: AbortSignal.timeout(30_000),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/u);
      const sessionId = response.headers.get("x-threadline-session-id");
      expect(sessionId).toMatch(/^\d{8}_\d{6}_[0-9a-f]{8}$/u);
      const stream = readEvents(response);

      // The provider holds back "delta": the client already has the first three words and
      // the turn is still running (nothing but the user message is stored yet).
      await waitFor(() => streamedText(stream.events) === "alpha beta gamma ", {
        what: "the first three streamed words",
        describe: () => JSON.stringify(stream.events),
      });
      expect(stream.ended()).toBe(false);
      expect(((await (await fetch(`${gateway.url}/healthz`)).json()) as { activeTurns: number }).activeTurns).toBe(1);
      await withDatabase(home, async (db) => {
        expect((await db.getMessages(sessionId!)).map((m) => m.role)).toEqual(["user"]);
      });

      last.release();
      await stream.done;
      expect(streamedText(stream.events)).toBe("alpha beta gamma delta");
      expect(stream.events.at(-1)).toBe("[DONE]");
      const finish = JSON.parse(stream.events.at(-2)!) as Record<string, any>;
      expect(finish).toMatchObject({
        object: "chat.completion.chunk",
        model: "fake-model",
        choices: [{ delta: {}, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      });
      expect(fake.chatRequests()[0]!.body).toMatchObject({ stream: true });
      // The streamed response (taken over from the HTTP framework) still gets its access-log line.
      await waitFor(() => gateway.logLines().some((l) => l["msg"] === "request" && l["route"] === "/v1/chat/completions"), {
        what: "the access line of the streamed request",
        describe: () => gateway.output(),
      });
      expect(gateway.logLines().filter((l) => l["msg"] === "request" && l["route"] === "/v1/chat/completions")).toEqual([
        expect.objectContaining({ method: "POST", status: 200, sessionKeyHash: expect.stringMatching(/^[0-9a-f]{12}$/u) }),
      ]);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        const messages = await db.getMessages(sessionId!);
        expect(messages.map((m) => [m.role, m.content])).toEqual([
          ["user", "stream please"],
          ["assistant", "alpha beta gamma delta"],
        ]);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "14. a stream cut off by a provider failure ends with an error event; a non-streaming request is unchanged",
    async () => {
      const fake = await fakeServer({ streamTokens: true });
      const { gateway } = await startGateway(fake, { titles: { enabled: false } });
      const plain = await complete(gateway, say("no stream"));
      expect(plain.status).toBe(200);
      expect(plain.json.choices[0].message.content).toBe("Reply to: no stream");
      // A provider error before any token: the status code still says so.
      fake.enqueue({ status: 500, json: { error: { message: "boom" } } });
      const failed = await complete(gateway, say("fails", { stream: true }));
      expect(failed.status).toBe(502);
      expect(failed.json.error.message).toMatch(/The model could not answer/u);
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "17. the response and the session name the model that answered; provider.models maps names; unknown models get a 400",
    async () => {
      const fake = await fakeServer({ models: ["fake-model", "fake-model-large"] });
      const { gateway, home } = await startGateway(fake, {
        titles: { enabled: false },
        provider: { models: { "gpt-4o": "fake-model-large" } },
      });

      const listed = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { data: Array<{ id: string }> };
      expect(listed.data.map((m) => m.id)).toEqual(["fake-model", "gpt-4o", "threadline"]);

      const plain = await complete(gateway, say("no model named"), "models-1");
      expect(plain.status).toBe(200);
      expect(plain.json.model).toBe("fake-model");
      const sessionId = plain.headers.get("x-threadline-session-id")!;

      const mapped = await complete(gateway, say("as gpt-4o", { model: "gpt-4o" }), "models-2");
      expect(mapped.status).toBe(200);
      expect(mapped.json.model).toBe("fake-model-large");
      const mappedSession = mapped.headers.get("x-threadline-session-id")!;
      expect(fake.chatRequests().map((r) => r.body?.model)).toEqual(["fake-model", "fake-model-large"]);

      const own = await complete(gateway, say("configured model by name", { model: "fake-model" }), "models-1");
      expect(own.status).toBe(200);

      const unknown = await complete(gateway, say("as gpt-5", { model: "gpt-5" }), "models-3");
      expect(unknown.status).toBe(400);
      expect(unknown.json.error.type).toBe("invalid_request_error");
      expect(unknown.json.error.message).toContain('Unknown model "gpt-5"');
      expect(unknown.json.error.message).toContain('"fake-model", "gpt-4o"');
      expect(fake.chatRequests()).toHaveLength(3);

      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.getSession(sessionId))!.model).toBe("fake-model");
        expect((await db.getSession(mappedSession))!.model).toBe("fake-model-large");
        // Nothing was stored for the refused request.
        expect((await db.listSessions({ limit: 10 })).items).toHaveLength(2);
        const byModel = (await db.getStats()).byModel.map((row) => row.model).sort();
        expect(byModel).toEqual(["fake-model", "fake-model-large"]);
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "17. the model the provider says answered is reported and stored, not the one asked for",
    async () => {
      const fake = await fakeServer({ servedModel: "fake-model-2026-01-01" });
      const { gateway, home } = await startGateway(fake, { titles: { enabled: false } });
      const reply = await complete(gateway, say("which model?"));
      expect(reply.json.model).toBe("fake-model-2026-01-01");
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      await withDatabase(home, async (db) => {
        expect((await db.getSession(reply.headers.get("x-threadline-session-id")!))!.model).toBe("fake-model-2026-01-01");
      });
    },
    TEST_TIMEOUT,
  );

  it(
    "18. auto-titling runs in the background: the next message is answered while the title call is still held",
    async () => {
      const title = gate();
      const fake = await fakeServer({
        script: async (request) => {
          if (request.kind === "title") await title.promise;
          return null;
        },
      });
      const { gateway, home } = await startGateway(fake);
      const first = await complete(gateway, say("first message"), "titles-1");
      expect(first.status).toBe(200);
      const sessionId = first.headers.get("x-threadline-session-id")!;
      await waitFor(() => fake.requests.some((r) => r.kind === "title"), { what: "the title request" });

      // The title call is held by the provider; the second message is answered anyway.
      const second = await complete(gateway, say("second message"), "titles-1");
      expect(second.status).toBe(200);
      expect(second.json.choices[0].message.content).toBe("Reply to: second message");
      expect(fake.requests.filter((r) => r.kind === "title")).toHaveLength(1);

      title.release();
      await waitFor(() => withDatabase(home, async (db) => (await db.getSession(sessionId))?.title === FAKE_TITLE), { what: "the session's title" });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    },
    TEST_TIMEOUT,
  );

  it(
    "18. a title still held at shutdown does not hold the gateway past its drain, and the shutdown is clean",
    async () => {
      const fake = await fakeServer({
        script: async (request) => {
          if (request.kind === "title") await new Promise(() => {});
          return null;
        },
      });
      const { gateway } = await startGateway(fake, { gateway: { drainTimeoutSeconds: 1 } });
      expect((await complete(gateway, say("hello"))).status).toBe(200);
      await waitFor(() => fake.requests.some((r) => r.kind === "title"), { what: "the title request" });
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expect(gateway.output()).not.toContain("drain timed out");
    },
    TEST_TIMEOUT,
  );

  for (const style of ["ollama", "vllm", "llamacpp"] as const) {
    it(
      `20. a provider without tool support (${style} wording) is answered without tools, remembered for later turns`,
      async () => {
        const fake = await fakeServer({ rejectTools: style });
        const { gateway } = await startGateway(fake, { titles: { enabled: false } });
        const first = await complete(gateway, say("first"), "tools-1");
        expect(first.status).toBe(200);
        expect(first.json.choices[0].message.content).toBe("Reply to: first");
        const second = await complete(gateway, say("second"), "tools-2");
        expect(second.json.choices[0].message.content).toBe("Reply to: second");
        // One refused request with tools, then none with them.
        expect(fake.chatRequests().map((r) => Array.isArray(r.body?.tools))).toEqual([true, false, false]);
        // The child's log reaches this process through a pipe, possibly after the replies.
        const warning = await waitFor(() => gateway.logLines().find((line) => String(line["msg"]).includes("refused tools")), {
          what: "the gateway's warning that the provider refused tools",
        });
        expect(warning).toMatchObject({ model: "fake-model", providerMessage: FAKE_TOOL_REJECTIONS[style].message("fake-model") });
        expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      },
      TEST_TIMEOUT,
    );
  }

  it(
    "20. provider.tools: off sends no tools; a list sends the tools named",
    async () => {
      const fake = await fakeServer();
      const off = await startGateway(fake, { titles: { enabled: false }, provider: { tools: "off" } });
      expect((await complete(off.gateway, say("no tools"))).status).toBe(200);
      expect(fake.chatRequests()[0]!.body?.tools).toBeUndefined();
      expect(await off.gateway.stop()).toEqual({ code: 0, signal: null });

      const listed = await startGateway(fake, { titles: { enabled: false }, provider: { tools: ["session_search"] } });
      expect((await complete(listed.gateway, say("with tools"))).status).toBe(200);
      const tools = fake.chatRequests()[1]!.body?.tools as Array<{ function: { name: string } }>;
      expect(tools.map((t) => t.function.name)).toEqual(["session_search"]);
      expect(await listed.gateway.stop()).toEqual({ code: 0, signal: null });

      const home = await makeHome({ provider: { tools: ["web_search"] } });
      const refused = await runServe({ home, env: providerEnv(fake) });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("provider.tools");
      expect(refused.stderr).toContain("session_search");
    },
    TEST_TIMEOUT,
  );
});
