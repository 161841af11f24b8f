import { describe, expect, it } from "vitest";
import { providerSectionProblems, resolveProviderConfig } from "../../src/agents/provider-config.js";
import { parseServeConfig } from "../../src/serve/index.js";

/** The message `fn` throws (fails the test when it returns). */
function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a throw");
}

describe("one provider-config validator (issue 29)", () => {
  // A section with one problem, and the line both the config file and the API give for it.
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ timeoutMs: 50 }, "provider.timeoutMs: must be a whole number of milliseconds ≥ 100 (got 50)"],
    [{ timeoutMs: 1.5e3 + 0.5 }, "provider.timeoutMs: must be a whole number of milliseconds ≥ 100 (got 1500.5)"],
    [{ baseUrl: "ftp://x" }, 'provider.baseUrl: must be an http(s) URL such as https://api.openai.com/v1 (got "ftp://x")'],
    [{ apiKey: 12345 }, "provider.apiKey: must be a non-empty string (or set OPENAI_API_KEY) (got number)"],
    [
      { contextWindow: 512 },
      "provider.contextWindow: must be a whole number of tokens ≥ 1024: the model's context window, e.g. 128000 (default: the table of well-known models, else 8192) (got 512)",
    ],
    [{ models: { big: { model: "x", window: 1 } } }, 'provider.models.big: unknown key(s) "window"; allowed: model, contextWindow'],
    [{ modles: {} }, 'provider: unknown key(s) "modles"; allowed: baseUrl, apiKey, model, timeoutMs, tools, models, contextWindow, vision, transcriptionModel'],
  ];

  it.each(cases)("serve's config file and resolveProviderConfig refuse %j with one message", (section, message) => {
    const fromFile = messageOf(() => parseServeConfig({ provider: { baseUrl: "http://127.0.0.1:1/v1", model: "m", ...section } }));
    expect(fromFile).toContain(message);
    const fromApi = messageOf(() => resolveProviderConfig({ baseUrl: "http://127.0.0.1:1/v1", model: "m", ...section }, {}));
    expect(fromApi).toBe(message);
  });

  it("accepts the smallest timeout in both, and the file's tool names are the tools serve gives", () => {
    expect(parseServeConfig({ provider: { timeoutMs: 100 } }).provider).toEqual({ timeoutMs: 100 });
    expect(resolveProviderConfig({ baseUrl: "http://127.0.0.1:1/v1", model: "m", timeoutMs: 100 }, {})?.timeoutMs).toBe(100);
    expect(providerSectionProblems({ tools: ["web_search"] }, { toolNames: ["session_search", "memory"] }).map((p) => p.field)).toEqual(["provider.tools"]);
    expect(providerSectionProblems({ tools: ["web_search"] })).toEqual([]);
  });

  it("reports every problem of a section, each with its key and path", () => {
    expect(providerSectionProblems({ timeoutMs: 0, contextWindow: 1, models: { a: "" } })).toEqual([
      expect.objectContaining({ field: "provider.timeoutMs", path: ["timeoutMs"] }),
      expect.objectContaining({ field: "provider.models.a", path: ["models", "a"] }),
      expect.objectContaining({ field: "provider.contextWindow", path: ["contextWindow"] }),
    ]);
    expect(providerSectionProblems(undefined)).toEqual([]);
    expect(providerSectionProblems("x")).toEqual([expect.objectContaining({ field: "provider", path: [] })]);
  });
});
