import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HeuristicTitler, titleFromText } from "../../src/agents/heuristic-titler.js";
import { OpenAiTitler, TITLE_SYSTEM_PROMPT, cleanModelTitle } from "../../src/agents/openai-titler.js";
import { FAKE_TITLE, fakeErrorReply, fakeTextReply, startFakeOpenAiServer } from "../support/fake-openai-server.js";
import type { FakeOpenAiServer } from "../support/fake-openai-server.js";

describe("HeuristicTitler", () => {
  const cases: Array<[string, string | null]> = [
    ["How do I rotate nginx logs daily?", "How do I rotate nginx logs daily"],
    ["hello, please fix the flaky login test in CI", "Fix the flaky login test in CI"],
    ["Hi there! Can you explain how **Postgres** advisory locks work? https://example.com/x", "Explain how Postgres advisory locks work"],
    ["hey can you please summarise this article for me quickly today thanks", "Summarise this article for me quickly today"],
    ["Look at ```js\nconst x = 1;\n``` and `npm test` output", "Look at and npm test output"],
    ["# Heading\n- see [the docs](https://docs.example.com) about _config_ files", "Heading see the docs about config files"],
    ["Hello can you help", "Hello can you help"],
    ["hello there", "Hello there"],
    ["thanks", "Thanks"],
    ["www.example.com", null],
    ["", null],
    ["  ?!… 🙂 --- ", null],
    ["```\nonly code\n```", null],
    ["<b>bold</b> statement about html tags here", "Bold statement about html tags here"],
    ["what's the diff between C++ and C#?", "What's the diff between C++ and C#"],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, async () => {
      expect(await new HeuristicTitler().proposeTitle({ userText: input, replyText: "ignored" })).toBe(expected);
    });
  }

  it("caps the title at 60 characters on a word boundary", () => {
    const title = titleFromText("internationalization localization standardization considerations everywhere");
    expect(title).toBe("Internationalization localization standardization");
    expect(title!.length).toBeLessThanOrEqual(60);
    expect(titleFromText("x".repeat(100))).toBe(`X${"x".repeat(59)}`);
  });

  it("keeps at most 7 words", () => {
    expect(titleFromText("one two three four five six seven eight nine")).toBe("One two three four five six seven");
  });
});

describe("cleanModelTitle", () => {
  it.each([
    ['"Fixing the Build."', "Fixing the Build"],
    ["Title: **Rotating Nginx Logs**", "Rotating Nginx Logs"],
    ["  \nDebugging Flaky Tests!\nExtra line", "Debugging Flaky Tests"],
    ["'Postgres Advisory Locks'", "Postgres Advisory Locks"],
    ["one two three four five six seven eight nine", "one two three four five six seven"],
    ["...", null],
    ["", null],
  ])("%j → %j", (raw, expected) => {
    expect(cleanModelTitle(raw)).toBe(expected);
  });
});

describe("OpenAiTitler", () => {
  let server: FakeOpenAiServer;
  beforeEach(async () => {
    server = await startFakeOpenAiServer({ apiKey: "sk-t" });
  });
  afterEach(async () => {
    await server.close();
  });

  const titler = (options: { apiKey?: string; timeoutMs?: number } = {}): OpenAiTitler =>
    new OpenAiTitler({ baseUrl: server.url, model: "fake-model", apiKey: "sk-t", ...options });

  it("asks the endpoint for a short title", async () => {
    const title = await titler().proposeTitle({ userText: "How do I rotate logs?", replyText: "Use logrotate." });
    expect(title).toBe(FAKE_TITLE);
    const [request] = server.requests;
    expect(request?.kind).toBe("title");
    expect(request?.headers.authorization).toBe("Bearer sk-t");
    expect(request?.body).toMatchObject({ model: "fake-model", max_tokens: 20 });
    expect(request?.body?.messages?.[0]).toEqual({ role: "system", content: TITLE_SYSTEM_PROMPT });
    expect(request?.body?.messages?.[1]?.content).toBe("User: How do I rotate logs?\n\nAssistant: Use logrotate.");
  });

  it("cleans quotes and punctuation", async () => {
    server.setScript(() => fakeTextReply('"Rotating Logs Daily."'));
    expect(await titler().proposeTitle({ userText: "a", replyText: "b" })).toBe("Rotating Logs Daily");
  });

  it("returns null on an error status, a bad key, an empty answer, a timeout or an abort", async () => {
    server.setScript(() => fakeErrorReply(500, "boom"));
    expect(await titler().proposeTitle({ userText: "a", replyText: "b" })).toBeNull();
    server.setScript(null);
    expect(await titler({ apiKey: "wrong" }).proposeTitle({ userText: "a", replyText: "b" })).toBeNull();
    server.setScript(() => fakeTextReply("  "));
    expect(await titler().proposeTitle({ userText: "a", replyText: "b" })).toBeNull();
    server.setScript(() => ({ delayMs: 10_000 }));
    expect(await titler({ timeoutMs: 50 }).proposeTitle({ userText: "a", replyText: "b" })).toBeNull();
    const controller = new AbortController();
    controller.abort();
    expect(await titler().proposeTitle({ userText: "a", replyText: "b", signal: controller.signal })).toBeNull();
  });

  it("returns null when the server is unreachable", async () => {
    const url = server.url;
    await server.close();
    expect(await new OpenAiTitler({ baseUrl: url, model: "m" }).proposeTitle({ userText: "a", replyText: "b" })).toBeNull();
  });

  it("fromEnv follows the provider configuration", () => {
    expect(OpenAiTitler.fromEnv({})).toBeNull();
    expect(OpenAiTitler.fromEnv({ OPENAI_API_KEY: "k", THREADLINE_MODEL: "m" })).toBeInstanceOf(OpenAiTitler);
  });

  it("title requests do not consume queued chat replies", async () => {
    server.enqueue(fakeTextReply("queued"));
    expect(await titler().proposeTitle({ userText: "a", replyText: "b" })).toBe(FAKE_TITLE);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
