import { afterEach, describe, expect, it } from "vitest";
import { AgentError } from "../../src/agents/agent.js";
import { OpenAiCompatibleAgent } from "../../src/agents/openai-agent.js";
import { tokenCounterFor } from "../../src/context/token-count.js";
import type { ConversationMessage } from "../../src/store/index.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "./fake-openai-server.js";

let server: FakeOpenAiServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** One turn of Threadline's provider agent against the fake (no context prompt: the messages go as given). */
function turn(messages: ConversationMessage[], options: Partial<ConstructorParameters<typeof OpenAiCompatibleAgent>[0]> = {}) {
  const agent = new OpenAiCompatibleAgent({ baseUrl: server!.url, model: "gpt-4", ...options });
  return agent.runTurn({ messages, contextPrompt: "", signal: new AbortController().signal, sessionId: "20250101_000000_aaaaaaaa" });
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

// The fake's window is what the context-budget e2e tests measure Threadline against: here Threadline's
// provider agent meets it, and a refusal reaches the caller as OpenAI's own 400 with its message.
describe("the provider agent against a context window (the fake's contextWindow)", () => {
  it("a turn within the window is answered; one over it fails with OpenAI's context_length_exceeded as an AgentError", async () => {
    server = await startFakeOpenAiServer({ contextWindow: 100 });
    const small: ConversationMessage[] = [{ role: "user", content: "hello there" }];
    const answered = await turn(small);
    expect(answered.messages[0]).toMatchObject({ role: "assistant", content: "Reply to: hello there" });
    const counter = await tokenCounterFor("gpt-4");
    expect(server.requests[0]!.tokens).toBe(counter.countMessages(small as never));

    const big: ConversationMessage[] = [{ role: "user", content: "word ".repeat(150) }];
    const refused = await errorOf(turn(big));
    expect(refused).toBeInstanceOf(AgentError);
    expect(refused).toMatchObject({ status: 400 });
    expect((refused as AgentError).providerMessage).toMatch(
      /^This model's maximum context length is 100 tokens\. However, your messages resulted in \d+ tokens\./u,
    );
    expect((refused as Error).message).toMatch(
      /^The model provider rejected the request \(HTTP 400 from .*\/chat\/completions\).*Provider said: "This model's maximum context length is 100 tokens/u,
    );
    expect(server.requests[1]!.overWindow).toBe(true);
    expect(server.requests[1]!.body).toMatchObject({ messages: [{ role: "user", content: "word ".repeat(150) }] });
    expect(server.window()).toEqual({ window: 100, counted: 2, maxTokens: counter.countMessages(big as never), refusals: 1 });
  });

  it("counts the agent's tools and max tokens against the window and names the parts", async () => {
    server = await startFakeOpenAiServer({ contextWindow: 60 });
    const messages: ConversationMessage[] = [{ role: "user", content: "hi" }];
    expect((await turn(messages)).messages[0]).toMatchObject({ role: "assistant" });
    const search = {
      name: "search",
      description: "searches the past sessions",
      parameters: { type: "object", properties: { q: { type: "string" } } },
      execute: async () => "nothing",
    };
    const refused = await errorOf(turn(messages, { tools: [search], maxTokens: 40 }));
    expect(refused).toMatchObject({ name: "AgentError", status: 400 });
    expect((refused as AgentError).providerMessage).toMatch(/you requested \d+ tokens \(\d+ in the messages, \d+ in the functions, 40 in the completion\)/u);
    expect(server.requests[1]!.body).toMatchObject({ max_tokens: 40, tools: [{ type: "function", function: { name: "search" } }] });
  });

  it("counts nothing without the option: a long turn is answered", async () => {
    server = await startFakeOpenAiServer();
    const answered = await turn([{ role: "user", content: "word ".repeat(10_000) }]);
    expect(answered.messages[0]).toMatchObject({ role: "assistant" });
    expect(server.requests[0]!.tokens).toBeUndefined();
    expect(server.window()).toBeNull();
  });
});
