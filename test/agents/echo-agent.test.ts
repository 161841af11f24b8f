import { describe, expect, it } from "vitest";
import { AgentInterruptedError } from "../../src/agents/agent.js";
import type { AgentTurnInput } from "../../src/agents/agent.js";
import { EchoAgent } from "../../src/agents/echo-agent.js";
import type { ConversationMessage } from "../../src/store/index.js";

function turn(messages: ConversationMessage[], signal = new AbortController().signal): AgentTurnInput {
  return { messages, contextPrompt: "## Current Session Context", signal, sessionId: "s1" };
}

describe("EchoAgent", () => {
  it("echoes the last user message with estimated usage", async () => {
    const agent = new EchoAgent();
    expect(agent.name).toBe("echo");
    const history: ConversationMessage[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "first" },
      { role: "assistant", content: "Echo: first" },
      { role: "user", content: "second one" },
    ];
    const result = await agent.runTurn(turn(history));
    expect(result.messages).toEqual([{ role: "assistant", content: "Echo: second one", finishReason: "stop", tokenCount: 4 }]);
    // 3 + 5 + 11 + 10 = 29 characters → 8 tokens; "Echo: second one" is 16 → 4.
    expect(result.usage).toEqual({ inputTokens: 8, outputTokens: 4, apiCalls: 1 });
    expect(result.promptTokens).toBe(8);
  });

  it("joins the text parts of structured content", async () => {
    const result = await new EchoAgent().runTurn(
      turn([
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
            { type: "text", text: "here" },
          ],
        },
      ]),
    );
    expect(result.messages[0]?.content).toBe("Echo: look\nhere");
    expect(result.usage?.inputTokens).toBe(Math.ceil("look\nhere".length / 4));
  });

  it("says so when there is no user text", async () => {
    const result = await new EchoAgent().runTurn(turn([{ role: "system", content: "x" }]));
    expect(result.messages[0]?.content).toBe("Echo: (empty message)");
  });

  it("throws AgentInterruptedError for an already-aborted signal", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(new EchoAgent().runTurn(turn([{ role: "user", content: "x" }], controller.signal))).rejects.toBeInstanceOf(AgentInterruptedError);
  });

  it("waits delayMs before replying", async () => {
    const started = Date.now();
    const result = await new EchoAgent({ delayMs: 80 }).runTurn(turn([{ role: "user", content: "slow" }]));
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
    expect(result.messages[0]?.content).toBe("Echo: slow");
  });

  it("an abort during the delay interrupts promptly with no partial", async () => {
    const controller = new AbortController();
    // A delay far past the test's deadline (30 s): only an interruption lets the turn settle in time.
    const running = new EchoAgent({ delayMs: 600_000 }).runTurn(turn([{ role: "user", content: "x" }], controller.signal));
    // runTurn checked the signal and began its delay before returning the promise: this abort comes during the delay.
    controller.abort();
    const error = await running.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AgentInterruptedError);
    expect((error as AgentInterruptedError).partial).toEqual([]);
  });
});
