/**
 * The runner's turns within the model's context window (issue 28), in process on both
 * backends: the tool schemas, the context prompt and the reply's share are taken off the
 * window; the dropped-messages line; what `contextMeasure` reports; the provider's reported
 * prompt tokens shrinking later budgets.
 */
import { expect, it } from "vitest";
import { LocalAdapter } from "../../src/adapters/index.js";
import type { Agent, AgentToolDefinition, AgentTurnInput, AgentTurnResult } from "../../src/agents/index.js";
import { tokenCounterFor } from "../../src/context/token-count.js";
import { DEFAULT_COMPRESSION_SETTINGS } from "../../src/context/index.js";
import { GatewayRunner, SessionRouter, droppedNote, type ContextWindowResolver } from "../../src/gateway/index.js";
import { forEachBackend } from "./backends.js";

/** Records its inputs; declares `tools`; reports `promptTokens` = counted × `factor`. */
class RecordingAgent implements Agent {
  readonly name = "recording";
  readonly inputs: AgentTurnInput[] = [];
  constructor(
    readonly tools: AgentToolDefinition[],
    readonly factor: number | null = null,
  ) {}
  toolDefinitions(): readonly AgentToolDefinition[] {
    return this.tools;
  }
  async runTurn(input: AgentTurnInput): Promise<AgentTurnResult> {
    this.inputs.push(input);
    const counter = await tokenCounterFor("gpt-4o-mini");
    const counted = counter.countMessages([{ role: "system", content: input.contextPrompt }, ...input.messages]);
    const result: AgentTurnResult = { messages: [{ role: "assistant", content: "ok" }] };
    if (this.factor !== null) result.promptTokens = Math.ceil(counted * this.factor);
    return result;
  }
}

const WINDOW = 4096;
const windows: ContextWindowResolver = (model) => ({ model: model ?? "gpt-4o-mini", tokens: WINDOW, source: "config" });
const bigSchema: AgentToolDefinition = {
  name: "lookup",
  description: "Looks things up. ".repeat(150),
  parameters: { type: "object", properties: { q: { type: "string", description: "the query ".repeat(100) } } },
};

forEachBackend((backend) => {
  async function setup(agent: RecordingAgent) {
    const { db } = await backend.fresh();
    const store = new SessionRouter({ db });
    const local = new LocalAdapter();
    // The budget alone (automatic compression, on by default, is tested in session-compressor.test.ts).
    const compression = { settings: { ...DEFAULT_COMPRESSION_SETTINGS, enabled: false } };
    const runner = new GatewayRunner({ store, agentFactory: () => agent, adapters: [local], contextWindow: windows, compression });
    await runner.start();
    const say = async (text: string): Promise<string> => {
      await local.receive(text);
      return (await local.nextMessage()).message.sessionId!;
    };
    return { runner, say };
  }

  it("tool schemas and the context prompt come off the window; left-out messages are announced; contextMeasure reports it", async () => {
    const counter = await tokenCounterFor("gpt-4o-mini");
    const plain = new RecordingAgent([]);
    const withTools = new RecordingAgent([bigSchema]);
    const long = (i: number): string => `note ${i}: ${"alpha beta gamma ".repeat(120)}`;
    const runs = [] as Array<{ agent: RecordingAgent; measure: ReturnType<GatewayRunner["contextMeasure"]> }>;
    for (const agent of [plain, withTools]) {
      const { runner, say } = await setup(agent);
      let sessionId = "";
      for (let i = 0; i < 12; i++) sessionId = await say(long(i));
      runs.push({ agent, measure: runner.contextMeasure(sessionId) });
    }
    const [a, b] = runs;
    // The schemas take room: the agent with tools is sent fewer messages.
    expect(b!.agent.inputs.at(-1)!.messages.length).toBeLessThan(a!.agent.inputs.at(-1)!.messages.length);
    for (const { agent, measure } of runs) {
      const last = agent.inputs.at(-1)!;
      expect(measure).toBeDefined();
      expect(measure!.window).toBe(WINDOW);
      // After the turn: its reply is counted in.
      expect(measure!.fullCount).toBe(24);
      expect(measure!.dropped).toBe(23 - last.messages.length);
      expect(measure!.dropped).toBeGreaterThan(0);
      expect(last.contextPrompt.endsWith(droppedNote(measure!.dropped))).toBe(true);
      // The whole request as counted stays within the window less the reply's share (1,024 of 4,096).
      const schemas = agent.tools.length === 0 ? 0 : counter.count(JSON.stringify(agent.tools.map((t) => ({ type: "function", function: t }))));
      expect(counter.countMessages([{ role: "system", content: last.contextPrompt }, ...last.messages]) + schemas).toBeLessThanOrEqual(WINDOW - 1024);
      expect(measure!.requestTokens).toBeLessThanOrEqual(WINDOW - 1024);
      expect(measure!.fullTokens).toBeGreaterThan(measure!.messageTokens);
    }
  });

  it("a provider reporting more prompt tokens than counted shrinks the session's later budgets", async () => {
    const exact = new RecordingAgent([], 1);
    const doubled = new RecordingAgent([], 2);
    const sent: number[] = [];
    for (const agent of [exact, doubled]) {
      const { runner, say } = await setup(agent);
      let sessionId = "";
      for (let i = 0; i < 10; i++) sessionId = await say(`fact ${i}: ${"delta epsilon ".repeat(80)}`);
      sent.push(agent.inputs.at(-1)!.messages.length);
      expect(runner.contextMeasure(sessionId)!.correction).toBeCloseTo(agent === exact ? 1 : 2, 1);
    }
    expect(sent[1]!).toBeLessThan(sent[0]!);
  });
});
