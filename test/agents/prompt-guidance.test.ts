/**
 * `OpenAiCompatibleAgent.promptGuidance()` (issue 26, point 7): the guidance of the tools the
 * agent sends, none without tools, and none once the provider refused tools for its model.
 */
import { describe, expect, it } from "vitest";
import { OpenAiCompatibleAgent, ToolSupport, type AgentTool } from "../../src/agents/index.js";
import { SESSION_SEARCH_GUIDANCE } from "../../src/tools/index.js";

const BASE_URL = "http://127.0.0.1:9/v1";

function tool(name: string, guidance?: string): AgentTool {
  return {
    name,
    description: `${name} does things`,
    parameters: { type: "object" },
    ...(guidance === undefined ? {} : { guidance }),
    execute: async () => "ok",
  };
}

describe("OpenAiCompatibleAgent.promptGuidance", () => {
  it("returns the guidance of its tools, in order, leaving out tools without any", () => {
    const agent = new OpenAiCompatibleAgent({
      baseUrl: BASE_URL,
      model: "m",
      tools: [tool("a", "Use a for A."), tool("b"), tool("c", "  Use c for C. ")],
      toolSupport: new ToolSupport(),
    });
    expect(agent.promptGuidance()).toEqual(["Use a for A.", "Use c for C."]);
  });

  it("returns none without tools, and none once the provider refused tools for its model", () => {
    expect(new OpenAiCompatibleAgent({ baseUrl: BASE_URL, model: "m" }).promptGuidance()).toEqual([]);
    const support = new ToolSupport();
    const agent = new OpenAiCompatibleAgent({ baseUrl: BASE_URL, model: "m", tools: [tool("a", "Use a for A.")], toolSupport: support });
    support.markRefused(BASE_URL, "other-model", "does not support tools");
    expect(agent.promptGuidance()).toEqual(["Use a for A."]);
    support.markRefused(BASE_URL, "m", "does not support tools");
    expect(agent.promptGuidance()).toEqual([]);
  });

  it("session_search's guidance says to search before asking the user to repeat something", () => {
    expect(SESSION_SEARCH_GUIDANCE).toMatch(/session_search/u);
    expect(SESSION_SEARCH_GUIDANCE).toMatch(/earlier conversation/u);
    expect(SESSION_SEARCH_GUIDANCE).toMatch(/repeat/u);
  });
});
