import { afterEach, describe, expect, it } from "vitest";
import { tokenCounterFor } from "../../src/context/token-count.js";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "./fake-openai-server.js";

let server: FakeOpenAiServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function complete(body: unknown): Promise<{ status: number; json: { error?: { code: string; message: string; param: string }; choices?: unknown[] } }> {
  const response = await fetch(`${server!.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as never };
}

describe("fake OpenAI server: contextWindow", () => {
  it("answers a request within the window and refuses one over it with OpenAI's context_length_exceeded", async () => {
    server = await startFakeOpenAiServer({ contextWindow: 100 });
    const small = [{ role: "user", content: "hello there" }];
    const ok = await complete({ model: "gpt-4", messages: small });
    expect(ok.status).toBe(200);
    const counter = await tokenCounterFor("gpt-4");
    expect(server.requests[0]!.tokens).toBe(counter.countMessages(small as never));

    const big = [{ role: "user", content: "word ".repeat(150) }];
    const refused = await complete({ model: "gpt-4", messages: big });
    expect(refused.status).toBe(400);
    expect(refused.json.error?.code).toBe("context_length_exceeded");
    expect(refused.json.error?.param).toBe("messages");
    expect(refused.json.error?.message).toMatch(/^This model's maximum context length is 100 tokens\. However, your messages resulted in \d+ tokens\./u);
    expect(server.requests[1]!.overWindow).toBe(true);
    expect(server.window()).toEqual({ window: 100, counted: 2, maxTokens: counter.countMessages(big as never), refusals: 1 });
  });

  it("counts tools and max_tokens against the window and names the parts", async () => {
    server = await startFakeOpenAiServer({ contextWindow: 60 });
    const messages = [{ role: "user", content: "hi" }];
    const within = await complete({ model: "gpt-4", messages });
    expect(within.status).toBe(200);
    const tools = [
      {
        type: "function",
        function: { name: "search", description: "searches the past sessions", parameters: { type: "object", properties: { q: { type: "string" } } } },
      },
    ];
    const over = await complete({ model: "gpt-4", messages, tools, max_tokens: 40 });
    expect(over.status).toBe(400);
    expect(over.json.error?.message).toMatch(/you requested \d+ tokens \(\d+ in the messages, \d+ in the functions, 40 in the completion\)/u);
  });

  it("counts nothing without the option", async () => {
    server = await startFakeOpenAiServer();
    const ok = await complete({ model: "gpt-4", messages: [{ role: "user", content: "word ".repeat(10_000) }] });
    expect(ok.status).toBe(200);
    expect(server.requests[0]!.tokens).toBeUndefined();
    expect(server.window()).toBeNull();
  });
});
