import { describe, expect, it } from "vitest";
import { ESTIMATE_MARGIN, encodingForModel, tokenCounterFor } from "../../src/context/token-count.js";
import { MAX_CORRECTION, TokenCalibration } from "../../src/context/token-calibration.js";

describe("token counting", () => {
  it("knows the OpenAI families and nothing else", () => {
    expect(encodingForModel("gpt-4o-mini")).toBe("o200k_base");
    expect(encodingForModel("openai/gpt-5")).toBe("o200k_base");
    expect(encodingForModel("gpt-3.5-turbo")).toBe("cl100k_base");
    expect(encodingForModel("gpt-4-turbo")).toBe("cl100k_base");
    expect(encodingForModel("llama3.1")).toBeNull();
    expect(encodingForModel(null)).toBeNull();
  });

  it("counts exactly for a known model and with a margin for an unknown one", async () => {
    const exact = await tokenCounterFor("gpt-4o");
    const estimate = await tokenCounterFor("llama3.1:8b");
    expect(exact.exact).toBe(true);
    expect(estimate.exact).toBe(false);
    const text = "The quick brown fox jumps over the lazy dog. ".repeat(20);
    expect(exact.count("hello world")).toBe(2);
    expect(estimate.count(text)).toBe(Math.ceil(exact.count(text) * (1 + ESTIMATE_MARGIN)));
  });

  it("counts a message's tool calls and overhead", async () => {
    const counter = await tokenCounterFor("gpt-4o");
    const plain = counter.countMessage({ role: "assistant", content: "ok" });
    const withCall = counter.countMessage({
      role: "assistant",
      content: "ok",
      tool_calls: [{ id: "c1", type: "function", function: { name: "session_search", arguments: '{"query":"deployment notes"}' } }],
    });
    expect(withCall).toBeGreaterThan(plain + 5);
    expect(
      counter.countMessages([
        { role: "user", content: "ok" },
        { role: "assistant", content: "ok" },
      ]),
    ).toBe(2 * plain + 3);
  });

  it("CJK text is counted, not estimated by spaces", async () => {
    const counter = await tokenCounterFor("gpt-4o");
    expect(counter.count("会话管理系统的全文搜索")).toBeGreaterThan(3);
  });
});

describe("token calibration", () => {
  it("scales estimates by what the provider reported, never below the estimate, bounded", () => {
    const calibration = new TokenCalibration();
    expect(calibration.correct("s1", 100)).toBe(100);
    calibration.record("s1", 100, 130);
    expect(calibration.correct("s1", 200)).toBe(260);
    calibration.record("s1", 100, 50);
    expect(calibration.factor("s1")).toBe(1);
    calibration.record("s1", 10, 1000);
    expect(calibration.factor("s1")).toBe(MAX_CORRECTION);
    calibration.record("s2", 0, 10);
    expect(calibration.factor("s2")).toBe(1);
  });
});
