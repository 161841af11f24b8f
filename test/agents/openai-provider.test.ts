import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentError, AgentInterruptedError } from "../../src/agents/agent.js";
import type { AgentTurnInput } from "../../src/agents/agent.js";
import { MAX_MODEL_CALLS_PER_TURN, OpenAiCompatibleAgent } from "../../src/agents/openai-agent.js";
import { DEFAULT_OPENAI_BASE_URL, providerModelFor, resolveProviderConfig } from "../../src/agents/provider-config.js";
import { isToolsUnsupportedError, ToolSupport } from "../../src/agents/tool-support.js";
import type { OpenAiCompatibleAgentOptions } from "../../src/agents/openai-agent.js";
import { InvalidInputError } from "../../src/store/index.js";
import type { ConversationMessage } from "../../src/store/index.js";
import { FAKE_TOOL_REJECTIONS, fakeErrorReply, fakeTextReply, fakeToolCallReply, startFakeOpenAiServer } from "../support/fake-openai-server.js";
import type { FakeOpenAiServer } from "../support/fake-openai-server.js";
import { waitFor } from "../support/wait-for.js";

let server: FakeOpenAiServer;

beforeEach(async () => {
  server = await startFakeOpenAiServer();
});

afterEach(async () => {
  await server.close();
});

function agentFor(options: Partial<OpenAiCompatibleAgentOptions> = {}): OpenAiCompatibleAgent {
  return new OpenAiCompatibleAgent({ baseUrl: server.url, model: "fake-model", ...options });
}

function turn(messages: ConversationMessage[], extra: Partial<AgentTurnInput> = {}): AgentTurnInput {
  return {
    messages,
    contextPrompt: "",
    signal: new AbortController().signal,
    sessionId: "20250101_000000_aaaaaaaa",
    ...extra,
  };
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("OpenAiCompatibleAgent: replies", () => {
  it("maps the reply and its usage", async () => {
    const agent = agentFor();
    expect(agent.name).toBe("openai:fake-model");
    const result = await agent.runTurn(turn([{ role: "user", content: "hello big world" }]));
    expect(result.messages).toEqual([{ role: "assistant", content: "Reply to: hello big world", finishReason: "stop", tokenCount: 5 }]);
    expect(result.usage).toEqual({ inputTokens: 3, outputTokens: 5, apiCalls: 1 });
    expect(result.promptTokens).toBe(3);
    const [request] = server.requests;
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.body).toEqual({ model: "fake-model", messages: [{ role: "user", content: "hello big world" }] });
  });

  it("maps cached and reasoning tokens, reasoning text and max tokens / temperature", async () => {
    server.enqueue({
      json: {
        choices: [
          {
            message: { role: "assistant", content: "42", reasoning_content: "thought hard" },
            finish_reason: "length",
          },
        ],
        usage: {
          prompt_tokens: 100,
          completion_tokens: 20,
          total_tokens: 120,
          prompt_tokens_details: { cached_tokens: 64 },
          completion_tokens_details: { reasoning_tokens: 15 },
        },
      },
    });
    const result = await agentFor({ maxTokens: 50, temperature: 0.2 }).runTurn(turn([{ role: "user", content: "q" }]));
    expect(result.messages).toEqual([{ role: "assistant", content: "42", finishReason: "length", reasoning: "thought hard", tokenCount: 20 }]);
    expect(result.usage).toEqual({
      inputTokens: 100,
      outputTokens: 20,
      cacheReadTokens: 64,
      reasoningTokens: 15,
      apiCalls: 1,
    });
    expect(result.promptTokens).toBe(100);
    expect(server.requests[0]?.body).toMatchObject({ max_tokens: 50, temperature: 0.2 });
  });

  it("maps `reasoning` and a reply without usage", async () => {
    server.enqueue({ json: { choices: [{ message: { role: "assistant", content: "ok", reasoning: "r" } }] } });
    const result = await agentFor().runTurn(turn([{ role: "user", content: "q" }]));
    expect(result.messages).toEqual([{ role: "assistant", content: "ok", reasoning: "r" }]);
    expect(result.usage).toEqual({ apiCalls: 1 });
    expect(result.promptTokens).toBeUndefined();
  });

  it("passes structured content through and drops reasoning fields of the history", async () => {
    const history: ConversationMessage[] = [
      { role: "user", content: "first" },
      { role: "assistant", content: "answer", reasoning: "secret", reasoning_details: [{ x: 1 }] },
      {
        role: "user",
        content: [
          { type: "text", text: "look at" },
          { type: "image_url", image_url: { url: "data:" } },
        ],
      },
    ];
    const result = await agentFor().runTurn(turn(history));
    expect(result.messages[0]?.content).toBe("Reply to: look at");
    expect(server.requests[0]?.body?.messages).toEqual([{ role: "user", content: "first" }, { role: "assistant", content: "answer" }, history[2]]);
  });
});

describe("OpenAiCompatibleAgent: context prompt and headers", () => {
  it("puts the context prompt first as a system message", async () => {
    await agentFor().runTurn(turn([{ role: "user", content: "hi" }], { contextPrompt: "## Current Session Context" }));
    expect(server.requests[0]?.body?.messages).toEqual([
      { role: "system", content: "## Current Session Context" },
      { role: "user", content: "hi" },
    ]);
  });

  it("puts it after the history's own system message", async () => {
    await agentFor().runTurn(
      turn(
        [
          { role: "system", content: "You are helpful." },
          { role: "user", content: "hi" },
        ],
        { contextPrompt: "CTX" },
      ),
    );
    expect(server.requests[0]?.body?.messages).toEqual([
      { role: "system", content: "You are helpful." },
      { role: "system", content: "CTX" },
      { role: "user", content: "hi" },
    ]);
  });

  it("skips an empty or blank context prompt", async () => {
    await agentFor().runTurn(turn([{ role: "user", content: "hi" }], { contextPrompt: "  \n" }));
    expect(server.requests[0]?.body?.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("sends the bearer key and extra headers; no authorization without a key", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ apiKey: "sk-test" });
    await agentFor({ apiKey: "sk-test", headers: { "X-Title": "threadline" } }).runTurn(turn([{ role: "user", content: "a" }]));
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(server.requests[0]?.headers["x-title"]).toBe("threadline");

    const error = await errorOf(agentFor().runTurn(turn([{ role: "user", content: "a" }])));
    expect(server.requests[1]?.headers.authorization).toBeUndefined();
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).status).toBe(401);
  });

  it("accepts a base URL with a trailing slash", async () => {
    const result = await agentFor({ baseUrl: `${server.url}/` }).runTurn(turn([{ role: "user", content: "x" }]));
    expect(result.messages[0]?.content).toBe("Reply to: x");
  });

  it("uses an injected fetch", async () => {
    const seen: string[] = [];
    const agent = agentFor({
      fetch: async (input, init) => {
        seen.push(String(input));
        return fetch(input, init);
      },
    });
    await agent.runTurn(turn([{ role: "user", content: "x" }]));
    expect(seen).toEqual([`${server.url}/chat/completions`]);
  });
});

describe("OpenAiCompatibleAgent: errors", () => {
  const user: ConversationMessage[] = [{ role: "user", content: "hi" }];

  it("401 says to check OPENAI_API_KEY and quotes the provider", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ apiKey: "sk-right" });
    const error = await errorOf(agentFor({ apiKey: "sk-wrong" }).runTurn(turn(user)));
    expect(error).toBeInstanceOf(AgentError);
    expect(error).toMatchObject({ status: 401 });
    expect((error as Error).message).toMatch(/OPENAI_API_KEY/u);
    expect((error as Error).message).toMatch(/Incorrect API key provided/u);
    expect((error as Error).message).not.toMatch(/sk-wrong/u);
  });

  it("403 also points at the key", async () => {
    server.enqueue(fakeErrorReply(403, "Project does not have access"));
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toMatchObject({ name: "AgentError", status: 403 });
    expect((error as Error).message).toMatch(/OPENAI_API_KEY.*Project does not have access/su);
  });

  it("404 says to check the base URL and the model", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ models: ["real-model"] });
    const error = await errorOf(agentFor({ model: "nope" }).runTurn(turn(user)));
    expect(error).toMatchObject({ name: "AgentError", status: 404 });
    const { message } = error as Error;
    expect(message).toMatch(/base URL/u);
    expect(message).toMatch(/model "nope"/u);
    expect(message).toMatch(/THREADLINE_MODEL/u);
    expect(message).toMatch(/does not exist/u);
  });

  it("404 for a wrong base URL path", async () => {
    const error = await errorOf(agentFor({ baseUrl: server.url.replace(/\/v1$/u, "/v2") }).runTurn(turn(user)));
    expect(error).toMatchObject({ status: 404 });
    expect((error as Error).message).toMatch(/Unknown request URL/u);
  });

  it("429 says rate limited, retry later, with Retry-After", async () => {
    server.enqueue(fakeErrorReply(429, "Rate limit reached for requests", { headers: { "retry-after": "7" } }));
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toMatchObject({ status: 429 });
    expect((error as Error).message).toMatch(/rate-limited.*retry later.*7 s.*Rate limit reached for requests/su);
  });

  it("500 says provider error, with an excerpt of the body", async () => {
    server.enqueue(fakeErrorReply(500, `The server had an error while processing your request. ${"x".repeat(500)}`));
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toMatchObject({ status: 500 });
    const { message } = error as Error;
    expect(message).toMatch(/provider error.*retry later/su);
    expect(message).toMatch(/The server had an error while processing your request/u);
    expect(message.length).toBeLessThan(500);
  });

  it("5xx with a non-JSON body quotes the text", async () => {
    server.enqueue({ status: 502, text: "<html>Bad Gateway</html>" });
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toMatchObject({ status: 502 });
    expect((error as Error).message).toMatch(/Bad Gateway/u);
  });

  it("other 4xx says the request was rejected", async () => {
    server.enqueue(fakeErrorReply(400, "max_tokens is too large"));
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message).toMatch(/rejected the request.*max_tokens is too large/su);
  });

  it("times out with 'no reply within N ms'", async () => {
    // The fake holds its reply far past the test's deadline: only the provider timeout ends the call.
    server.enqueue({ delayMs: 600_000 });
    const error = await errorOf(agentFor({ timeoutMs: 150 }).runTurn(turn(user)));
    expect(error).toBeInstanceOf(AgentError);
    expect(error).not.toBeInstanceOf(AgentInterruptedError);
    expect((error as Error).message).toMatch(/no reply within 150 ms/u);
    expect((error as AgentError).status).toBeNull();
    expect((error as AgentError).cause).toMatchObject({ code: "TL_ERR_TIMEOUT" });
  });

  it("names the URL when the connection is refused", async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const error = await errorOf(new OpenAiCompatibleAgent({ baseUrl, model: "m" }).runTurn(turn(user)));
    expect(error).toBeInstanceOf(AgentError);
    expect((error as Error).message).toContain(`${baseUrl}/chat/completions`);
    expect((error as Error).message).toMatch(/connection refused/u);
  });

  it("says so when the connection closes before the reply", async () => {
    server.enqueue({ delayMs: 10_000 });
    const running = errorOf(agentFor().runTurn(turn(user)));
    await waitFor(() => server.requests.length === 1, { what: "the request at the fake provider", timeoutMs: 5_000 });
    await server.close();
    const error = await running;
    expect(error).toBeInstanceOf(AgentError);
    expect((error as Error).message).toMatch(/closed the connection before replying/u);
  });

  it("sends the request again when the connection is reset before any reply (a dropped keep-alive socket)", async () => {
    server.enqueue({ resetConnection: true });
    server.enqueue(fakeTextReply("after the reset"));
    const result = await agentFor().runTurn(turn(user));
    expect(result.messages.at(-1)?.content).toBe("after the reset");
    expect(server.requests.filter((r) => r.kind === "chat")).toHaveLength(2);
  });

  it("gives up after three resets in a row, naming the reset", async () => {
    for (let i = 0; i < 3; i++) server.enqueue({ resetConnection: true });
    server.enqueue(fakeTextReply("never reached"));
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toBeInstanceOf(AgentError);
    expect((error as Error).message).toMatch(/closed the connection before replying/u);
    expect(server.requests.filter((r) => r.kind === "chat")).toHaveLength(3);
  });

  it("does not send again after an HTTP error reply", async () => {
    server.enqueue({ status: 500, json: { error: { message: "boom" } } });
    server.enqueue(fakeTextReply("never reached"));
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect((error as AgentError).status).toBe(500);
    expect(server.requests.filter((r) => r.kind === "chat")).toHaveLength(1);
  });

  it("rejects malformed JSON", async () => {
    server.enqueue({ status: 200, text: "{not json" });
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toBeInstanceOf(AgentError);
    expect((error as Error).message).toMatch(/not JSON.*\{not json/su);
  });

  it("rejects a reply without choices", async () => {
    server.enqueue({ json: { choices: [] } });
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect(error).toBeInstanceOf(AgentError);
    expect((error as Error).message).toMatch(/no choices/u);
  });

  it("quotes an error field in a 200 reply without choices", async () => {
    server.enqueue({ json: { error: { message: "upstream overloaded" } } });
    const error = await errorOf(agentFor().runTurn(turn(user)));
    expect((error as Error).message).toMatch(/no choices.*upstream overloaded/su);
  });
});

describe("OpenAiCompatibleAgent: abort", () => {
  it("throws AgentInterruptedError when the signal aborts mid-request", async () => {
    server.enqueue({ delayMs: 10_000 });
    const controller = new AbortController();
    const running = errorOf(agentFor().runTurn(turn([{ role: "user", content: "hi" }], { signal: controller.signal })));
    // Mid-request: the fake provider holds the request when the signal aborts.
    await waitFor(() => server.requests.length === 1, { what: "the request at the fake provider", timeoutMs: 5_000 });
    controller.abort();
    const error = await running;
    expect(error).toBeInstanceOf(AgentInterruptedError);
    expect((error as AgentInterruptedError).partial).toEqual([]);
  });

  it("does not call the provider when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await errorOf(agentFor().runTurn(turn([{ role: "user", content: "hi" }], { signal: controller.signal })));
    expect(error).toBeInstanceOf(AgentInterruptedError);
    expect(server.requests).toHaveLength(0);
  });

  it("keeps the messages and usage of earlier rounds", async () => {
    server.enqueue(
      fakeToolCallReply([{ name: "search", arguments: { q: "x" }, id: "call_a" }], {
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      }),
      { delayMs: 10_000 },
    );
    const controller = new AbortController();
    const running = agentFor().runTurn(turn([{ role: "user", content: "hi" }], { signal: controller.signal }));
    await waitFor(() => server.requests.length === 2, { what: "the second request at the fake provider", timeoutMs: 5_000 });
    controller.abort();
    const error = await errorOf(running);
    expect(error).toBeInstanceOf(AgentInterruptedError);
    const interrupted = error as AgentInterruptedError;
    expect(interrupted.partial.map((message) => message.role)).toEqual(["assistant", "tool"]);
    expect(interrupted.partial[1]).toMatchObject({ toolCallId: "call_a" });
    expect(interrupted.usage).toEqual({ inputTokens: 10, outputTokens: 2, apiCalls: 1 });
  });
});

describe("OpenAiCompatibleAgent: tool calls", () => {
  it("stores the call, a synthetic result and the final reply", async () => {
    server.enqueue(
      fakeToolCallReply(
        [
          { name: "get_weather", arguments: { city: "Oslo" }, id: "call_1" },
          { name: "get_time", arguments: "{}", id: "call_2" },
        ],
        { content: "Let me check.", usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 } },
      ),
    );
    const result = await agentFor().runTurn(turn([{ role: "user", content: "weather in Oslo?" }], { contextPrompt: "CTX" }));
    expect(result.messages).toEqual([
      {
        role: "assistant",
        content: "Let me check.",
        finishReason: "tool_calls",
        tokenCount: 3,
        toolCalls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_2", type: "function", function: { name: "get_time", arguments: "{}" } },
        ],
      },
      {
        role: "tool",
        toolCallId: "call_1",
        toolName: "get_weather",
        content: "Tool get_weather is not available in this gateway.",
      },
      {
        role: "tool",
        toolCallId: "call_2",
        toolName: "get_time",
        content: "Tool get_time is not available in this gateway.",
      },
      { role: "assistant", content: "Reply to: weather in Oslo?", finishReason: "stop", tokenCount: 5 },
    ]);
    // Second call: history + the call + the synthetic results.
    const second = server.requests[1]?.body?.messages;
    expect(second).toEqual([
      { role: "system", content: "CTX" },
      { role: "user", content: "weather in Oslo?" },
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
          { id: "call_2", type: "function", function: { name: "get_time", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "Tool get_weather is not available in this gateway." },
      { role: "tool", tool_call_id: "call_2", content: "Tool get_time is not available in this gateway." },
    ]);
    // Usage sums both calls; promptTokens is the last call's prompt size.
    const secondPromptWords = 1 + 3 + 3 + 8 + 8;
    expect(result.usage).toEqual({ inputTokens: 4 + secondPromptWords, outputTokens: 3 + 5, apiCalls: 2 });
    expect(result.promptTokens).toBe(secondPromptWords);
  });

  it(`stops after ${MAX_MODEL_CALLS_PER_TURN} calls with the last assistant message`, async () => {
    server.setScript((request) => (request.kind === "chat" ? fakeToolCallReply([{ name: "loop", id: `call_${request.index}` }]) : null));
    const result = await agentFor().runTurn(turn([{ role: "user", content: "go" }]));
    expect(server.requests).toHaveLength(MAX_MODEL_CALLS_PER_TURN);
    const roles = result.messages.map((message) => message.role);
    expect(roles).toEqual(["assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"]);
    const last = result.messages.at(-1);
    expect(last?.toolCalls).toBeNull();
    expect(last?.content).toMatch(/not available in this gateway: loop/u);
    expect(result.usage?.apiCalls).toBe(MAX_MODEL_CALLS_PER_TURN);
  });

  it("keeps the text of a final-round reply that still calls tools", async () => {
    server.setScript(() => fakeToolCallReply([{ name: "loop" }], { content: "partial answer" }));
    const result = await agentFor().runTurn(turn([{ role: "user", content: "go" }]));
    expect(result.messages.at(-1)).toMatchObject({ role: "assistant", content: "partial answer", toolCalls: null });
  });
});

/** The error `fn` throws (fails the test when it returns). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("OpenAiCompatibleAgent.fromEnv and resolveProviderConfig", () => {
  it("returns null when neither a base URL nor a key is set", () => {
    expect(OpenAiCompatibleAgent.fromEnv({})).toBeNull();
    expect(OpenAiCompatibleAgent.fromEnv({ THREADLINE_MODEL: "m", OPENAI_BASE_URL: " ", OPENAI_API_KEY: "" })).toBeNull();
    expect(resolveProviderConfig(undefined, {})).toBeNull();
    expect(resolveProviderConfig({ model: "m" }, {})).toBeNull();
  });

  it("reads the environment; the base URL defaults to OpenAI when only a key is set", () => {
    expect(resolveProviderConfig(undefined, { OPENAI_API_KEY: "sk-1", THREADLINE_MODEL: "gpt-4o-mini" })).toEqual({
      baseUrl: DEFAULT_OPENAI_BASE_URL,
      apiKey: "sk-1",
      model: "gpt-4o-mini",
      timeoutMs: 60_000,
      tools: "auto",
      models: {},
      vision: "auto",
    });
    const agent = OpenAiCompatibleAgent.fromEnv({ OPENAI_BASE_URL: "http://localhost:11434/v1/", THREADLINE_MODEL: "llama3" });
    expect(agent?.name).toBe("openai:llama3");
    expect(agent?.baseUrl).toBe("http://localhost:11434/v1");
  });

  it("config values win over the environment", () => {
    const env = { OPENAI_BASE_URL: "http://env/v1", OPENAI_API_KEY: "sk-env", THREADLINE_MODEL: "env-model" };
    expect(resolveProviderConfig({ baseUrl: "https://cfg/v1", model: "cfg-model", timeoutMs: 5_000 }, env)).toEqual({
      baseUrl: "https://cfg/v1",
      apiKey: "sk-env",
      model: "cfg-model",
      timeoutMs: 5_000,
      tools: "auto",
      models: {},
      vision: "auto",
    });
  });

  it("fromEnv overrides win and are passed to the agent", async () => {
    const agent = OpenAiCompatibleAgent.fromEnv(
      { OPENAI_BASE_URL: "http://127.0.0.1:1/v1", THREADLINE_MODEL: "env-model" },
      { baseUrl: server.url, maxTokens: 7 },
    );
    expect(agent?.name).toBe("openai:env-model");
    await agent?.runTurn(turn([{ role: "user", content: "x" }]));
    expect(server.requests[0]?.body).toMatchObject({ model: "env-model", max_tokens: 7 });
  });

  it("rejects a non-http(s) base URL", () => {
    const fromConfig = (): unknown => resolveProviderConfig({ baseUrl: "ftp://x", model: "m" }, {});
    expect(fromConfig).toThrow(InvalidInputError);
    expect(fromConfig).toThrow('provider.baseUrl: must be an http(s) URL such as https://api.openai.com/v1 (got "ftp://x")');
    expect(() => resolveProviderConfig(undefined, { OPENAI_BASE_URL: "localhost:8080", THREADLINE_MODEL: "m" })).toThrow(
      /got "localhost:8080" from OPENAI_BASE_URL/u,
    );
    expect(thrownBy(() => resolveProviderConfig({ baseUrl: "nope", model: "m" }, {}))).toMatchObject({
      code: "TL_ERR_INVALID_INPUT",
      field: "provider.baseUrl",
    });
  });

  it("requires a model once a provider is configured", () => {
    expect(() => OpenAiCompatibleAgent.fromEnv({ OPENAI_API_KEY: "sk" })).toThrow(
      "provider.model is required when a provider is configured (set THREADLINE_MODEL or provider.model).",
    );
  });

  it("validates types and the timeout without echoing the key", () => {
    expect(() => resolveProviderConfig({ baseUrl: "http://x", model: "m", timeoutMs: 0 }, {})).toThrow(
      "provider.timeoutMs: must be a whole number of milliseconds ≥ 100 (got 0)",
    );
    // The rule of the configuration reference (issue 29: one validator for the file and the API): under 100 ms is refused.
    expect(thrownBy(() => resolveProviderConfig({ baseUrl: "http://x", model: "m", timeoutMs: 99 }, {}))).toMatchObject({
      field: "provider.timeoutMs",
      message: "provider.timeoutMs: must be a whole number of milliseconds ≥ 100 (got 99)",
    });
    expect(resolveProviderConfig({ baseUrl: "http://x", model: "m", timeoutMs: 100 }, {})?.timeoutMs).toBe(100);
    expect(() => resolveProviderConfig({ baseUrl: "http://x", model: "m", timeoutMs: "5" as unknown as number }, {})).toThrow(/provider\.timeoutMs/u);
    expect(() => resolveProviderConfig({ apiKey: 12345 as unknown as string, model: "m" }, {})).toThrow(
      "provider.apiKey: must be a non-empty string (or set OPENAI_API_KEY) (got number)",
    );
    expect(() => resolveProviderConfig("x" as never, {})).toThrow(InvalidInputError);
  });
});

describe("OpenAiCompatibleAgent: streaming (issue 12, point 14)", () => {
  it("hands each token to onDelta as it arrives, before the provider has finished", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ streamTokens: true });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    server.enqueue({ ...fakeTextReply("one two three four", { usage: { prompt_tokens: 1, completion_tokens: 4, total_tokens: 5 } }), holdLastToken: held });
    const deltas: string[] = [];
    let settled = false;
    const running = agentFor()
      .runTurn(turn([{ role: "user", content: "count" }], { onDelta: (text) => deltas.push(text) }))
      .finally(() => (settled = true));
    // The provider holds "four" back: the first three words are already here, the turn is not over.
    await waitFor(() => deltas.join("") === "one two three ", { what: "the three streamed deltas", timeoutMs: 5_000 });
    expect(settled).toBe(false);
    release();
    const result = await running;
    expect(deltas).toEqual(["one ", "two ", "three ", "four"]);
    expect(result.messages).toEqual([expect.objectContaining({ role: "assistant", content: "one two three four", finishReason: "stop" })]);
    expect(server.chatRequests()[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    // Usage comes from the stream's usage chunk.
    expect(result.usage).toMatchObject({ inputTokens: 1, outputTokens: 4, apiCalls: 1 });
  });

  it("assembles streamed tool calls, runs them and streams the final reply", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ streamTokens: true });
    server.enqueue(fakeToolCallReply([{ name: "lookup", arguments: { q: "x" } }]), fakeTextReply("found it"));
    const deltas: string[] = [];
    const lookup = { name: "lookup", description: "d", parameters: { type: "object" }, execute: async () => "the result" };
    const result = await agentFor({ tools: [lookup] }).runTurn(turn([{ role: "user", content: "go" }], { onDelta: (t) => deltas.push(t) }));
    expect(result.messages.map((m) => m.role)).toEqual(["assistant", "tool", "assistant"]);
    expect(result.messages[0]!.toolCalls?.[0]).toMatchObject({ id: "call_1", function: { name: "lookup", arguments: '{"q":"x"}' } });
    expect(result.messages[1]).toMatchObject({ toolCallId: "call_1", content: "the result" });
    expect(deltas.join("")).toBe("found it");
  });

  it("a provider that ignores stream: true still gives the reply to onDelta, in one piece", async () => {
    const deltas: string[] = [];
    server.setScript(() => ({ json: { model: "m", choices: [{ message: { role: "assistant", content: "whole" }, finish_reason: "stop" }] } }));
    const result = await agentFor().runTurn(turn([{ role: "user", content: "x" }], { onDelta: (t) => deltas.push(t) }));
    expect(deltas).toEqual(["whole"]);
    expect(result.messages[0]!.content).toBe("whole");
  });

  it("an abort mid-stream throws AgentInterruptedError", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ streamTokens: true });
    server.enqueue({ ...fakeTextReply("a b c"), holdLastToken: new Promise(() => {}) });
    const controller = new AbortController();
    const deltas: string[] = [];
    const running = agentFor().runTurn(turn([{ role: "user", content: "x" }], { signal: controller.signal, onDelta: (t) => deltas.push(t) }));
    await waitFor(() => deltas.length === 2, { what: "two streamed deltas", timeoutMs: 5_000 });
    controller.abort();
    const error = await errorOf(running);
    expect(error).toBeInstanceOf(AgentInterruptedError);
    expect((error as AgentInterruptedError).partial).toEqual([]);
  });
});

describe("OpenAiCompatibleAgent: the model that answers (issue 12, point 17)", () => {
  it("reports the model named in the provider's reply, and sends a per-turn model", async () => {
    await server.close();
    server = await startFakeOpenAiServer({ servedModel: "fake-model-2026-01-01" });
    const agent = agentFor();
    expect((await agent.runTurn(turn([{ role: "user", content: "x" }]))).model).toBe("fake-model-2026-01-01");
    await agent.runTurn(turn([{ role: "user", content: "y" }], { model: "other-model" }));
    expect(server.chatRequests().map((r) => r.body?.model)).toEqual(["fake-model", "other-model"]);
  });

  it("falls back to the requested model when the reply names none", async () => {
    server.setScript(() => ({ json: { choices: [{ message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] } }));
    expect((await agentFor().runTurn(turn([{ role: "user", content: "x" }]))).model).toBe("fake-model");
  });

  it("providerModelFor maps requested names and refuses unknown ones", () => {
    const config = { model: "llama3.1", models: { "gpt-4o": "qwen2.5" } };
    expect(providerModelFor(config, undefined)).toBe("llama3.1");
    expect(providerModelFor(config, "llama3.1")).toBe("llama3.1");
    expect(providerModelFor(config, "gpt-4o")).toBe("qwen2.5");
    expect(providerModelFor(config, "gpt-5")).toBeNull();
    expect(providerModelFor(config, "toString")).toBeNull();
  });

  it("resolveProviderConfig reads provider.models and provider.tools", () => {
    expect(resolveProviderConfig({ baseUrl: "http://x/v1", model: "m" }, {})).toMatchObject({ tools: "auto", models: {} });
    expect(resolveProviderConfig({ baseUrl: "http://x/v1", model: "m", tools: ["session_search"], models: { a: "b" } }, {})).toMatchObject({
      tools: ["session_search"],
      models: { a: "b" },
    });
    expect(() => resolveProviderConfig({ baseUrl: "http://x/v1", model: "m", tools: "sometimes" as never }, {})).toThrow(
      'provider.tools: must be auto (default), off, or a list of tool names such as [session_search] (got "sometimes")',
    );
    expect(() => resolveProviderConfig({ baseUrl: "http://x/v1", model: "m", models: { a: 1 } as never }, {})).toThrow(
      "provider.models.a: must be a provider model name (the model answering requests for this name), or { model: <name>, contextWindow: <tokens> } (got 1)",
    );
  });
});

describe("OpenAiCompatibleAgent: providers without tool support (issue 12, point 20)", () => {
  const lookup = { name: "lookup", description: "d", parameters: { type: "object" }, execute: async () => "r" };

  for (const style of ["ollama", "vllm", "llamacpp"] as const) {
    it(`${style}: a refusal of tools is answered without tools, and remembered for later turns`, async () => {
      await server.close();
      server = await startFakeOpenAiServer({ rejectTools: style });
      const refusals: string[] = [];
      const toolSupport = new ToolSupport({ onRefused: ({ providerMessage }) => refusals.push(providerMessage) });
      const first = await agentFor({ tools: [lookup], toolSupport }).runTurn(turn([{ role: "user", content: "one" }]));
      expect(first.messages[0]!.content).toBe("Reply to: one");
      // Another agent (another session) of the same process goes without tools at once.
      const second = await agentFor({ tools: [lookup], toolSupport }).runTurn(turn([{ role: "user", content: "two" }]));
      expect(second.messages[0]!.content).toBe("Reply to: two");
      expect(server.chatRequests().map((r) => Array.isArray(r.body?.tools))).toEqual([true, false, false]);
      expect(refusals).toEqual([FAKE_TOOL_REJECTIONS[style].message("fake-model")]);
    });
  }

  it("other 400s are errors, not a reason to drop tools", async () => {
    server.enqueue(fakeErrorReply(400, "max_tokens is too large"));
    const toolSupport = new ToolSupport();
    const error = await errorOf(agentFor({ tools: [lookup], toolSupport }).runTurn(turn([{ role: "user", content: "x" }])));
    expect(error).toBeInstanceOf(AgentError);
    expect(toolSupport.refused(server.url, "fake-model")).toBe(false);
  });

  it("recognises the wording of real servers", () => {
    expect(isToolsUnsupportedError(400, "registry.ollama.ai/library/gemma2:2b does not support tools")).toBe(true);
    expect(isToolsUnsupportedError(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')).toBe(true);
    expect(isToolsUnsupportedError(500, "tools param requires --jinja flag")).toBe(true);
    expect(isToolsUnsupportedError(400, "Function calling is not supported by this model.")).toBe(true);
    expect(isToolsUnsupportedError(400, "max_tokens is too large")).toBe(false);
    expect(isToolsUnsupportedError(401, "does not support tools")).toBe(false);
    expect(isToolsUnsupportedError(400, null)).toBe(false);
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("OpenAiCompatibleAgent: the turn before an automatic reset", () => {
  const transcript: ConversationMessage[] = [
    { role: "user", content: "my cat is called Miso" },
    { role: "assistant", content: "Noted." },
  ];
  const resetInput = () => ({ sessionId: "20250101_000000_aaaaaaaa", transcript, reason: "idle" as const, signal: new AbortController().signal });

  it("with a tool that saves state: one turn on the transcript plus the reset instruction; instruction and turn are returned", async () => {
    const saved: Array<Record<string, unknown>> = [];
    const agent = agentFor({
      tools: [
        {
          name: "memory_save",
          description: "Save a fact about the user",
          parameters: { type: "object", properties: { fact: { type: "string" } } },
          savesState: true,
          execute: async (args) => {
            saved.push(args);
            return "saved";
          },
        },
      ],
    });
    server.enqueue(fakeToolCallReply([{ name: "memory_save", arguments: { fact: "cat=Miso" }, id: "call_m" }]));
    server.enqueue(fakeTextReply("Saved the cat's name."));
    const result = await agent.beforeReset(resetInput());
    expect(saved).toEqual([{ fact: "cat=Miso" }]);
    const sent = server.requests[0]!.body!.messages!;
    expect(sent.slice(0, 2)).toMatchObject(transcript);
    expect(sent[2]).toMatchObject({ role: "user" });
    expect(String(sent[2]!.content)).toMatch(/about to be reset/);
    expect(result!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(result!.messages[0]!.content).toBe(sent[2]!.content);
    expect(result!.messages.at(-1)!.content).toBe("Saved the cat's name.");
  });

  it("before a compression (reason compression): the instruction says the conversation is about to be compressed", async () => {
    const agent = agentFor({
      tools: [{ name: "memory_save", description: "Save a fact", parameters: { type: "object" }, savesState: true, execute: async () => "saved" }],
    });
    server.enqueue(fakeTextReply("Nothing to save."));
    const result = await agent.beforeReset({ ...resetInput(), reason: "compression" });
    const instruction = String(server.requests[0]!.body!.messages![2]!.content);
    expect(instruction).toMatch(/about to be compressed: its earlier part will be replaced by a short summary/u);
    expect(instruction).not.toMatch(/reset/u);
    expect(result!.messages.at(-1)!.content).toBe("Nothing to save.");
  });

  it("without a tool that saves state (only read-only tools, or none): skipped, no model call", async () => {
    const readOnly = agentFor({
      tools: [{ name: "session_search", description: "search", parameters: { type: "object" }, execute: async () => "nothing" }],
    });
    expect(await readOnly.beforeReset(resetInput())).toBeNull();
    expect(await agentFor().beforeReset(resetInput())).toBeNull();
    expect(server.requests).toHaveLength(0);
  });
});
