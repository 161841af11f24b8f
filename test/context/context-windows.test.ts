import { describe, expect, it } from "vitest";
import { DEFAULT_CONTEXT_WINDOW, contextWindowFor, knownContextWindow } from "../../src/context/context-windows.js";
import { requestBudget, reservedOutputTokens } from "../../src/context/request-budget.js";
import { resolveProviderConfig } from "../../src/agents/index.js";
import { providerContextWindows } from "../../src/serve/agent-choice.js";

describe("context windows", () => {
  it("knows the well-known models by prefix, longest first, with or without a provider prefix", () => {
    expect(knownContextWindow("gpt-4o-mini")).toBe(128_000);
    expect(knownContextWindow("openai/gpt-4o-2024-08-06")).toBe(128_000);
    expect(knownContextWindow("gpt-4")).toBe(8_192);
    expect(knownContextWindow("gpt-4-turbo-preview")).toBe(128_000);
    expect(knownContextWindow("gpt-4.1-mini")).toBe(1_047_576);
    expect(knownContextWindow("gpt-3.5-turbo-0125")).toBe(16_385);
    expect(knownContextWindow("o4-mini")).toBe(200_000);
    expect(knownContextWindow("anthropic/claude-3.5-sonnet")).toBe(200_000);
    expect(knownContextWindow("claude-sonnet-4-20250514")).toBe(200_000);
    expect(knownContextWindow("llama3.1:8b")).toBe(131_072);
    expect(knownContextWindow("meta-llama/Llama-3.3-70B-Instruct")).toBe(131_072);
    expect(knownContextWindow("llama3:8b")).toBe(8_192);
    expect(knownContextWindow("mixtral:8x7b")).toBe(32_768);
    expect(knownContextWindow("qwen2.5:7b")).toBe(32_768);
    expect(knownContextWindow("GEMINI-1.5-PRO")).toBe(2_097_152);
    expect(knownContextWindow("deepseek-chat")).toBe(65_536);
    expect(knownContextWindow("my-finetune")).toBeNull();
    expect(knownContextWindow(null)).toBeNull();
  });

  it("takes the configured window first, then the table, then the conservative default", () => {
    expect(contextWindowFor("gpt-4o", 16_000)).toEqual({ tokens: 16_000, source: "config" });
    expect(contextWindowFor("gpt-4o")).toEqual({ tokens: 128_000, source: "table" });
    expect(contextWindowFor("my-finetune")).toEqual({ tokens: DEFAULT_CONTEXT_WINDOW, source: "default" });
    expect(DEFAULT_CONTEXT_WINDOW).toBe(8192);
    expect(() => contextWindowFor("gpt-4o", 100)).toThrow(/whole number of tokens ≥ 1024/u);
  });

  it("keeps room for the reply and the prompt, scaled by the session's correction", () => {
    expect(reservedOutputTokens(8192)).toBe(2048);
    expect(reservedOutputTokens(128_000)).toBe(4096);
    expect(requestBudget({ window: 8192, promptTokens: 300, toolTokens: 200 })).toBe(8192 - 2048 - 500);
    expect(requestBudget({ window: 8192, promptTokens: 300, correction: 2 })).toBe(Math.floor(6144 / 2) - 300);
    expect(requestBudget({ window: 2048, promptTokens: 5000 })).toBe(0);
  });

  it("gives each provider model its entry's window, else provider.contextWindow, else the table", () => {
    const provider = resolveProviderConfig(
      {
        baseUrl: "http://127.0.0.1:1/v1",
        model: "llama3.1",
        contextWindow: 8192,
        models: { fast: "qwen2.5", big: { model: "gpt-4o", contextWindow: 64_000 } },
      },
      {},
    )!;
    expect(provider.models).toEqual({ fast: "qwen2.5", big: "gpt-4o" });
    const windows = providerContextWindows(provider);
    expect(windows(undefined)).toEqual({ model: "llama3.1", tokens: 8192, source: "config" });
    expect(windows("gpt-4o")).toEqual({ model: "gpt-4o", tokens: 64_000, source: "config" });
    expect(windows("qwen2.5")).toEqual({ model: "qwen2.5", tokens: 8192, source: "config" });
    const plain = providerContextWindows(resolveProviderConfig({ baseUrl: "http://127.0.0.1:1/v1", model: "gpt-4o-mini" }, {})!);
    expect(plain(undefined)).toEqual({ model: "gpt-4o-mini", tokens: 128_000, source: "table" });
    expect(providerContextWindows(null)(undefined)).toEqual({ model: null, tokens: DEFAULT_CONTEXT_WINDOW, source: "default" });
    expect(() => resolveProviderConfig({ baseUrl: "http://127.0.0.1:1/v1", model: "m", models: { a: { model: "b", contextWindow: 10 } } }, {})).toThrow(
      "provider.models.a.contextWindow: must be a whole number of tokens ≥ 1024: this model's context window, e.g. 8192 (got 10)",
    );
    expect(() => resolveProviderConfig({ baseUrl: "http://127.0.0.1:1/v1", model: "m", contextWindow: 1.5 }, {})).toThrow(/provider\.contextWindow/u);
  });
});
